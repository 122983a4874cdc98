import { formatPrice } from "./money.mjs";

console.log(formatPrice(3));
