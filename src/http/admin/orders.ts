/**
 * Admin endpoints for orders, the processing system's side: show them (by
 * id or number; order-list.ts lists them), move them (refunds happen in
 * the wallet actor, in the same commit), place an order for a customer
 * through the panel, and the processing queue: workers claim pending
 * orders and record progress. Every change goes through the order's wallet
 * actor, so it is serialised with the customer's cancel and every other
 * move of that order.
 */
import type { Delivery } from '../../actors/index.js';
import { errorOutcome } from '../../errors/index.js';
import { ORDER_STATUSES, type OrderRecord, type OrderStatus } from '../../ledger/index.js';
import { formatMicro } from '../../money/index.js';
import { parsePositiveId } from '../../ids/index.js';
import { renderAdminOrder } from './render.js';
import type { AppContext } from '../context.js';
import { deliver } from '../transport/deliver.js';
import { checkOrderInput } from '../orders/order-input.js';
import { send, sendError } from '../transport/reply.js';
import { applied, findAccount, invalid, orderAccount, optionalReason, unknownField, type AdminHandler } from './common.js';
import { CLAIM_LIMIT_MAX, WORKER_CHARS_MAX } from '../limits.js';

/** Any path segment: a malformed id is answered "no such order", not "no such endpoint". */
export const ORDER_PARAM = '([^/]{1,200})';

export const showOrder: AdminHandler = async (ex, ctx, [id]) => {
  await ctx.wal.flushed();
  // An order number (what a reseller quotes from API v2) finds the order too.
  const number = parsePositiveId(id!);
  const order = number === null ? ctx.orders.read(id!) : ctx.orders.readByNumber(number);
  if (order === undefined) return sendError(ex, errorOutcome('NOT_FOUND', `No order with id ${id}.`));
  send(ex, 200, `{"ok":true,"order":${renderAdminOrder(order)}}`);
};

/** POST /admin/v1/orders/{id}/status {status, remains?} */
export const setOrderStatus: AdminHandler = async (ex, ctx, [id], body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['status', 'remains', 'reason']);
  if (bad !== null) return sendError(ex, bad);
  const reason = optionalReason(b);
  if (!reason.ok) return sendError(ex, reason.error);
  const to = b['status'] as OrderStatus;
  if (!ORDER_STATUSES.includes(to)) return sendError(ex, invalid(`status must be one of ${ORDER_STATUSES.join(', ')}.`));
  const remains = b['remains'] ?? null;
  if (remains !== null && !Number.isSafeInteger(remains)) return sendError(ex, invalid('remains must be an integer.'));
  const account = await orderAccount(ex, ctx, id!);
  if (account === null) return;
  const decision = await applied(
    ex,
    account.actor.send({ kind: 'set-status', orderId: id!, to, remains: remains as number | null, ...(reason.reason === undefined ? {} : { reason: reason.reason }) }),
  );
  if (decision === null) return;
  const refund = decision.outcome.kind === 'moved' ? decision.outcome.refund : 0;
  send(ex, 200, `{"ok":true,"order":${renderAdminOrder(decision.order!)},"refund":${formatMicro(refund)},"credits":${formatMicro(account.actor.state.wallet.credits)}}`);
};

/** POST /admin/v1/accounts/{id}/orders — a panel order, same actor, checks and ledger as the API. */
export const placePanelOrder: AdminHandler = async (ex, ctx, [id], body) => {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const checked = checkOrderInput(body, ctx.limits.targetCharsMax, (serviceId) => ctx.catalog.get(serviceId));
  if (!checked.ok) return sendError(ex, checked.error);
  const forceJoin = await (ctx.forceJoinVerdict?.(account) ?? Promise.resolve(null));
  const delivery = account.actor.send({
    kind: 'order',
    requestId: ex.requestId,
    channel: 'panel',
    request: { ok: true, payload: checked.payload, service: checked.service, idempotency: null, forceJoin },
  });
  deliver(ex, ctx, account, delivery);
};

/**
 * Claims run one at a time: each scans the durable pending orders oldest
 * first and waits until its moves are durable before the next one starts,
 * so concurrent workers get disjoint sets instead of racing for the same
 * oldest orders. Exactly-once does not rest on this alone: the actor
 * refuses a second move to processing (a move must go forward).
 */
const claimChains = new WeakMap<AppContext, Promise<unknown>>();

/** POST /admin/v1/orders/claim {limit, worker} */
export const claimOrders: AdminHandler = async (ex, ctx, _params, body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['limit', 'worker']);
  if (bad !== null) return sendError(ex, bad);
  const limit = b['limit'];
  if (!Number.isSafeInteger(limit) || (limit as number) < 1 || (limit as number) > CLAIM_LIMIT_MAX) {
    return sendError(ex, invalid(`limit must be an integer from 1 to ${CLAIM_LIMIT_MAX}.`));
  }
  const worker = b['worker'];
  if (typeof worker !== 'string' || worker.trim() === '' || worker.length > WORKER_CHARS_MAX) {
    return sendError(ex, invalid(`worker must be a non-empty string of at most ${WORKER_CHARS_MAX} characters naming the worker.`));
  }
  const run = (): Promise<OrderRecord[]> => claim(ctx, limit as number, worker.trim());
  const previous = claimChains.get(ctx) ?? Promise.resolve();
  const claimed = previous.then(run, run);
  claimChains.set(ctx, claimed.catch(() => {}));
  const orders = await claimed;
  send(ex, 200, `{"ok":true,"worker":${JSON.stringify(worker.trim())},"orders":[${orders.map(renderAdminOrder).join(',')}]}`);
};

async function claim(ctx: AppContext, limit: number, worker: string): Promise<OrderRecord[]> {
  await ctx.wal.flushed();
  const moves: Delivery[] = [];
  for (const { key } of ctx.store.tables.orderIndex.getRange({ start: ['pending'], end: ['pending', Infinity] })) {
    if (moves.length === limit) break;
    const id = (key as (string | number)[])[3] as string;
    const order = ctx.orders.read(id);
    const account = order === undefined ? undefined : ctx.registry.get(order.account);
    if (account === undefined) continue;
    const delivery = account.actor.send({ kind: 'set-status', orderId: id, to: 'processing', remains: null, reason: `claimed by ${worker}`, worker });
    // A full mailbox ends this claim early; the worker asks again.
    if (delivery === null) break;
    // An order the operator (or the customer) moved meanwhile is refused by the actor and not claimed.
    if (delivery.decision.outcome.kind === 'moved') moves.push(delivery);
  }
  await Promise.all(moves.map((m) => m.durable));
  return moves.map((m) => m.decision.order!);
}

/** POST /admin/v1/orders/{id}/progress {start_count?, remains?} */
export const recordProgress: AdminHandler = async (ex, ctx, [id], body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['start_count', 'remains']);
  if (bad !== null) return sendError(ex, bad);
  for (const field of ['start_count', 'remains']) {
    const value = b[field];
    if (value !== undefined && value !== null && !Number.isSafeInteger(value)) return sendError(ex, invalid(`${field} must be an integer or null.`));
  }
  const account = await orderAccount(ex, ctx, id!);
  if (account === null) return;
  const decision = await applied(
    ex,
    account.actor.send({
      kind: 'progress',
      orderId: id!,
      ...(b['start_count'] === undefined ? {} : { startCount: b['start_count'] as number | null }),
      ...(b['remains'] === undefined ? {} : { remains: b['remains'] as number | null }),
    }),
  );
  if (decision === null) return;
  send(ex, 200, `{"ok":true,"order":${renderAdminOrder(decision.order!)}}`);
};
