let count: number = "three";
export function twice(n: number): number {
  return n * 2;
}
twice(count);
