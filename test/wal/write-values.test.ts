/**
 * The values the group commit queues for a batch's writes: numbers and
 * strings as they are, every record encoded by its own table's encoder
 * before anything is queued, and an order's placement encoded once, its
 * row's bytes going to the orders table and, with what only the event
 * holds, to the log. What the log keeps is read back through the log's own
 * decoder, as every reader of the store reads it.
 */
import type { Database } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogEvent, OrderRecord } from '../../src/ledger/index.js';
import { placedEvent } from '../../src/ledger/placed-event.js';
import type { Store, WalEntry } from '../../src/wal/index.js';
import { WriteValues } from '../../src/wal/write-values.js';
import { tempStores } from '../helpers/temp-store.js';

const { open, cleanup } = tempStores('credit-order-api-write-values');
afterEach(cleanup);

type Placed = Extract<LogEvent, { type: 'order.placed' }>;

function row(id: string, number: number): OrderRecord {
  return { id, account: 1, service: 2, target: 'https://example.com/p/1', quantity: 10 * number, rate: 100, charge: 1000 * number, debit: 1000 * number, status: 'pending', remains: null, channel: 'api', unlimited: false, createdAtMs: 1_700_000_000_000, seq: number, number };
}

/** An order's row and its placement event, as the ledger makes them. */
function placement(id: string, number: number): { row: OrderRecord; event: Placed } {
  const r = row(id, number);
  return { row: r, event: placedEvent(r, 5000, { key: `key-${id}` }, 1_700_000_000_000 + number) };
}

/** The bytes of a value queued as binary. */
function bytesOf(value: unknown): Buffer {
  const bytes = (value as Record<string, unknown>)['\x10binary-data\x02'];
  expect(bytes).toBeInstanceOf(Uint8Array);
  return Buffer.from(bytes as Uint8Array);
}

/** A queued binary value as `db`'s own decoder reads it back. */
function decoded(db: Database<any, any>, value: unknown): unknown {
  return (db as unknown as { encoder: { decode(bytes: Uint8Array): unknown } }).encoder.decode(bytesOf(value));
}

function values(store: Store, entries: WalEntry[]): WriteValues {
  return new WriteValues(store, entries);
}

describe('WriteValues', () => {
  it('queues numbers and strings as they are, for the log and for any table', () => {
    const { store } = open();
    const of = values(store, []);
    expect(of.of(store.tables.orderIndex, 1)).toBe(1);
    expect(of.of(store.tables.numbers, 'order-a')).toBe('order-a');
    expect(of.of(store.log, 7)).toBe(7);
    expect(of.of(store.log, 'text')).toBe('text');
  });

  it('encodes any other record with its table’s encoder, and an event that is no placement whole', () => {
    const { store } = open();
    const of = values(store, []);
    const wallet = { id: 1, credits: 5, banned: false, rateLimitPerMinute: 60, unlimitedExpiresMs: null };
    expect(decoded(store.tables.wallets, of.of(store.tables.wallets, wallet))).toStrictEqual(wallet);
    const adjusted: LogEvent = { type: 'credits.adjusted', atMs: 1, account: 1, amount: 5, reason: 'test', balance: 5 };
    expect(decoded(store.log, of.of(store.log, adjusted))).toStrictEqual(adjusted);
    expect(decoded(store.tables.leases, of.of(store.tables.leases, [1, 'a']))).toStrictEqual([1, 'a']);
  });

  it('logs a placement as its row’s bytes with what only the event holds, and queues the row as those very bytes', () => {
    const { store } = open();
    const { row: r, event } = placement('order-a', 1);
    const of = values(store, [{ events: [event], puts: [{ table: 'orders', key: r.id, value: r }] }]);
    const logged = of.of(store.log, event);
    const rowValue = of.of(store.tables.orders, r);
    expect(decoded(store.log, logged)).toStrictEqual(event);
    expect(decoded(store.tables.orders, rowValue)).toStrictEqual(r);
    expect(bytesOf(logged).includes(bytesOf(rowValue))).toBe(true);
    expect(of.of(store.tables.orders, r)).toBe(rowValue);
  });

  it('pairs each placement of an entry with its own order’s row', () => {
    const { store } = open();
    const a = placement('order-a', 1);
    const b = placement('order-b', 2);
    const of = values(store, [{ events: [a.event, b.event], puts: [{ table: 'orders', key: b.row.id, value: b.row }, { table: 'orders', key: a.row.id, value: a.row }] }]);
    const loggedA = of.of(store.log, a.event);
    const loggedB = of.of(store.log, b.event);
    expect(decoded(store.log, loggedA)).toStrictEqual(a.event);
    expect(decoded(store.log, loggedB)).toStrictEqual(b.event);
    expect(bytesOf(loggedA).includes(bytesOf(of.of(store.tables.orders, a.row)))).toBe(true);
    expect(bytesOf(loggedB).includes(bytesOf(of.of(store.tables.orders, b.row)))).toBe(true);
    expect(of.of(store.tables.orders, a.row)).toBe(of.of(store.tables.orders, a.row));
    expect(of.of(store.tables.orders, b.row)).toBe(of.of(store.tables.orders, b.row));
  });

  it('finds placements in every entry of the batch, each with its entry’s row', () => {
    const { store } = open();
    const a = placement('order-a', 1);
    const b = placement('order-b', 2);
    const of = values(store, [
      { events: [a.event], puts: [{ table: 'orders', key: a.row.id, value: a.row }] },
      { events: [b.event], puts: [{ table: 'orders', key: b.row.id, value: b.row }] },
    ]);
    const loggedB = of.of(store.log, b.event);
    expect(decoded(store.log, loggedB)).toStrictEqual(b.event);
    expect(bytesOf(loggedB).includes(bytesOf(of.of(store.tables.orders, b.row)))).toBe(true);
    expect(of.of(store.tables.orders, b.row)).toBe(of.of(store.tables.orders, b.row));
  });

  it('logs a placement whole when its entry holds no orders row for it, or a row that differs from the event', () => {
    const { store } = open();
    const alone = placement('order-a', 1);
    const other = placement('order-b', 2);
    const differs = placement('order-c', 3);
    const changed: Placed = { ...differs.event, quantity: differs.event.quantity + 1 };
    const of = values(store, [
      { events: [alone.event], puts: [{ table: 'orders', key: other.row.id, value: other.row }] },
      { events: [changed], puts: [{ table: 'orders', key: differs.row.id, value: differs.row }] },
    ]);
    for (const event of [alone.event, changed]) expect(decoded(store.log, of.of(store.log, event))).toStrictEqual(event);
    const rowValue = of.of(store.tables.orders, differs.row);
    expect(decoded(store.tables.orders, rowValue)).toStrictEqual(differs.row);
    expect(of.of(store.tables.orders, differs.row)).not.toBe(rowValue);
  });

  it('takes only an orders put as a placement’s row, and encodes the row for any other table with that table’s encoder', () => {
    const { store } = open();
    const { row: r, event } = placement('order-a', 1);
    const copy = { ...r };
    const of = values(store, [{ events: [event], puts: [{ table: 'webhookLog', key: 1, value: copy }, { table: 'orders', key: r.id, value: r }] }]);
    const logged = of.of(store.log, event);
    const rowValue = of.of(store.tables.orders, r);
    expect(bytesOf(logged).includes(bytesOf(rowValue))).toBe(true);
    expect(of.of(store.tables.orders, r)).toBe(rowValue);
    expect(decoded(store.tables.webhookLog, of.of(store.tables.webhookLog, r))).toStrictEqual(r);
  });
});
