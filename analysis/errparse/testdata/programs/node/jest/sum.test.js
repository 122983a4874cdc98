const { sum, first } = require('./sum');

test('adds', () => {
  expect(sum(1, 2)).toBe(3);
});

test('first of empty', () => {
  expect(first([])).toBeUndefined();
});
