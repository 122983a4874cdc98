export interface Coupon {
  code: string;
  percent: number;
}

export function apply(total: number, coupon?: Coupon): number {
  const pct = coupon!.percent;
  return total - (total * pct) / 100;
}
