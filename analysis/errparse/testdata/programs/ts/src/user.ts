interface User {
  name: string;
}

const u: User = { name: "ada" };
console.log(u.email);
