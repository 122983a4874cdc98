interface Identified {
  id: string;
}

export class Cache<T extends Identified> {
  private items = new Map<string, T>();

  put(item: T): void {
    this.items.set(item.id, item);
  }
}

type Price = { sku: string; amount: number };

export const prices = new Cache<Price>();
