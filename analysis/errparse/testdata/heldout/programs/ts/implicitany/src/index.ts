import { emit, on } from "./events";

on("saved", (p) => console.log(p));
emit("saved", { id: 1 });
