/**
 * How many orders are in each status, kept as one `meta` row written in the
 * same commit as the orders it counts, so that stats and metrics read it in
 * O(1) instead of counting millions of index entries on the main thread.
 */
import type { Transaction } from 'lmdb';
import { ORDER_STATUSES, type LogEvent, type OrderStatus } from '../ledger/index.js';
import type { Store } from './store.js';

export const ORDER_COUNTS_KEY = 'orderCounts';

export type OrderCounts = Record<OrderStatus, number>;

export function noOrders(): OrderCounts {
  return { pending: 0, processing: 0, in_progress: 0, completed: 0, partial: 0, canceled: 0 };
}

/** Adds an event's effect to the counts; false when it has none. (A new order is always pending; a released one goes from processing back to pending.) */
export function countEvent(counts: OrderCounts, event: LogEvent): boolean {
  if (event.type === 'order.placed') {
    counts.pending++;
    return true;
  }
  if (event.type === 'order.status') {
    counts[event.from]--;
    counts[event.to]++;
    return true;
  }
  if (event.type === 'order.released') {
    counts.processing--;
    counts.pending++;
    return true;
  }
  return false;
}

/**
 * Counts the status index (a scan of every order: for start-up without the
 * row, and for verify), as `transaction` sees it when given (lmdb-js reads
 * an undefined transaction as none given).
 */
export function countIndex(store: Store, transaction?: Transaction): OrderCounts {
  const counts = noOrders();
  for (const status of ORDER_STATUSES) {
    counts[status] = store.tables.orderIndex.getKeysCount({ start: [status], end: [status, Infinity], transaction });
  }
  return counts;
}

export function isOrderCounts(row: unknown): row is OrderCounts {
  if (row === null || typeof row !== 'object') return false;
  return ORDER_STATUSES.every((s) => Number.isSafeInteger((row as Record<string, unknown>)[s]));
}

/** The durable counts row; a data directory without one (older, or seeded by hand) gets it counted from the index and written. */
export function loadOrderCounts(store: Store): OrderCounts {
  const row: unknown = store.tables.meta.get(ORDER_COUNTS_KEY);
  if (isOrderCounts(row)) return { ...row };
  const counts = countIndex(store);
  store.tables.meta.putSync(ORDER_COUNTS_KEY, counts);
  return counts;
}
