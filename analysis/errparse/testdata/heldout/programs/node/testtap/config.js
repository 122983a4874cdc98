function parse(text) {
  const out = {};
  for (const line of text.split("\n")) {
    const [k, v] = line.split("=");
    out[k] = v;
  }
  return out;
}

module.exports = { parse };
