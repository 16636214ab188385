/**
 * The LMDB environment: one file, one write transaction per group commit,
 * holding the event log and the tables it changes.
 *
 * Durability settings are explicit. `overlappingSync: false` makes LMDB
 * fsync inside the commit, so a write's promise resolves only once the data
 * is on disk; the other lmdb-js mode (overlapping sync, awaiting `flushed`)
 * is selectable for measurement with `syncMode: 'overlapping'`.
 * The lmdb-js options that trade durability for speed (skipping the sync,
 * writable memory maps, asynchronous map flushes) are never set; they are
 * off by default.
 *
 * Opening checks the store format (store-format.ts): a fresh store gets this
 * build's, a store of the format before it is upgraded, and a store of
 * another is refused before anything reads it.
 */
import { statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { LogEvent } from '../ledger/index.js';
import { TABLE_NAMES, type TableName } from './entry.js';
import { lastLogSeq } from './log-times.js';
import { checkStoreFormat } from './store-format.js';
import { readingPlacements, type RecordCoder } from './placement-record.js';
import { LMDB_FILES, makeFilesPrivate } from '../platform/index.js';

/**
 * 'commit': LMDB syncs inside each commit and replies wait for it.
 * 'overlapping': lmdb-js overlapping sync; replies await the flush.
 * 'log': replies wait for the commit log (`commit-log.ts`) and for LMDB's
 * commit (the rows visible to every read); LMDB's flush follows behind,
 * and at start-up LMDB opens at its last flushed transaction
 * (`safeRestore`), the log replaying the rest.
 */
export type SyncMode = 'commit' | 'overlapping' | 'log';

export interface Store {
  /** The LMDB directory (data.mdb and lock.mdb). */
  path: string;
  root: RootDatabase;
  log: Database<LogEvent, number>;
  /**
   * One versioned row (`CHAIN_KEY`) whose version counts the group commits
   * written. Each commit is queued on condition that the version is still
   * the one its predecessor wrote, so no commit can land after one that
   * failed (see group-commit.ts).
   */
  chain: Database<number, string>;
  tables: Record<TableName, Database<any, any>>;
  syncMode: SyncMode;
  /** The key the next log event will get. */
  nextSeq: number;
  close(): Promise<void>;
}

export const STRUCTURES_KEY = Symbol.for('structures');
export const CHAIN_KEY = 'commits';
const RECORD_TABLES: ReadonlySet<TableName> = new Set(['profiles', 'wallets', 'services', 'orders', 'idempotency', 'refills']);

function isDirectory(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

export function openStore(path: string, options: { syncMode?: SyncMode; readOnly?: boolean } = {}): Store {
  const syncMode = options.syncMode ?? 'commit';
  // lmdb-js takes a path whose last part has an extension for a single file
  // (its noSubdir default), and then fails on a directory: an existing
  // directory is opened as a directory environment whatever its name
  // (DATA_DIR=/srv/coa.data).
  const directory = isDirectory(path);
  const root = open({
    path,
    ...(directory ? { noSubdir: false } : {}),
    maxDbs: 32,
    readOnly: options.readOnly ?? false,
    overlappingSync: syncMode !== 'commit',
    separateFlushed: syncMode !== 'commit',
    // After any crash, open at the last transaction LMDB flushed, never at
    // one only committed (its pages may not all be on disk). An lmdb-js
    // option its type declarations leave out.
    ...({ safeRestore: syncMode === 'log' } as object),
    commitDelay: 0,
    eventTurnBatching: true,
    compression: false,
    cache: false,
  });
  if (!(options.readOnly ?? false)) {
    // A path with an extension is a single-file environment (lmdb-js's
    // noSubdir default): the file and its `-lock` twin.
    if (isDirectory(path)) makeFilesPrivate(path, LMDB_FILES);
    else makeFilesPrivate(dirname(path), [basename(path), `${basename(path)}-lock`]);
  }
  // Tables of records keep their msgpack record structures in the table
  // itself (lmdb-js shared structures): records are encoded about twice as
  // fast and smaller, and the structures entry is invisible to reads.
  const structured = { sharedStructuresKey: STRUCTURES_KEY };
  const tables = {} as Record<TableName, Database<any, any>>;
  for (const name of TABLE_NAMES) tables[name] = root.openDB({ name, cache: false, ...(RECORD_TABLES.has(name) ? structured : {}) });
  // The log reads a placement stored with its order row's bytes as the
  // whole order.placed event (placement-record.ts): its decoder is lmdb-js's
  // own msgpack class, given the orders table's decoder for those bytes.
  // (A store opened read-only lacks the tables it never had: the format check refuses it below.)
  const orders = tables.orders as unknown as { encoder: InstanceType<RecordCoder> & { constructor: RecordCoder } } | undefined;
  // lmdb-js takes `encoder` per database; its declarations list it for the root only.
  const reading = orders === undefined ? {} : { encoder: { Encoder: readingPlacements(orders.encoder.constructor, (bytes) => orders.encoder.decode(bytes)) } };
  const log = root.openDB<LogEvent, number>({ name: 'log', cache: false, ...structured, ...(reading as object) });
  const chain = root.openDB<number, string>({ name: 'chain', cache: false, useVersions: true });
  try {
    checkStoreFormat({ path, log, chain, tables }, { readOnly: options.readOnly ?? false });
  } catch (error) {
    void root.close();
    throw error;
  }
  const nextSeq = lastLogSeq(log) + 1;
  return {
    path,
    root,
    log,
    chain,
    tables,
    syncMode,
    nextSeq,
    close: () => root.close(),
  };
}

/** The highest order number in the `numbers` table, 0 when there is none (number keys sort numerically). */
export function lastOrderNumber(store: Pick<Store, 'tables'>): number {
  for (const key of store.tables.numbers.getKeys({ reverse: true, limit: 1 })) return key as number;
  return 0;
}

/** The highest refill id in the `refills` table, 0 when there is none (refill ids are integer keys). */
export function lastRefillId(store: Pick<Store, 'tables'>): number {
  for (const key of store.tables.refills.getKeys({ reverse: true, limit: 1 })) return Number(key);
  return 0;
}
