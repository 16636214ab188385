/**
 * The store format: one number in `meta` that says how the data in a
 * directory is laid out, so that a build never reads (or writes into) a
 * store it does not understand. A fresh store gets this build's format when
 * it is first opened for writing; a store of a format this build reads as
 * it is (UPGRADABLE_FORMATS) is stamped with this build's when first opened
 * for writing, and read as it is when opened read-only; a store with another
 * format, or with data and no format at all, is refused with a sentence
 * that says what was found and what to do. `openStore` runs the check, so the server, a snapshot
 * restored by starting a server on it, `verify --data-dir` and every tool
 * that opens a store go through it.
 */
import type { Database } from 'lmdb';
import type { TableName } from './entry.js';

/**
 * The format this build reads and writes. Raise it with any change that
 * makes two builds read the same store differently: a table's key or value layout, an event
 * field that replay needs, the meaning of a `meta` key. A new table, or a
 * new optional field that older stores simply lack, does not need it.
 */
export const STORE_FORMAT = 2;

/**
 * Earlier formats whose stores this build reads as they are, and upgrades
 * by stamping STORE_FORMAT on them. Format 1 stores every order.placed
 * event whole; format 2 may store one with its order row's bytes
 * (placement-record.ts), which a build of format 1 cannot read, and reads
 * whole events too.
 */
const UPGRADABLE_FORMATS: readonly unknown[] = [1];

/** Key (`meta`) of the store format. */
export const STORE_FORMAT_KEY = 'storeFormat';

/** A data directory of a format this build does not read. */
export class StoreFormatError extends Error {
  override name = 'StoreFormatError';
}

/** What the check needs of an opened store (store.ts builds the rest). */
export interface FormatCheckedStore {
  path: string;
  log: Database<unknown, number>;
  chain: Database<unknown, string>;
  tables: Record<TableName, Database<any, any>>;
}

/**
 * Stamps a fresh store, or one of an upgradable format, with STORE_FORMAT
 * (unless it is opened read-only), and refuses one that holds another
 * format or data without a format.
 */
export function checkStoreFormat(store: FormatCheckedStore, options: { readOnly: boolean }): void {
  const found = store.tables.meta.get(STORE_FORMAT_KEY) as unknown;
  if (found === STORE_FORMAT) return;
  if (UPGRADABLE_FORMATS.includes(found)) {
    if (!options.readOnly) store.tables.meta.putSync(STORE_FORMAT_KEY, STORE_FORMAT);
    return;
  }
  if (found === undefined && isEmpty(store)) {
    if (!options.readOnly) store.tables.meta.putSync(STORE_FORMAT_KEY, STORE_FORMAT);
    return;
  }
  throw new StoreFormatError(refusal(store.path, found));
}

/** The sentence a refused directory gets: what it holds, what this build reads, and what to do. */
function refusal(path: string, found: unknown): string {
  const what = found === undefined ? 'data without a store format' : `store format ${String(found)}`;
  return (
    `The data directory ${path} holds ${what}; this build reads store format ${STORE_FORMAT}. ` +
    `Restore a snapshot taken by a build of store format ${STORE_FORMAT}, or start with an empty DATA_DIR.`
  );
}

/** No event in the log and no row in any table: nothing has been written yet. */
function isEmpty(store: FormatCheckedStore): boolean {
  const databases: Database<unknown, any>[] = [store.log, store.chain, ...Object.values(store.tables)];
  // Stryker disable next-line ObjectLiteral: equivalent: the loop returns at the first key with or without the limit, which only spares LMDB reading ahead
  for (const db of databases) for (const _ of db.getKeys({ limit: 1 })) return false;
  return true;
}
