const test = require('node:test');
const assert = require('node:assert');
const { sum, first } = require('./sum');

test('adds', () => {
  assert.strictEqual(sum(1, 2), 3);
});

test('first of empty', () => {
  assert.strictEqual(first([]), undefined);
});
