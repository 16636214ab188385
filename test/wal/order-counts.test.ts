/**
 * The orders-per-status row: what each order event does to it, the count
 * of the status index it is rebuilt from, the check that a stored row is
 * one, and loading it at start-up (the row as stored, or counted from the
 * index and written when missing or malformed).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ORDER_STATUSES, type LogEvent, type OrderStatus } from '../../src/ledger/index.js';
import { countEvent, countIndex, isOrderCounts, loadOrderCounts, noOrders, ORDER_COUNTS_KEY, orderIndexKey, type OrderCounts, type Store } from '../../src/wal/index.js';
import { tempStores } from '../helpers/temp-store.js';

const { open, cleanup } = tempStores('credit-order-api-order-counts');
afterEach(cleanup);

/** Counts with `pending` … `canceled` as given, in ORDER_STATUSES' order. */
function counts(pending: number, processing: number, in_progress: number, completed: number, partial: number, canceled: number): OrderCounts {
  return { pending, processing, in_progress, completed, partial, canceled };
}

const placed: LogEvent = {
  type: 'order.placed',
  atMs: 1,
  account: 1,
  order: 'o1',
  service: 1,
  quantity: 10,
  rate: 100,
  charge: 1000,
  debit: 1000,
  balance: 0,
  channel: 'api',
  idempotencyKey: null,
};

function moved(from: OrderStatus, to: OrderStatus): LogEvent {
  return { type: 'order.status', atMs: 1, account: 1, order: 'o1', from, to, remains: null, refund: 0, balance: 0 };
}

const released: LogEvent = { type: 'order.released', atMs: 1, account: 1, order: 'o1', worker: 'w', cause: 'expired' };

/** Puts one status-index entry per status in `statuses` (orders o0, o1, …, each created at its position). */
function indexed(store: Store, statuses: OrderStatus[]): void {
  statuses.forEach((status, i) => store.tables.orderIndex.putSync(orderIndexKey({ status, createdAtMs: 1000 + i, seq: i, id: `o${i}` }), 1));
}

describe('noOrders', () => {
  it('is a zero for every status, and a fresh object each time', () => {
    expect(noOrders()).toStrictEqual(counts(0, 0, 0, 0, 0, 0));
    const first = noOrders();
    first.pending = 3;
    expect(noOrders().pending).toBe(0);
  });
});

describe('countEvent', () => {
  it('counts a placed order as pending', () => {
    const c = counts(1, 2, 3, 4, 5, 6);
    expect(countEvent(c, placed)).toBe(true);
    expect(c).toStrictEqual(counts(2, 2, 3, 4, 5, 6));
  });

  it('moves one order from the status it left to the one it reached', () => {
    const c = counts(1, 2, 3, 4, 5, 6);
    expect(countEvent(c, moved('in_progress', 'partial'))).toBe(true);
    expect(c).toStrictEqual(counts(1, 2, 2, 4, 6, 6));
    expect(countEvent(c, moved('pending', 'canceled'))).toBe(true);
    expect(c).toStrictEqual(counts(0, 2, 2, 4, 6, 7));
  });

  it('moves a released order from processing back to pending', () => {
    const c = counts(1, 2, 3, 4, 5, 6);
    expect(countEvent(c, released)).toBe(true);
    expect(c).toStrictEqual(counts(2, 1, 3, 4, 5, 6));
  });

  it('leaves the counts alone for any other event, and says so', () => {
    const c = counts(1, 2, 3, 4, 5, 6);
    const others: LogEvent[] = [
      { type: 'credits.adjusted', atMs: 1, account: 1, amount: 5, reason: 'test', balance: 5 },
      { type: 'order.progress', atMs: 1, account: 1, order: 'o1', startCount: 1, remains: 2 },
      { type: 'order.lease_extended', atMs: 1, account: 1, order: 'o1', worker: 'w', leaseExpiresMs: 9 },
    ];
    for (const event of others) expect(countEvent(c, event)).toBe(false);
    expect(c).toStrictEqual(counts(1, 2, 3, 4, 5, 6));
  });
});

describe('countIndex', () => {
  it('counts the status index’s entries of each status, neighbours apart', () => {
    const { store } = open();
    expect(countIndex(store)).toStrictEqual(counts(0, 0, 0, 0, 0, 0));
    indexed(store, ['canceled', 'pending', 'processing', 'processing', 'in_progress', 'completed', 'completed', 'completed', 'partial', 'canceled']);
    expect(countIndex(store)).toStrictEqual(counts(1, 2, 1, 3, 1, 2));
  });

  it('counts the index as a transaction opened earlier sees it', () => {
    const { store } = open();
    indexed(store, ['pending']);
    const transaction = store.root.useReadTransaction();
    try {
      store.tables.orderIndex.putSync(orderIndexKey({ status: 'pending', createdAtMs: 5000, seq: 9, id: 'late' }), 1);
      expect(countIndex(store, transaction).pending).toBe(1);
      expect(countIndex(store).pending).toBe(2);
    } finally {
      transaction.done();
    }
  });
});

describe('isOrderCounts', () => {
  const row = counts(1, 0, 2, 3, 0, 4);

  it('accepts a whole count for every status', () => {
    expect(isOrderCounts(row)).toBe(true);
    expect(isOrderCounts({ ...row, pending: Number.MAX_SAFE_INTEGER })).toBe(true);
  });

  it('refuses a row missing any status, with a count that is not a safe whole number, or that is no record', () => {
    for (const status of ORDER_STATUSES) {
      const { [status]: _, ...missing } = row;
      expect(isOrderCounts(missing)).toBe(false);
    }
    expect(isOrderCounts({ ...row, partial: 1.5 })).toBe(false);
    expect(isOrderCounts({ ...row, partial: '1' })).toBe(false);
    expect(isOrderCounts({ ...row, canceled: Number.MAX_SAFE_INTEGER + 1 })).toBe(false);
    expect(isOrderCounts(null)).toBe(false);
    expect(isOrderCounts(undefined)).toBe(false);
    expect(isOrderCounts(7)).toBe(false);
    expect(isOrderCounts('counts')).toBe(false);
  });
});

describe('loadOrderCounts', () => {
  it('reads the row under `orderCounts` as stored, even where the index says otherwise', () => {
    const { store } = open();
    indexed(store, ['pending']);
    store.tables.meta.putSync('orderCounts', counts(5, 4, 3, 2, 1, 0));
    expect(loadOrderCounts(store)).toStrictEqual(counts(5, 4, 3, 2, 1, 0));
    expect(ORDER_COUNTS_KEY).toBe('orderCounts');
  });

  it('counts the index when the store has no row, and writes what it counted', () => {
    const { store } = open();
    indexed(store, ['pending', 'completed', 'completed']);
    expect(loadOrderCounts(store)).toStrictEqual(counts(1, 0, 0, 2, 0, 0));
    expect(store.tables.meta.get('orderCounts')).toStrictEqual(counts(1, 0, 0, 2, 0, 0));
  });

  it('counts the index again over a row that is not a count of every status', () => {
    const { store } = open();
    indexed(store, ['partial']);
    store.tables.meta.putSync('orderCounts', { ...counts(5, 0, 0, 0, 0, 0), partial: 'many' });
    expect(loadOrderCounts(store)).toStrictEqual(counts(0, 0, 0, 0, 1, 0));
    expect(store.tables.meta.get('orderCounts')).toStrictEqual(counts(0, 0, 0, 0, 1, 0));
  });
});
