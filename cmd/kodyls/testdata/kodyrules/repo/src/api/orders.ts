import { Request, Response } from "express";
import { StatusCodes } from "http-status-codes";
import { db } from "../db";

export async function getOrder(req: Request, res: Response): Promise<void> {
  const order = await db.orders.findById(req.params.id);
  if (!order) {
    res.status(StatusCodes.NOT_FOUND).json({ error: { code: "order_not_found", message: "No such order" } });
    return;
  }
  res.json(order);
}
