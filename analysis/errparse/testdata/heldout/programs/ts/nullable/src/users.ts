const emails = new Map<string, string>();

export function domain(user: string): string {
  const email = emails.get(user);
  return email.split("@")[1];
}
