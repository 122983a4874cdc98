export function formatCents(c) {
  return (c / 100).toFixed(2);
}
