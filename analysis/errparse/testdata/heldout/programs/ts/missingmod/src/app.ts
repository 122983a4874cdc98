import { parse } from "yamlx";

export const doc = parse("a: 1");
