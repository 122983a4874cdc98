function format(user) {
  return user.name.toUpperCase();
}

function main() {
  const users = [{ name: "ada" }, {}];
  return users.map(format);
}

main();
