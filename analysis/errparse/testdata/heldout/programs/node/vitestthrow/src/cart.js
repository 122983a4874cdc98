export function totalWeight(cart) {
  return cart.items.reduce((sum, item) => sum + item.weight, 0);
}
