function withTax(item) {
  return item.price.amount * 1.2;
}

module.exports = { withTax };
