function sum(a, b) {
  return a - b;
}

function first(xs) {
  return xs[0].name;
}

module.exports = { sum, first };
