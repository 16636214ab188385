/**
 * Admin endpoints for orders, the processing system's side: list and show
 * them (by id or number), move them (refunds happen in the wallet actor, in
 * the same commit), place an order for a customer through the panel, and
 * the processing side: record progress, and find the orders whose customer
 * asked to cancel (the claim queue and its leases are claims.ts's). A move
 * or progress that names a `worker` is that worker's, which must hold the
 * order (409 CONFLICT otherwise). Every change goes through
 * the order's wallet actor, so it is serialised with the customer's cancel
 * and every other move of that order.
 */
import { errorOutcome } from '../../errors/index.js';
import { ORDER_STATUSES, type OrderRecord, type OrderStatus } from '../../ledger/index.js';
import { formatMicro } from '../../money/index.js';
import { parsePositiveId } from '../../ids/index.js';
import { renderAdminOrder } from './render.js';
import type { AppContext } from '../context.js';
import { deliver } from '../transport/deliver.js';
import { checkOrderInput } from '../orders/order-input.js';
import { send, sendError } from '../transport/reply.js';
import { applied, findAccount, invalid, orderAccount, optionalReason, pageLimit, unknownField, type AdminHandler } from './common.js';
import { scanPage } from './scan.js';
import { optionalWorker } from './claims.js';

/** Any path segment: a malformed id is answered "no such order", not "no such endpoint". */
export const ORDER_PARAM = '([^/]{1,200})';

/** A cursor names its status too, so it cannot be reused for another list. */
function encodeCursor(o: OrderRecord): string {
  return Buffer.from(JSON.stringify([o.status, o.createdAtMs, o.seq, o.id])).toString('base64url');
}

function decodeCursor(cursor: string, status: OrderStatus): [number, number, string] | null {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(value) &&
      value.length === 4 &&
      value[0] === status &&
      Number.isSafeInteger(value[1]) &&
      Number.isSafeInteger(value[2]) &&
      typeof value[3] === 'string'
    ) {
      return [value[1] as number, value[2] as number, value[3] as string];
    }
  } catch {
    // fall through: not a cursor this server issued
  }
  return null;
}

/** GET /admin/v1/orders?status=pending&limit=100&cursor=… — oldest first. */
export const listOrders: AdminHandler = async (ex, ctx, _params, _body, query) => {
  const status = (query.get('status') ?? 'pending') as OrderStatus;
  if (!ORDER_STATUSES.includes(status)) return sendError(ex, invalid(`status must be one of ${ORDER_STATUSES.join(', ')}.`));
  const page = pageLimit(query);
  if (!page.ok) return sendError(ex, page.error);
  const limit = page.limit;
  const cancelRequested = query.get('cancel_requested');
  if (cancelRequested !== null) {
    if (cancelRequested !== 'true') return sendError(ex, invalid('cancel_requested takes only the value true.'));
    return listCancelRequested(ex, ctx, limit, query.get('cursor'));
  }
  let start: (string | number)[] = [status];
  const cursorText = query.get('cursor');
  let after: string | null = null;
  if (cursorText !== null) {
    const cursor = decodeCursor(cursorText, status);
    if (cursor === null) return sendError(ex, invalid(`cursor is not one this server returned for status ${status}; start without it.`));
    start = [status, cursor[0], cursor[1], cursor[2]];
    after = cursor[2];
  }
  // Only durable orders are listed.
  await ctx.wal.flushed();
  const orders: OrderRecord[] = [];
  for (const { key } of ctx.store.tables.orderIndex.getRange({ start, end: [status, Infinity] })) {
    const id = (key as (string | number)[])[3] as string;
    if (id === after) continue;
    const order = ctx.orders.read(id);
    if (order !== undefined) orders.push(order);
    if (orders.length > limit) break;
  }
  const more = orders.length > limit;
  if (more) orders.pop();
  const next = more ? `"${encodeCursor(orders[orders.length - 1]!)}"` : 'null';
  send(ex, 200, `{"ok":true,"orders":[${orders.map(renderAdminOrder).join(',')}],"next_cursor":${next}}`);
};

export const showOrder: AdminHandler = async (ex, ctx, [id]) => {
  await ctx.wal.flushed();
  // An order number (what a reseller quotes from API v2) finds the order too.
  const number = parsePositiveId(id!);
  const order = number === null ? ctx.orders.read(id!) : ctx.orders.readByNumber(number);
  if (order === undefined) return sendError(ex, errorOutcome('NOT_FOUND', `No order with id ${id}.`));
  send(ex, 200, `{"ok":true,"order":${renderAdminOrder(order)}}`);
};

/** POST /admin/v1/orders/{id}/status {status, remains?, reason?, worker?} */
export const setOrderStatus: AdminHandler = async (ex, ctx, [id], body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['status', 'remains', 'reason', 'worker']);
  if (bad !== null) return sendError(ex, bad);
  const reason = optionalReason(b);
  if (!reason.ok) return sendError(ex, reason.error);
  const worker = optionalWorker(b);
  if (!worker.ok) return sendError(ex, worker.error);
  const to = b['status'] as OrderStatus;
  if (!ORDER_STATUSES.includes(to)) return sendError(ex, invalid(`status must be one of ${ORDER_STATUSES.join(', ')}.`));
  const remains = b['remains'] ?? null;
  if (remains !== null && !Number.isSafeInteger(remains)) return sendError(ex, invalid('remains must be an integer.'));
  const account = await orderAccount(ex, ctx, id!);
  if (account === null) return;
  const decision = await applied(
    ex,
    account.actor.send({
      kind: 'set-status',
      orderId: id!,
      to,
      remains: remains as number | null,
      ...(reason.reason === undefined ? {} : { reason: reason.reason }),
      ...(worker.worker === undefined ? {} : { worker: worker.worker }),
    }),
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

/** POST /admin/v1/orders/{id}/progress {start_count?, remains?, worker?} */
export const recordProgress: AdminHandler = async (ex, ctx, [id], body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['start_count', 'remains', 'worker']);
  if (bad !== null) return sendError(ex, bad);
  const worker = optionalWorker(b);
  if (!worker.ok) return sendError(ex, worker.error);
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
      ...(worker.worker === undefined ? {} : { worker: worker.worker }),
    }),
  );
  if (decision === null) return;
  send(ex, 200, `{"ok":true,"order":${renderAdminOrder(decision.order!)}}`);
};

const CANCEL_STATUSES = ['processing', 'in_progress'] as const;

type IndexKey = [string, number, number, string];

/** The cursor is the status-index key of the last order listed. */
function decodeIndexCursor(text: string): IndexKey | null {
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 4 && (CANCEL_STATUSES as readonly unknown[]).includes(v[0]) && Number.isSafeInteger(v[1]) && Number.isSafeInteger(v[2]) && typeof v[3] === 'string') {
      return v as IndexKey;
    }
  } catch {
    // fall through: not a cursor this server issued
  }
  return null;
}

/**
 * GET /admin/v1/orders?cancel_requested=true&limit=&cursor=: processing,
 * then in_progress orders with an open cancel request, each oldest first, a
 * page at a time. It walks those two statuses' index and keeps the flagged
 * orders, examining at most the scan budget of entries per request
 * (scan.ts): with large backlogs and few requests a page may hold fewer
 * than `limit` orders, even none, while next_cursor is not null.
 */
export async function listCancelRequested(ex: Parameters<AdminHandler>[0], ctx: AppContext, limit: number, cursorText: string | null): Promise<void> {
  const after = cursorText === null ? null : decodeIndexCursor(cursorText);
  if (cursorText !== null && after === null) return sendError(ex, invalid('cursor is not one this server returned for cancel_requested=true; start without it.'));
  await ctx.wal.flushed();
  const page = scanPage(cancelIndexAfter(ctx, after), (k) => {
    const order = ctx.orders.read(k[3]);
    return order?.cancelRequested === true ? order : undefined;
  }, limit, ctx.limits.scanEntriesMax);
  const cursor = page.resumeAfter === null ? 'null' : `"${Buffer.from(JSON.stringify(page.resumeAfter)).toString('base64url')}"`;
  send(ex, 200, `{"ok":true,"orders":[${page.items.map(renderAdminOrder).join(',')}],"next_cursor":${cursor}}`);
}

/**
 * The processing, then the in_progress index keys, from just after `after`
 * (a key that may since have left the index: the walk starts where it
 * would sort). The cursor's own entry is skipped, not examined, so even a
 * budget of one moves forward.
 */
function* cancelIndexAfter(ctx: AppContext, after: IndexKey | null): Generator<IndexKey> {
  const from = after === null ? 0 : CANCEL_STATUSES.indexOf(after[0] as (typeof CANCEL_STATUSES)[number]);
  for (const status of CANCEL_STATUSES.slice(from)) {
    const start = after !== null && after[0] === status ? after : [status];
    for (const { key } of ctx.store.tables.orderIndex.getRange({ start, end: [status, Infinity] })) {
      const k = key as IndexKey;
      if (after !== null && k[0] === after[0] && k[3] === after[3]) continue;
      yield k;
    }
  }
}
