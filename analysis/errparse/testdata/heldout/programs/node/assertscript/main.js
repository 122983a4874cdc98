const assert = require("assert");

function discount(price, pct) {
  return price - price * pct;
}

assert.strictEqual(discount(100, 10), 90);
