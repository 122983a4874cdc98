export interface Order {
  id: number;
  lines: { sku: string; qty: number }[];
}
