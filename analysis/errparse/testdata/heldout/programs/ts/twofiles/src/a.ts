export function greet(name: string): string {
  return "hello " + name.toUpperCase();
}

greet(42);
