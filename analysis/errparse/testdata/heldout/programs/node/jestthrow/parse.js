function parseAge(s) {
  const n = Number(s);
  return n;
}

module.exports = { parseAge };
