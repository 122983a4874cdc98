const { initials } = require("../src/user");

test("initials of a user without a name", () => {
  expect(initials({ email: "x@y" })).toBe("");
});
