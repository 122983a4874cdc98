function restock(items, n) {
  return items.map((i) => ({ ...i, qty: i.qty + n }));
}

module.exports = { restock };
