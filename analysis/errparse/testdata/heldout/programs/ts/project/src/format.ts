export function pad(s: string, width: number): string {
  return s.padStart(width);
}
