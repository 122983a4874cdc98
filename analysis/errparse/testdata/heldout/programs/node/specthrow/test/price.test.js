const test = require("node:test");
const assert = require("node:assert");
const { withTax } = require("../lib/price");

test("with tax", () => {
  assert.strictEqual(withTax({ price: 10 }), 12);
});
