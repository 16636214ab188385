/**
 * The tests' own account of what an order costs and what it gets back: a
 * second, deliberately plain computation from the order's fields, in
 * BigInt, written without src/ledger/rules.ts or src/money. The property
 * tests, the simulator and verify's tests compare the product with it, so
 * that a wrong rule (a refund off by one unit, runs left out of a charge)
 * shows as a difference instead of being copied into the expectation.
 */

/** Every unit the order asks for: quantity, times its runs for a drip-feed order. */
export function plainUnits(order: { quantity: number; extras?: { runs?: number } | undefined }): number {
  const runs = order.extras?.runs ?? 1;
  return order.quantity * runs;
}

/** units × rate micro-credits, exactly; throws where the product leaves the safe integers (the product refuses such an order). */
export function plainCharge(units: number, rateMicro: number): number {
  const charge = BigInt(units) * BigInt(rateMicro);
  if (charge > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`plainCharge: ${units} × ${rateMicro} is beyond the safe integers`);
  return Number(charge);
}

/**
 * What a move to `to` gives back: the whole debit when canceled; the
 * undelivered units at the order's rate when partial, unless the order was
 * billed under the unlimited plan (debited nothing, so refunded nothing);
 * nothing for any other move.
 */
export function plainRefund(order: { debit: number; rate: number }, to: string, remains: number | null): number {
  if (to === 'canceled') return order.debit;
  if (to !== 'partial' || order.debit === 0) return 0;
  if (remains === null) throw new Error('plainRefund: a partial move names its remains');
  return plainCharge(remains, order.rate);
}

/** What the customer still owes for the units of an order that were delivered: the oracle of a final order's net payment. */
export function plainDue(order: { rate: number; unlimited: boolean }, deliveredUnits: number): number {
  return order.unlimited ? 0 : plainCharge(deliveredUnits, order.rate);
}
