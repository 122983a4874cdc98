import { describe, expect, it } from "vitest";
import { totalWeight } from "./cart.js";

describe("totalWeight", () => {
  it("sums weights", () => {
    expect(totalWeight({ items: [{ weight: 2 }, { weight: 3 }] })).toBe(5);
  });
  it("handles an empty cart", () => {
    expect(totalWeight({})).toBe(0);
  });
});
