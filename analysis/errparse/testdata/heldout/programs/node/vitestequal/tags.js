export function tags(s) {
  return s.split(",");
}
