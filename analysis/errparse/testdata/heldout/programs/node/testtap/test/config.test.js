const test = require("node:test");
const assert = require("node:assert");
const { parse } = require("../config");

test("config", async (t) => {
  await t.test("reads the port", async () => {
    const cfg = parse("port=8080\nhost=db");
    assert.deepStrictEqual(cfg, { port: 8080, host: "db" });
  });
});
