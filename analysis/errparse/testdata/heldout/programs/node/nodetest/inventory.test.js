const { describe, it } = require("node:test");
const assert = require("node:assert");
const { restock } = require("./inventory");

describe("restock", () => {
  it("keeps names", () => {
    assert.deepStrictEqual(restock([{ name: "a", qty: 1 }], 0), [{ name: "a", qty: 1 }]);
  });
  it("adds to every item", () => {
    const got = restock([{ name: "a", qty: 1 }], "2");
    assert.deepStrictEqual(got, [{ name: "a", qty: 3 }]);
  });
});
