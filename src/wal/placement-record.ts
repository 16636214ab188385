/**
 * How an order's placement is kept in the LMDB log. Its order.placed event
 * repeats the fields of the order's row (account, id, number, service,
 * quantity, rate, charge, debit, channel, type, extras, and a subscription's
 * id and post). The group commit
 * encodes the row once, puts those bytes in the orders table, and logs the
 * event as what only the event holds (its time, the balance the debit
 * leaves, the Idempotency-Key, the webhook endpoints told) followed by the
 * same bytes of the row (`StoredPlacement`). The log database's decoder
 * (`readingPlacements`) turns that back into the whole event for every
 * reader: the replay, the statement, the webhook dispatcher.
 *
 * An event is kept this way only when each of those fields is the row's
 * (`storedPlacement`), so the whole event read back is the one appended.
 * Every other event, and every event of a store written before this form
 * existed (store format 1), is stored and read whole. WAL entries (the
 * commit log, the replicated log) always carry the whole event and the row
 * as records: the row's bytes are of this store's shared msgpack structures
 * and never leave it.
 */
import type { LogEvent, OrderRecord } from '../ledger/index.js';

type PlacedEvent = Extract<LogEvent, { type: 'order.placed' }>;

/**
 * Every field of order.placed, and where its value is kept: `row` for the
 * fields read back from the order's row, `event` for the ones stored with
 * it. Adding a field to order.placed fails to compile here until it is put
 * in one of the two.
 */
const PLACED_FIELDS = {
  type: 'event',
  atMs: 'event',
  account: 'row',
  order: 'row',
  number: 'row',
  service: 'row',
  quantity: 'row',
  rate: 'row',
  charge: 'row',
  debit: 'row',
  balance: 'event',
  channel: 'row',
  idempotencyKey: 'event',
  orderType: 'row',
  extras: 'row',
  subscription: 'row',
  post: 'row',
  webhooks: 'event',
} as const satisfies Record<keyof PlacedEvent, 'row' | 'event'>;

/** An order.placed event as the log keeps it: what only the event holds, and the row's bytes as the orders table holds them. */
export interface StoredPlacement {
  type: 'order.placed';
  atMs: number;
  balance: number;
  idempotencyKey: string | null;
  row: Uint8Array;
  webhooks?: number[];
}

/** Whether every field the event shares with `row` (PLACED_FIELDS) holds the row's value: then the row can stand for them. */
export function sharesRow(event: PlacedEvent, row: OrderRecord): boolean {
  return (
    event.account === row.account &&
    event.order === row.id &&
    event.number === row.number &&
    event.service === row.service &&
    event.quantity === row.quantity &&
    event.rate === row.rate &&
    event.charge === row.charge &&
    event.debit === row.debit &&
    event.channel === row.channel &&
    event.orderType === row.type &&
    event.extras === row.extras &&
    event.subscription === row.subscription &&
    event.post === row.post
  );
}

/** The stored form of a placement whose row (`sharesRow`) was encoded to `rowBytes`. Built field by field: one shape per form. */
export function storedPlacement(event: PlacedEvent, rowBytes: Uint8Array): StoredPlacement {
  const stored: StoredPlacement = { type: 'order.placed', atMs: event.atMs, balance: event.balance, idempotencyKey: event.idempotencyKey, row: rowBytes };
  if (event.webhooks !== undefined) stored.webhooks = event.webhooks;
  return stored;
}

function isStoredPlacement(value: unknown): value is StoredPlacement {
  return value !== null && typeof value === 'object' && (value as { type?: unknown }).type === 'order.placed' && (value as { row?: unknown }).row instanceof Uint8Array;
}

/**
 * The whole order.placed event of a stored placement (any other value as
 * it is). A row that cannot be decoded leaves the stored form as it is,
 * so the replay reports the event's missing fields instead of failing to
 * read the log.
 */
export function wholePlacement(value: unknown, decodeRow: (bytes: Uint8Array) => unknown): unknown {
  if (!isStoredPlacement(value)) return value;
  let row: OrderRecord;
  try {
    row = decodeRow(value.row) as OrderRecord;
    // Stryker disable next-line BlockStatement: equivalent: emptied, it leaves row undefined, and the next line returns the stored form for that too
  } catch {
    return value;
  }
  if (row === null || typeof row !== 'object') return value;
  const event: PlacedEvent = {
    type: 'order.placed',
    atMs: value.atMs,
    account: row.account,
    order: row.id,
    number: row.number,
    service: row.service,
    quantity: row.quantity,
    rate: row.rate,
    charge: row.charge,
    debit: row.debit,
    balance: value.balance,
    channel: row.channel,
    idempotencyKey: value.idempotencyKey,
  };
  if (row.type !== undefined) event.orderType = row.type;
  if (row.extras !== undefined) event.extras = row.extras;
  if (row.subscription !== undefined) event.subscription = row.subscription;
  if (row.post !== undefined) event.post = row.post;
  if (value.webhooks !== undefined) event.webhooks = value.webhooks;
  return event;
}

/** What the log's decoder is made from: lmdb-js's msgpack encoder class (its `decode` reads one value). */
export type RecordCoder = new (options: object) => { decode(source: Uint8Array, options?: unknown): unknown };

/**
 * The log database's encoder class: lmdb-js's own (`Base`), whose every
 * decoded value goes through `wholePlacement`, so every read of the log
 * sees whole order.placed events.
 */
export function readingPlacements(Base: RecordCoder, decodeRow: (bytes: Uint8Array) => unknown): RecordCoder {
  return class PlacementReading extends Base {
    override decode(source: Uint8Array, options?: unknown): unknown {
      return wholePlacement(super.decode(source, options), decodeRow);
    }
  };
}

/** The fields of order.placed that a stored placement reads back from its row. */
export const ROW_FIELDS = Object.keys(PLACED_FIELDS).filter((f) => PLACED_FIELDS[f as keyof typeof PLACED_FIELDS] === 'row');
