/**
 * GET /api/v1/status: one order (`order=ID`) or many (`orders=ID1,ID2`,
 * answered by the batch status in lifecycle.ts).
 */
import type { Account } from '../../actors/index.js';
import { errorOutcome, renderError, type ErrorOutcome } from '../../errors/index.js';
import { ORDER_ID_PATTERN } from '../../ids/index.js';
import { renderStatus } from '../../wire/index.js';
import type { AppContext } from '../context.js';
import { ownOrder } from '../lifecycle/own-records.js';
import { deliver } from '../transport/deliver.js';
import type { Exchange } from '../transport/reply.js';
import { batchQuery, batchStatus } from './lifecycle.js';

const ORDER_NOT_FOUND = errorOutcome('NOT_FOUND', 'No order with this id exists on this account.');
const REPEATED = errorOutcome('VALIDATION', 'Pass exactly one order query parameter: /api/v1/status?order=ID.');
const MISSING = errorOutcome('VALIDATION', 'Pass the order id as the query parameter: /api/v1/status?order=ID.');
const NOT_AN_ORDER_ID = errorOutcome('VALIDATION', 'That is not an order id; order ids are the 22-character strings returned by POST /api/v1/order.');

export function orderStatus(ex: Exchange, ctx: AppContext, account: Account, query: string): void {
  if (/(^|&)orders=/.test(query)) return batchStatus(ex, ctx, account, batchQuery(query, 'orders', 'orders=ID1,ID2'));
  const orderId = statusQuery(query);
  const delivery = account.actor.send({ kind: 'touch' });
  const invalid: ErrorOutcome | null = orderId === null ? REPEATED : orderId === '' ? MISSING : !ORDER_ID_PATTERN.test(orderId) ? NOT_AN_ORDER_ID : null;
  deliver(ex, ctx, account, delivery, () => {
    if (invalid !== null) return { status: invalid.status, body: renderError(invalid, ex.requestId) };
    const order = ownOrder(ctx, account, orderId!);
    if (order === null) return { status: ORDER_NOT_FOUND.status, body: renderError(ORDER_NOT_FOUND, ex.requestId) };
    return { status: 200, body: renderStatus(order) };
  });
}

/** The `order` parameter, or null when it is repeated (ambiguous) or cannot be decoded. */
function statusQuery(query: string): string | null {
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(query);
  } catch {
    return null;
  }
  const values = params.getAll('order');
  if (values.length > 1) return null;
  return values[0] ?? '';
}
