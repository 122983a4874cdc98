const { parseAge } = require("./parse");

test("accepts digits", () => {
  expect(parseAge("42")).toBe(42);
});

test("rejects words", () => {
  expect(() => parseAge("forty")).toThrow("not a number");
});
