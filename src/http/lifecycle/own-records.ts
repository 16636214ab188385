/**
 * An account's own orders and refills, found by what a customer names them
 * with. Another account's record is not found, like an unknown one: a
 * customer never learns which it was.
 */
import type { Account } from '../../actors/index.js';
import { parsePositiveId } from '../../ids/index.js';
import type { OrderRecord, RefillRecord, SubscriptionRecord } from '../../ledger/index.js';
import type { AppContext } from '../context.js';

/** The account's order with this public id (v1), or null. */
export function ownOrder(ctx: AppContext, account: Account, id: string): OrderRecord | null {
  const order = ctx.orders.read(id);
  return order === undefined || order.account !== account.profile.id ? null : order;
}

/** The account's order with this number (v2), or null (unknown, malformed and other accounts' numbers alike). */
export function ownOrderByNumber(ctx: AppContext, account: Account, text: string): OrderRecord | null {
  const number = parsePositiveId(text);
  const order = number === null ? undefined : ctx.orders.readByNumber(number);
  return order === undefined || order.account !== account.profile.id ? null : order;
}

/** The account's refill with this id, or null. */
export function ownRefill(ctx: AppContext, account: Account, text: string): RefillRecord | null {
  const refillId = parsePositiveId(text);
  const refill = refillId === null ? undefined : (ctx.store.tables.refills.get(refillId) as RefillRecord | undefined);
  return refill === undefined || refill.account !== account.profile.id ? null : refill;
}

/** The account's subscription with this id (both dialects name it by its number), or null (unknown, malformed and other accounts' ids alike). */
export function ownSubscription(ctx: AppContext, account: Account, text: string): SubscriptionRecord | null {
  const id = parsePositiveId(text);
  const sub = id === null ? undefined : (ctx.store.tables.subscriptions.get(id) as SubscriptionRecord | undefined);
  return sub === undefined || sub.account !== account.profile.id ? null : sub;
}
