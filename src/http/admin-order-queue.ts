/**
 * The operator's processing queue: workers claim pending orders, record
 * progress, and find the orders whose customer asked to cancel. Every
 * change goes through the order's wallet actor, so it is serialised with
 * the customer's cancel and every other move of that order.
 */
import type { Delivery } from '../actors/index.js';
import type { OrderRecord } from '../ledger/index.js';
import { busy, invalid, orderAccount, unknownField, type AdminHandler } from './admin-common.js';
import { renderAdminOrder } from './admin-orders.js';
import type { AppContext } from './context.js';
import { send, sendError } from './reply.js';

export const CLAIM_LIMIT_MAX = 500;
const WORKER_CHARS_MAX = 100;

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
    const order = ctx.readOrder(id);
    const account = order === undefined ? undefined : ctx.registry.get(order.account);
    if (account === undefined) continue;
    const delivery = account.actor.send({ kind: 'set-status', orderId: id, order: null, to: 'processing', remains: null, reason: `claimed by ${worker}`, worker });
    // A full mailbox ends this claim early; the worker asks again.
    if (delivery === null) break;
    // An order the operator (or the customer) moved meanwhile is refused by the actor and not claimed.
    if (delivery.decision.outcome.kind === 'ok') moves.push(delivery);
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
  const delivery = account.actor.send({
    kind: 'progress',
    orderId: id!,
    order: null,
    ...(b['start_count'] === undefined ? {} : { startCount: b['start_count'] as number | null }),
    ...(b['remains'] === undefined ? {} : { remains: b['remains'] as number | null }),
  });
  if (delivery === null) return busy(ex);
  await delivery.durable;
  const { outcome, order } = delivery.decision;
  if (outcome.kind === 'error') return sendError(ex, outcome.error);
  send(ex, 200, `{"ok":true,"order":${renderAdminOrder(order!)}}`);
};

/**
 * GET /admin/v1/orders?cancel_requested=true: processing and in_progress
 * orders with an open cancel request, oldest first, at most `limit`. It
 * walks those two statuses' index (bounded memory: one page).
 */
export async function listCancelRequested(ex: Parameters<AdminHandler>[0], ctx: AppContext, limit: number): Promise<void> {
  await ctx.wal.flushed();
  const orders: OrderRecord[] = [];
  for (const status of ['processing', 'in_progress'] as const) {
    for (const { key } of ctx.store.tables.orderIndex.getRange({ start: [status], end: [status, Infinity] })) {
      if (orders.length === limit) break;
      const order = ctx.readOrder((key as (string | number)[])[3] as string);
      if (order?.cancelRequested === true) orders.push(order);
    }
  }
  send(ex, 200, `{"ok":true,"orders":[${orders.map(renderAdminOrder).join(',')}],"next_cursor":null}`);
}
