const { drain } = require("./queue");

describe("drain", () => {
  test("resolves once the queue is empty", async () => {
    await drain(["job-1"]);
  }, 200);
});
