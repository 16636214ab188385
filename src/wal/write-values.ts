/**
 * The values of one batch's writes, as the group commit hands them to
 * lmdb-js. A record is encoded before the batch is queued: encoding may
 * throw, and may save a new shared structure in a transaction of its own,
 * and nothing of the batch may be queued by then. A number or a string (an
 * order's account in the status index, its id under its number) can do
 * neither: lmdb-js encodes it as it queues the write, into its encoder's
 * buffer, which spares the view of the bytes that encoding it here
 * allocates. An order's placement is encoded once: its row's bytes go to
 * the orders table and, with what only the event holds, to the log
 * (placement-record.ts).
 */
import { asBinary, type Database } from 'lmdb';
import type { LogEvent, OrderRecord } from '../ledger/index.js';
import type { WalEntry } from './entry.js';
import { sharesRow, storedPlacement } from './placement-record.js';
import type { Store } from './store.js';

type PlacedEvent = Extract<LogEvent, { type: 'order.placed' }>;

export class WriteValues {
  /** Each placement event of the batch whose row stands for its shared fields, with that row. */
  private readonly placements = new Map<PlacedEvent, OrderRecord>();
  /** Each such row's bytes, once its event is encoded. */
  private readonly rowBytes = new Map<OrderRecord, unknown>();

  constructor(
    private readonly store: Pick<Store, 'log' | 'tables'>,
    entries: readonly WalEntry[],
  ) {
    for (const entry of entries) {
      for (const event of entry.events) {
        // Stryker disable next-line ConditionalExpression: equivalent: sharesRow refuses any other event as a row's (none holds a quantity, rate or charge), so looking for its row changes nothing
        if (event.type !== 'order.placed') continue;
        const row = orderRow(entry, event.order);
        if (row !== undefined && sharesRow(event, row)) this.placements.set(event, row);
      }
    }
  }

  /** The value to queue for a put of `value` into `db`. The log's events come before the rows of their entry (eachWrite). */
  of(db: Database<any, any>, value: unknown): unknown {
    if (typeof value === 'number' || typeof value === 'string') return value;
    if (db === this.store.log) {
      const row = this.placements.get(value as PlacedEvent);
      if (row !== undefined) {
        const bytes = encode(this.store.tables.orders, row);
        this.rowBytes.set(row, asBinary(bytes));
        return asBinary(encode(db, storedPlacement(value as PlacedEvent, bytes)));
      }
    } else if (db === this.store.tables.orders) {
      const bytes = this.rowBytes.get(value as OrderRecord);
      if (bytes !== undefined) return bytes;
    }
    return asBinary(encode(db, value));
  }
}

/** The entry's put of the orders row of `id`, if it has one. */
function orderRow(entry: WalEntry, id: string): OrderRecord | undefined {
  for (const put of entry.puts) if (put.table === 'orders' && (put.value as OrderRecord).id === id) return put.value as OrderRecord;
  return undefined;
}

/** A record encoded by its table's own msgpack encoder, with the table's shared structures (every database of the store has one: openStore opens each with lmdb-js's default msgpack encoding). */
function encode(db: Database<any, any>, value: unknown): Uint8Array {
  return (db as unknown as { encoder: { encode(value: unknown): Uint8Array } }).encoder.encode(value);
}
