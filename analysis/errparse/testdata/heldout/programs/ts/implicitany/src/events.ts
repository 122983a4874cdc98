export type Handler = (payload: unknown) => void;

const handlers: Record<string, Handler[]> = {};

export function on(name: string, h: Handler) {
  (handlers[name] ??= []).push(h);
}

export function emit(name, payload: unknown) {
  for (const h of handlers[name] ?? []) {
    h(payload);
  }
}
