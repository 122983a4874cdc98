import { formatDate } from "./dates.cjs";

console.log(formatDate(new Date(0)));
