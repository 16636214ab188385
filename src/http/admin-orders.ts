/**
 * Admin endpoints for the processing system: list and show orders, move
 * them (refunds happen in the wallet actor, in the same commit), place
 * orders for a customer through the panel, grant the unlimited plan.
 */
import { PLAN_MONTHS_MAX } from '../ledger/index.js';
import { parsePositiveId } from '../order-numbers.js';
import { errorOutcome } from '../errors.js';
import { formatMicro } from '../money/index.js';
import { renderOrderInputs } from '../render.js';
import { countIndex, dataFileBytes, isOrderCounts, ORDER_COUNTS_KEY } from '../wal/index.js';
import { ORDER_STATUSES, type OrderRecord, type OrderStatus } from '../ledger/index.js';
import { busy, findAccount, invalid, orderAccount, optionalReason, renderAccount, unknownField, type AdminHandler } from './admin-common.js';
import { deliver } from './deliver.js';
import { listCancelRequested } from './admin-order-queue.js';
import { checkOrderInput } from './order-input.js';
import { send, sendError } from './reply.js';

/** Any path segment: a malformed id is answered "no such order", not "no such endpoint". */
export const ORDER_PARAM = '([^/]{1,200})';
const PAGE_MAX = 500;

export function renderAdminOrder(o: OrderRecord): string {
  return (
    `{"id":"${o.id}","number":${o.number ?? null},"account":${o.account},"service":${o.service},"target":${JSON.stringify(o.target)},` +
    `"quantity":${o.quantity},"rate":${formatMicro(o.rate)},"charge":${formatMicro(o.charge)},"debit":${formatMicro(o.debit)},` +
    `"status":"${o.status}","remains":${o.remains ?? null},"channel":"${o.channel}","unlimited":${o.unlimited},` +
    `"created_at":"${new Date(o.createdAtMs).toISOString()}",${renderOrderInputs(o)},` +
    `"start_count":${o.startCount ?? null},"progress_remains":${o.progressRemains ?? null},"cancel_requested":${o.cancelRequested === true},` +
    `"worker":${JSON.stringify(o.worker ?? null)},"refill":${o.refill === undefined ? null : `{"id":${o.refill.id},"status":"${o.refill.status}"}`}}`
  );
}

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
  const limitText = query.get('limit') ?? '100';
  const limit = Number(limitText);
  if (!/^\d+$/.test(limitText) || limit < 1 || limit > PAGE_MAX) return sendError(ex, invalid(`limit must be an integer from 1 to ${PAGE_MAX}.`));
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
    const order = ctx.readOrder(id);
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
  const order = number === null ? ctx.readOrder(id!) : ctx.readOrderByNumber(number);
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
  const delivery = account.actor.send({
    kind: 'set-status',
    orderId: id!,
    to,
    remains: remains as number | null,
    ...(reason.reason === undefined ? {} : { reason: reason.reason }),
  });
  if (delivery === null) return busy(ex);
  await delivery.durable;
  const { outcome, order } = delivery.decision;
  if (outcome.kind === 'error') return sendError(ex, outcome.error);
  const refund = delivery.decision.events[0]?.type === 'order.status' ? delivery.decision.events[0].refund : 0;
  send(ex, 200, `{"ok":true,"order":${renderAdminOrder(order!)},"refund":${formatMicro(refund)},"credits":${formatMicro(account.actor.state.wallet.credits)}}`);
};

/** POST /admin/v1/accounts/{id}/orders — a panel order, same actor, checks and ledger as the API. */
export const placePanelOrder: AdminHandler = async (ex, ctx, [id], body) => {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const checked = checkOrderInput(body, ctx.limits.targetCharsMax, (serviceId) => ctx.catalog.get(serviceId));
  if (!checked.ok) return sendError(ex, checked.error);
  const forceJoin = await (ctx.forceJoinVerdict(account) ?? Promise.resolve(null));
  const delivery = account.actor.send({
    kind: 'order',
    requestId: ex.requestId,
    channel: 'panel',
    request: { ok: true, input: checked.input, service: checked.service, idempotency: null, forceJoin },
  });
  deliver(ex, ctx, account, delivery);
};

/** POST /admin/v1/accounts/{id}/plan {months} */
export const grantPlan: AdminHandler = async (ex, ctx, [id], body) => {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['months', 'reason']);
  if (bad !== null) return sendError(ex, bad);
  const reason = optionalReason(b);
  if (!reason.ok) return sendError(ex, reason.error);
  if (!Number.isSafeInteger(b['months'])) return sendError(ex, invalid(`months must be an integer from 1 to ${PLAN_MONTHS_MAX}.`));
  const delivery = account.actor.send({
    kind: 'grant-plan',
    months: b['months'] as number,
    ...(reason.reason === undefined ? {} : { reason: reason.reason }),
  });
  if (delivery === null) return busy(ex);
  await delivery.durable;
  const { outcome, events } = delivery.decision;
  if (outcome.kind === 'error') return sendError(ex, outcome.error);
  const price = events[0]?.type === 'plan.granted' ? events[0].priceInr : 0;
  send(ex, 200, `{"ok":true,"account":${renderAccount(account, ctx.clock.wallMs())},"price_inr":${price}}`);
};

/** POST /admin/v1/accounts/{id}/forcejoin {telegram_user_id?, verified?, exempt?} */
export const setForceJoin: AdminHandler = async (ex, ctx, [id], body) => {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['telegram_user_id', 'verified', 'exempt', 'reason']);
  if (bad !== null) return sendError(ex, bad);
  const reason = optionalReason(b);
  if (!reason.ok) return sendError(ex, reason.error);
  const user = b['telegram_user_id'];
  if (user !== undefined && user !== null && (!Number.isSafeInteger(user) || (user as number) < 1)) {
    return sendError(ex, invalid('telegram_user_id must be a positive integer or null.'));
  }
  for (const flag of ['verified', 'exempt']) {
    if (b[flag] !== undefined && typeof b[flag] !== 'boolean') return sendError(ex, invalid(`${flag} must be true or false.`));
  }
  if (user === undefined && b['verified'] === undefined && b['exempt'] === undefined) {
    return sendError(ex, invalid('Send at least one of telegram_user_id, verified, exempt.'));
  }
  await ctx.registry.updateForceJoin(account, {
    telegramUserId: user === undefined ? (account.profile.telegramUserId ?? null) : (user as number | null),
    verified: (b['verified'] as boolean | undefined) ?? account.profile.forceJoinVerified ?? false,
    exempt: (b['exempt'] as boolean | undefined) ?? account.profile.forceJoinExempt ?? false,
    ...(reason.reason === undefined ? {} : { reason: reason.reason }),
  });
  ctx.forceJoinChanged(account.profile.id);
  send(ex, 200, `{"ok":true,"account":${renderAccount(account, ctx.clock.wallMs())}}`);
};

/**
 * Orders by status: the counts row the group commit keeps in the same
 * commit as the orders (O(1); committed is synced in the default sync mode).
 * Only a store never opened by the group commit lacks it: then the index
 * is counted.
 */
export function ordersByStatus(ctx: Parameters<AdminHandler>[1]): Record<string, number> {
  const row: unknown = ctx.store.tables.meta.get(ORDER_COUNTS_KEY);
  return isOrderCounts(row) ? row : countIndex(ctx.store);
}

/** The data file's length and how much of it LMDB uses (the rest is the zero-filled reserve, or pages of a commit a crash cut short). */
function storageStats(ctx: Parameters<AdminHandler>[1]): { file_bytes: number; used_bytes: number } {
  const { fileBytes, usedBytes } = dataFileBytes(ctx.store);
  return { file_bytes: fileBytes, used_bytes: usedBytes };
}

export const stats: AdminHandler = (ex, ctx) => {
  let deepest = 0;
  for (const account of ctx.registry.loaded()) deepest = Math.max(deepest, account.actor.depth);
  const w = ctx.wal.stats();
  const wal = {
    batches: w.batches,
    commits: w.commits,
    entries: w.entries,
    events: w.events,
    last_batch_entries: w.lastBatchEntries,
    last_sync_ms: Math.round(w.lastSyncMs * 1000) / 1000,
    pending_entries: w.pendingEntries,
  };
  send(
    ex,
    200,
    JSON.stringify({ ok: true, accounts: ctx.registry.size, services: ctx.catalog.all().length, orders: ordersByStatus(ctx), deepest_mailbox: deepest, wal, storage: storageStats(ctx) }),
  );
};

