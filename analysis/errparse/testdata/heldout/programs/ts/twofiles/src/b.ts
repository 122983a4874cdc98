import { greet } from "./a";

const n: number = greet("x");
