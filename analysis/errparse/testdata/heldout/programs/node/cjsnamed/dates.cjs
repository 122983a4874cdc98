const fmt = {};
fmt.formatDate = (d) => d.toISOString().slice(0, 10);
module.exports = fmt;
