/**
 * The two stores the ledger replay reads (`LedgerSource` in src/ledger):
 * an LMDB store through one read transaction, and the simulator's in-memory
 * durable image. Both hand over rows as stored; the replay checks them.
 */
import type { Transaction } from 'lmdb';
import { OrderIds } from '../ids/index.js';
import { ORDER_STATUSES, type LedgerSource, type SourceRow, type StatusCounts } from '../ledger/index.js';
import type { DurableImage } from './memory-wal.js';
import { countIndex, ORDER_COUNTS_KEY } from './order-counts.js';
import type { Store } from './store.js';

/**
 * Order storage keys are ASCII (hex, or the id itself in stores written by
 * hand), for which comparing UTF-16 code units is LMDB's byte order.
 */
export function compareOrderKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * An LMDB store at the moment of `txn`: everything read through it is one
 * commit, even while the server keeps writing.
 */
export function storeLedgerSource(store: Store, txn: Transaction): LedgerSource {
  const secret = store.tables.meta.get('orderIdSecret', { transaction: txn }) as Uint8Array | undefined;
  // Stores without the secret (written by hand in tests) keep orders under their ids, as the server does for any id it cannot decrypt.
  const ids = secret === undefined || secret.length !== 16 ? null : new OrderIds(Buffer.from(secret));
  const range = (table: keyof Store['tables']): Iterable<SourceRow> => store.tables[table].getRange({ transaction: txn });
  return {
    events: () => store.log.getRange({ transaction: txn }),
    wallets: () => range('wallets'),
    orderRows: () => range('orders') as Iterable<SourceRow<string>>,
    orderKey: (id) => ids?.storageKey(id) ?? id,
    orderRow: (key) => store.tables.orders.get(key, { transaction: txn }),
    compareOrderKeys,
    idempotency: () => range('idempotency'),
    leases: () => range('leases'),
    indexCounts: () => countIndex(store, txn),
    countsRow: () => store.tables.meta.get(ORDER_COUNTS_KEY, { transaction: txn }) as unknown,
    subscriptions: () => range('subscriptions'),
  };
}

/**
 * The simulator's durable image (`MemoryWal`), whose orders are kept under
 * their public ids and whose table keys are `tableKeyString` (JSON) forms.
 */
export function imageLedgerSource(image: DurableImage): LedgerSource {
  const rows = (table: keyof DurableImage['tables']): SourceRow[] =>
    [...image.tables[table]].map(([key, value]) => ({ key: JSON.parse(key) as unknown, value }));
  return {
    events: () => image.events.map((value, i) => ({ key: i + 1, value })),
    wallets: () => rows('wallets'),
    orderRows: () => (rows('orders') as SourceRow<string>[]).sort((a, b) => compareOrderKeys(a.key, b.key)),
    orderKey: (id) => id,
    orderRow: (key) => image.tables.orders.get(JSON.stringify(key)),
    compareOrderKeys,
    idempotency: () => rows('idempotency'),
    leases: () => rows('leases'),
    indexCounts: () => {
      const counts = Object.fromEntries(ORDER_STATUSES.map((s) => [s, 0])) as StatusCounts;
      for (const key of image.tables.orderIndex.keys()) counts[(JSON.parse(key) as [keyof StatusCounts])[0]]++;
      return counts;
    },
    countsRow: () => image.tables.meta.get(JSON.stringify(ORDER_COUNTS_KEY)),
    subscriptions: () => rows('subscriptions'),
  };
}
