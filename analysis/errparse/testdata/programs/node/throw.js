const limits = { max: 10 };

function check(n) {
  if (n > limits.max) { throw new RangeError(`${n} is over the limit`); }
  return n;
}

check(42);
