import { test, expect } from 'vitest';
import { sum, first } from './sum.js';

test('adds', () => {
  expect(sum(1, 2)).toBe(3);
});

test('first of empty', () => {
  expect(first([])).toBeUndefined();
});
