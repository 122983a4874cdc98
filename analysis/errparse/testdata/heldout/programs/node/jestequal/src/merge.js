function merge(a, b) {
  return Object.assign({}, b, a);
}

module.exports = { merge };
