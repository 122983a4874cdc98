function initials(user) {
  return user.name.split(" ").map((p) => p[0]).join("");
}

module.exports = { initials };
