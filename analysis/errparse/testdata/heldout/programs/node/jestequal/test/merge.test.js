const { merge } = require("../src/merge");

describe("merge", () => {
  it("prefers the second object", () => {
    expect(merge({ port: 80, host: "a" }, { port: 8080 })).toEqual({
      port: 8080,
      host: "a",
    });
  });
});
