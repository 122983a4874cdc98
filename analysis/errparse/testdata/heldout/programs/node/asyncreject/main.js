async function fetchUser(id) {
  if (id < 0) {
    throw new Error(`invalid user id ${id}`);
  }
  return { id };
}

async function main() {
  const user = await fetchUser(-1);
  console.log(user);
}

main();
