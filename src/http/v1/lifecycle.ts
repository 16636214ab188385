/**
 * The customer's lifecycle requests on /api/v1: batch status, cancel,
 * refill and refill status, each one request for the rate limit (the
 * shared src/http/lifecycle). Answers are keyed by the ids asked for; an id
 * that fails carries `{error, message}` instead of its fields.
 */
import type { Account } from '../../actors/index.js';
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { ORDER_ID_PATTERN } from '../../ids/index.js';
import { renderRefill, renderStatusFields } from '../../wire/index.js';
import type { AppContext } from '../context.js';
import { answerLookup } from '../lifecycle/admit.js';
import { ownOrder, ownRefill } from '../lifecycle/own-records.js';
import { sendPerOrder, type OrderResult } from '../lifecycle/per-order.js';
import { bodyIdList, queryIdList, type IdList } from '../orders/id-list.js';
import { renderAnswer } from '../transport/answer.js';
import type { BodyResult } from '../transport/body.js';
import { parseJson, TOO_LARGE } from '../transport/json-request.js';
import type { Exchange } from '../transport/reply.js';
import { renderBatch, renderItemError } from './render.js';

const NOT_AN_ORDER_ID = errorOutcome('VALIDATION', 'That is not an order id; order ids are the 22-character strings returned by POST /api/v1/order.');
const ORDER_NOT_FOUND = errorOutcome('NOT_FOUND', 'No order with this id exists on this account.');
const REFILL_NOT_FOUND = errorOutcome('NOT_FOUND', 'No refill with this id exists on this account.');

/** A batch query's id list; the single `order=` form cannot be mixed in. */
export function batchQuery(query: string, name: string, example: string): IdList {
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(query);
  } catch {
    return { ok: false, error: errorOutcome('VALIDATION', 'The query string cannot be decoded.') };
  }
  if (name === 'orders' && params.has('order')) {
    return { ok: false, error: errorOutcome('VALIDATION', 'Pass either order=ID or orders=ID1,ID2, not both.') };
  }
  return queryIdList(params, name, `/api/v1/${name === 'orders' ? 'status' : 'refill_status'}?${example}`);
}

/** The `{"orders": [...]}` body of cancel and refill. */
function bodyList(ctx: AppContext, body: BodyResult, contentType: string): IdList {
  if (body.kind === 'too-large') return { ok: false, error: TOO_LARGE(ctx.limits.bodyBytesMax) };
  const parsed = parseJson(contentType, body.bytes);
  if (!parsed.ok) return parsed;
  return bodyIdList(parsed.value, 'orders', '{"orders": ["ID1", "ID2"]}');
}

/** GET /api/v1/status?orders=a,b,c */
export function batchStatus(ex: Exchange, ctx: AppContext, account: Account, list: IdList): void {
  answerLookup(ex, ctx, account, list, (ids) =>
    renderBatch(
      'orders',
      ids.map((id): [string, string] => {
        if (!ORDER_ID_PATTERN.test(id)) return [id, renderItemError(NOT_AN_ORDER_ID)];
        const order = ownOrder(ctx, account, id);
        return [id, order === null ? renderItemError(ORDER_NOT_FOUND) : `{${renderStatusFields(order)}}`];
      }),
    ),
  );
}

/** Each order's outcome: its answer, or the refusal as an item error. */
function renderResults(ex: Exchange, results: [string, OrderResult][]): string {
  return renderBatch(
    'orders',
    results.map(([id, r]): [string, string] => {
      if (!('decision' in r)) return [id, renderItemError(r)];
      const outcome = r.decision.outcome;
      if (outcome.kind === 'error') return [id, renderItemError(outcome.error)];
      return [id, renderAnswer(outcome, ex.requestId).body];
    }),
  );
}

/** One command per order named by its public id; an id of the wrong shape is refused without one. */
function perOrder(ex: Exchange, ctx: AppContext, account: Account, list: IdList, kind: 'cancel' | 'refill'): void {
  sendPerOrder(
    ex,
    ctx,
    account,
    list,
    (orderId): { kind: 'cancel' | 'refill'; orderId: string } | ErrorOutcome => (ORDER_ID_PATTERN.test(orderId) ? { kind, orderId } : NOT_AN_ORDER_ID),
    (results) => renderResults(ex, results),
  );
}

/** POST /api/v1/cancel {orders: [...]} */
export function cancelOrders(ex: Exchange, ctx: AppContext, account: Account, body: BodyResult, contentType: string): void {
  perOrder(ex, ctx, account, bodyList(ctx, body, contentType), 'cancel');
}

/** POST /api/v1/refill {orders: [...]} */
export function refillOrders(ex: Exchange, ctx: AppContext, account: Account, body: BodyResult, contentType: string): void {
  perOrder(ex, ctx, account, bodyList(ctx, body, contentType), 'refill');
}

/** GET /api/v1/refill_status?refills=1,2,3 */
export function refillStatus(ex: Exchange, ctx: AppContext, account: Account, query: string): void {
  answerLookup(ex, ctx, account, batchQuery(query, 'refills', 'refills=1,2,3'), (ids) =>
    renderBatch(
      'refills',
      ids.map((id): [string, string] => {
        const refill = ownRefill(ctx, account, id);
        return [id, refill === null ? renderItemError(REFILL_NOT_FOUND) : renderRefill(refill)];
      }),
    ),
  );
}
