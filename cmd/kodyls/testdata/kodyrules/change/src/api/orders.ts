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

export function createOrder(req: Request, res: Response): void {
  var total = 0;
  for (const item of req.body.items) {
    total += item.price * item.quantity;
  }
  if (!req.body.customerId) {
    res.status(400).json({ error: { code: "customer_required", message: "customerId is required" } });
    return;
  }
  if (total === 0) {
    throw "an order needs items";
  }
  console.log("creating order", req.body);
  db.orders
    .insert({ ...req.body, total, createdAt: new Date().toLocaleString() })
    .then((order) => res.status(StatusCodes.CREATED).json(order));
}
