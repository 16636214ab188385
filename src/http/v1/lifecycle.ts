/**
 * The customer's lifecycle requests on /api/v1: batch status, cancel,
 * refill and refill status. Each is one request for the rate limit: a
 * `touch` checks the ban and takes one token, then each order named goes to
 * the wallet actor as its own command (so a cancel is serialised with every
 * operator move of the same order) and the answer waits until all of them
 * are durable. Answers are keyed by the ids asked for; an id that fails
 * carries `{error, message}` instead of its fields.
 */
import type { Account, Delivery, Request } from '../../actors/index.js';
import { renderAnswer } from '../transport/answer.js';
import { ORDER_ID_PATTERN, parsePositiveId } from '../../ids/index.js';
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import type { RefillRecord } from '../../ledger/index.js';
import { renderBatch, renderItemError } from './render.js';
import { renderRefill, renderStatusFields } from '../../wire/index.js';
import type { AppContext } from '../context.js';
import { deliver, unavailable } from '../transport/deliver.js';
import type { IdList } from '../orders/id-list.js';
import { errorAnswer, guarded, type Exchange } from '../transport/reply.js';

const NOT_AN_ORDER_ID = errorOutcome('VALIDATION', 'That is not an order id; order ids are the 22-character strings returned by POST /api/v1/order.');
const ORDER_NOT_FOUND = errorOutcome('NOT_FOUND', 'No order with this id exists on this account.');
const BUSY = errorOutcome('UNAVAILABLE', 'The wallet is busy; retry this order shortly.');

/**
 * Takes the request's one rate-limit token. Returns the delivery to answer
 * with when the request may go on, or null after sending the refusal
 * (ban, rate limit, full mailbox) or the list's VALIDATION error.
 */
export function admit(ex: Exchange, ctx: AppContext, account: Account, list: IdList): Delivery | null {
  const touch = account.actor.send({ kind: 'touch' });
  if (touch === null) {
    unavailable(ex, 'This wallet has too many requests in flight; retry in a second.');
    return null;
  }
  if (touch.decision.outcome.kind !== 'pass' || !list.ok) {
    const invalid = list.ok ? null : list.error;
    deliver(ex, ctx, account, touch, () => errorAnswer(ex, invalid!));
    return null;
  }
  return touch;
}

/** Answers once every per-order command is durable (a failed commit stops the process: no answer). */
export function answerWhenDurable(ex: Exchange, ctx: AppContext, account: Account, touch: Delivery, pending: (Promise<void> | null)[], body: () => string): void {
  Promise.all(pending).then(
    () => guarded(ctx, ex, () => deliver(ex, ctx, account, touch, () => ({ status: 200, body: body() }))),
    () => {},
  );
}

/** GET /api/v1/status?orders=a,b,c */
export function batchStatus(ex: Exchange, ctx: AppContext, account: Account, list: IdList): void {
  const touch = admit(ex, ctx, account, list);
  if (touch === null || !list.ok) return;
  deliver(ex, ctx, account, touch, () => {
    const items: [string, string][] = list.ids.map((id) => {
      if (!ORDER_ID_PATTERN.test(id)) return [id, renderItemError(NOT_AN_ORDER_ID)];
      const order = ctx.readOrder(id);
      if (order === undefined || order.account !== account.profile.id) return [id, renderItemError(ORDER_NOT_FOUND)];
      return [id, `{${renderStatusFields(order)}}`];
    });
    return { status: 200, body: renderBatch('orders', items) };
  });
}

/** Sends one command per order and answers with each order's outcome. */
function perOrder(ex: Exchange, ctx: AppContext, account: Account, list: IdList, command: (orderId: string) => Request): void {
  const touch = admit(ex, ctx, account, list);
  if (touch === null || !list.ok) return;
  const results: [string, Delivery | ErrorOutcome][] = list.ids.map((id) => {
    if (!ORDER_ID_PATTERN.test(id)) return [id, NOT_AN_ORDER_ID];
    return [id, account.actor.send(command(id)) ?? BUSY];
  });
  const pending = results.map(([, r]) => ('decision' in r ? r.durable : null));
  answerWhenDurable(ex, ctx, account, touch, pending, () =>
    renderBatch(
      'orders',
      results.map(([id, r]): [string, string] => {
        if (!('decision' in r)) return [id, renderItemError(r)];
        const outcome = r.decision.outcome;
        if (outcome.kind === 'error') return [id, renderItemError(outcome.error)];
        return [id, renderAnswer(outcome, ex.requestId).body];
      }),
    ),
  );
}

/** POST /api/v1/cancel {orders: [...]} */
export function cancelOrders(ex: Exchange, ctx: AppContext, account: Account, list: IdList): void {
  perOrder(ex, ctx, account, list, (orderId) => ({ kind: 'cancel', orderId }));
}

/** POST /api/v1/refill {orders: [...]} */
export function refillOrders(ex: Exchange, ctx: AppContext, account: Account, list: IdList): void {
  perOrder(ex, ctx, account, list, (orderId) => ({ kind: 'refill', orderId }));
}

/** GET /api/v1/refill_status?refills=1,2,3 */
export function refillStatus(ex: Exchange, ctx: AppContext, account: Account, list: IdList): void {
  const touch = admit(ex, ctx, account, list);
  if (touch === null || !list.ok) return;
  deliver(ex, ctx, account, touch, () => {
    const items: [string, string][] = list.ids.map((id) => {
      const refillId = parsePositiveId(id);
      const refill = refillId === null ? undefined : (ctx.store.tables.refills.get(refillId) as RefillRecord | undefined);
      if (refill === undefined || refill.account !== account.profile.id) {
        return [id, renderItemError(errorOutcome('NOT_FOUND', 'No refill with this id exists on this account.'))];
      }
      return [id, renderRefill(refill)];
    });
    return { status: 200, body: renderBatch('refills', items) };
  });
}
