import { expect, test } from "vitest";
import { tags } from "./tags.js";

test("trims tags", () => {
  expect(tags("a, b")).toEqual(["a", "b"]);
});
