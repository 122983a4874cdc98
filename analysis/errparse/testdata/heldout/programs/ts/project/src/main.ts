import { pad } from "./format";

const width = "8";
console.log(pad("x", width));
