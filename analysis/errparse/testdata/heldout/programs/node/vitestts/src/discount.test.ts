import { describe, expect, it } from "vitest";
import { apply } from "./discount";

describe("apply", () => {
  it("keeps the total without a coupon", () => {
    expect(apply(50)).toBe(50);
  });
});
