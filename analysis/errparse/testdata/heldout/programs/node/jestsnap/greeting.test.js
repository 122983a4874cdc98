const { greeting } = require("./greeting");

test("greets by first name", () => {
  const user = { first: "Ana", last: "Lima", unread: 2 };
  expect(greeting(user)).toMatchSnapshot();
});
