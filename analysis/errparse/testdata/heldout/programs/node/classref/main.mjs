import { Circle } from "./shapes.mjs";

const c = new Circle(2);
console.log(c.area());
