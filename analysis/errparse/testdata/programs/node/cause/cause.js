function parsePort(s) {
  const n = Number.parseInt(s, 10);
  if (Number.isNaN(n)) throw new RangeError(`not a port: ${s}`);
  return n;
}

function load(s) {
  try {
    return parsePort(s);
  } catch (err) {
    throw new Error('bad config', { cause: err });
  }
}

load('http');
