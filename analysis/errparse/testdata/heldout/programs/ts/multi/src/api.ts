import { Order } from "./model";

export function totalQty(o: Order): number {
  return o.lines.reduce((n, l) => n + l.quantity, 0);
}
