module.exports = { root: "/srv" };
