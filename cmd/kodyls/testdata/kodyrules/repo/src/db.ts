import { connect } from "./store";

export const db = connect(process.env.DATABASE_URL ?? "");
