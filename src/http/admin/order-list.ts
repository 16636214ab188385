/**
 * GET /admin/v1/orders: the durable orders of one status, oldest first, a
 * page at a time, narrowed by account, worker or number; or, with
 * `cancel_requested=true`, the processing then in_progress orders whose
 * customer asked to cancel.
 *
 * A listing walks the status index (`orderIndex`: status, time, sequence,
 * id) and keeps the orders that pass its filters. A filter skips entries,
 * so one request examines at most the scan budget of them (scan.ts): a
 * filtered page may hold fewer than `limit` orders, even none, while
 * next_cursor is not null. The cursor is the index key of the last entry
 * examined, so a page resumes right after it whatever has moved since.
 * `number` names one order through the `numbers` table and answers it alone
 * when it passes the other filters given.
 */
import { ORDER_STATUSES, type OrderRecord, type OrderStatus } from '../../ledger/index.js';
import { parsePositiveId } from '../../ids/index.js';
import type { ErrorOutcome } from '../../errors/index.js';
import { renderAdminOrder } from './render.js';
import type { AppContext } from '../context.js';
import { send, sendError } from '../transport/reply.js';
import { invalid, pageLimit, type AdminHandler } from './common.js';
import { scanPage } from './scan.js';
import { WORKER_CHARS_MAX } from '../limits.js';

/** Every query parameter the listing reads. */
export const ORDER_LIST_QUERY = ['status', 'account', 'number', 'worker', 'cancel_requested', 'limit', 'cursor'] as const;

type IndexKey = [OrderStatus, number, number, string];

/** What a listing keeps: every filter given must hold. */
interface OrderFilter {
  statuses: readonly OrderStatus[];
  account: number | null;
  worker: string | null;
  cancelRequested: boolean;
}

const CANCEL_STATUSES: readonly OrderStatus[] = ['processing', 'in_progress'];

function passes(order: OrderRecord, filter: OrderFilter): boolean {
  return (
    filter.statuses.includes(order.status) &&
    (filter.account === null || order.account === filter.account) &&
    (filter.worker === null || order.worker === filter.worker) &&
    (!filter.cancelRequested || order.cancelRequested === true)
  );
}

type Parsed<T> = { ok: true; value: T } | { ok: false; error: ErrorOutcome };

/** The filters of a request; `explicitStatus` tells whether `status` was given (a `number` look-up ignores the default). */
function readFilter(query: URLSearchParams): Parsed<{ filter: OrderFilter; explicitStatus: boolean }> {
  const cancel = query.get('cancel_requested');
  if (cancel !== null && cancel !== 'true') return { ok: false, error: invalid('cancel_requested takes only the value true.') };
  const statusText = query.get('status');
  if (cancel !== null && statusText !== null) {
    return { ok: false, error: invalid('cancel_requested=true lists processing and in_progress orders; leave out status.') };
  }
  const status = (statusText ?? 'pending') as OrderStatus;
  if (!ORDER_STATUSES.includes(status)) return { ok: false, error: invalid(`status must be one of ${ORDER_STATUSES.join(', ')}.`) };
  const accountText = query.get('account');
  const account = accountText === null ? null : parsePositiveId(accountText);
  if (accountText !== null && account === null) return { ok: false, error: invalid('account must be an account id, a positive integer.') };
  const worker = query.get('worker');
  if (worker !== null && (worker === '' || worker.length > WORKER_CHARS_MAX)) {
    return { ok: false, error: invalid(`worker must be a worker's name, 1 to ${WORKER_CHARS_MAX} characters.`) };
  }
  const filter: OrderFilter = { statuses: cancel === null ? [status] : CANCEL_STATUSES, account, worker, cancelRequested: cancel !== null };
  return { ok: true, value: { filter, explicitStatus: statusText !== null } };
}

export const listOrders: AdminHandler = async (ex, ctx, _params, _body, query) => {
  const read = readFilter(query);
  if (!read.ok) return sendError(ex, read.error);
  const page = pageLimit(query);
  if (!page.ok) return sendError(ex, page.error);
  const numberText = query.get('number');
  if (numberText !== null) {
    const number = parsePositiveId(numberText);
    if (number === null) return sendError(ex, invalid('number must be an order number, a positive integer.'));
    if (query.get('cursor') !== null) return sendError(ex, invalid('number names one order; leave out cursor.'));
    const filter = read.value.explicitStatus ? read.value.filter : { ...read.value.filter, statuses: ORDER_STATUSES };
    await ctx.wal.flushed();
    const order = ctx.orders.readByNumber(number);
    const items = order !== undefined && passes(order, filter) ? [renderAdminOrder(order)] : [];
    return send(ex, 200, `{"ok":true,"orders":[${items.join(',')}],"next_cursor":null}`);
  }
  const filter = read.value.filter;
  const cursorText = query.get('cursor');
  const after = cursorText === null ? null : decodeCursor(cursorText, filter.statuses);
  if (cursorText !== null && after === null) {
    const listing = filter.cancelRequested ? 'cancel_requested=true' : `status ${filter.statuses[0]!}`;
    return sendError(ex, invalid(`cursor is not one this server returned for ${listing}; start without it.`));
  }
  // Only durable orders are listed.
  await ctx.wal.flushed();
  const scanned = scanPage(indexAfter(ctx, filter.statuses, after), (key) => {
    const order = ctx.orders.read(key[3]);
    return order !== undefined && passes(order, filter) ? order : undefined;
  }, page.limit, ctx.limits.scanEntriesMax);
  const next = scanned.resumeAfter === null ? 'null' : `"${Buffer.from(JSON.stringify(scanned.resumeAfter)).toString('base64url')}"`;
  send(ex, 200, `{"ok":true,"orders":[${scanned.items.map(renderAdminOrder).join(',')}],"next_cursor":${next}}`);
};

/** A cursor this listing returned: an index key of one of the listed statuses. */
function decodeCursor(text: string, statuses: readonly OrderStatus[]): IndexKey | null {
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 4 && statuses.includes(v[0] as OrderStatus) && Number.isSafeInteger(v[1]) && Number.isSafeInteger(v[2]) && typeof v[3] === 'string') {
      return v as IndexKey;
    }
  } catch {
    // fall through: not a cursor this server issued
  }
  return null;
}

/**
 * The index keys of `statuses`, in that order, each oldest first, from
 * just after `after` (a key that may since have left the index: the walk
 * starts where it would sort). The cursor's own entry is skipped, not
 * examined, so even a budget of one moves forward.
 */
function* indexAfter(ctx: AppContext, statuses: readonly OrderStatus[], after: IndexKey | null): Generator<IndexKey> {
  const from = after === null ? 0 : statuses.indexOf(after[0]);
  for (const status of statuses.slice(from)) {
    const start = after !== null && after[0] === status ? after : [status];
    for (const { key } of ctx.store.tables.orderIndex.getRange({ start, end: [status, Infinity] })) {
      const k = key as IndexKey;
      if (after !== null && k[0] === after[0] && k[3] === after[3]) continue;
      yield k;
    }
  }
}
