function greeting(user) {
  return { title: `Hi ${user.first}`, unread: user.unread };
}

module.exports = { greeting };
