/**
 * Opening the LMDB store: the durability options each sync mode sets, a
 * directory or a single file as the path says, files only the owner can
 * read, record tables keeping their msgpack structures, the key the next
 * event gets, and the highest order number and refill id.
 */
import { chmodSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/ledger/index.js';
import { CHAIN_KEY, lastOrderNumber, lastRefillId, openStore, StoreFormatError, STRUCTURES_KEY, TABLE_NAMES, type Store, type SyncMode } from '../../src/wal/index.js';
import { tempDir } from '../helpers/server.js';
import { writeMetaWithLmdb } from '../helpers/temp-store.js';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = tempDir();
  dirs.push(dir);
  return dir;
}

function opened(path: string, options: { syncMode?: SyncMode; readOnly?: boolean } = {}): Store {
  const store = openStore(path, options);
  stores.push(store);
  return store;
}

/** The lmdb-js environment options a store was opened with, as its root reports them. */
function rootOptions(store: Store): Record<string, unknown> {
  const { overlappingSync, separateFlushed, safeRestore, eventTurnBatching, compression, cache, readOnly, noSubdir } = store.root as unknown as Record<string, unknown>;
  return { overlappingSync, separateFlushed, safeRestore, eventTurnBatching, compression, cache, readOnly, noSubdir };
}

function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

const event = (atMs: number): LogEvent => ({ type: 'credits.adjusted', atMs, account: 1, amount: 1, reason: 'test', balance: atMs });

describe('openStore', () => {
  it('syncs inside each commit by default: no overlapping sync, no separate flush, no restore to the last flush', () => {
    const store = opened(freshDir());
    expect(store.syncMode).toBe('commit');
    expect(rootOptions(store)).toStrictEqual({ overlappingSync: false, separateFlushed: false, safeRestore: false, eventTurnBatching: true, compression: false, cache: false, readOnly: false, noSubdir: false });
    expect(opened(freshDir(), { syncMode: 'commit' }).syncMode).toBe('commit');
  });

  it('overlaps the sync in sync mode overlapping, and also opens at the last flushed transaction in sync mode log', () => {
    const overlapping = opened(freshDir(), { syncMode: 'overlapping' });
    expect(overlapping.syncMode).toBe('overlapping');
    expect(rootOptions(overlapping)).toMatchObject({ overlappingSync: true, separateFlushed: true, safeRestore: false });
    const log = opened(freshDir(), { syncMode: 'log' });
    expect(log.syncMode).toBe('log');
    expect(rootOptions(log)).toMatchObject({ overlappingSync: true, separateFlushed: true, safeRestore: true });
  });

  it('opens a directory whose name has an extension as a directory, with its two files made private', () => {
    const dir = join(freshDir(), 'coa.data');
    mkdirSync(dir);
    const store = opened(dir);
    expect(rootOptions(store).noSubdir).toBe(false);
    expect(modeOf(join(dir, 'data.mdb'))).toBe(0o600);
    expect(modeOf(join(dir, 'lock.mdb'))).toBe(0o600);
  });

  it('opens a path with an extension that does not exist yet as one file and its lock, both made private', () => {
    const path = join(freshDir(), 'store.mdb');
    opened(path);
    expect(statSync(path).isFile()).toBe(true);
    expect(modeOf(path)).toBe(0o600);
    expect(modeOf(`${path}-lock`)).toBe(0o600);
  });

  it('opens a path without an extension that does not exist yet as a directory', () => {
    const path = join(freshDir(), 'data');
    opened(path);
    expect(modeOf(join(path, 'data.mdb'))).toBe(0o600);
  });

  it('opened read-only, refuses writes and leaves the files’ modes as they are', async () => {
    const dir = freshDir();
    await opened(dir).close();
    chmodSync(join(dir, 'data.mdb'), 0o644);
    const store = opened(dir, { readOnly: true });
    expect(rootOptions(store).readOnly).toBe(true);
    expect(modeOf(join(dir, 'data.mdb'))).toBe(0o644);
    expect(() => store.tables.meta.putSync('x', 1)).toThrow();
  });

  it('opened read-only, refuses a store another build left without this build’s tables, with the format sentence', async () => {
    const dir = freshDir();
    await writeMetaWithLmdb(dir, { storeFormat: 0 });
    expect(() => opened(dir, { readOnly: true })).toThrow(StoreFormatError);
    expect(() => opened(dir, { readOnly: true })).toThrow(
      new StoreFormatError(`The data directory ${dir} holds store format 0; this build reads store format 2. Restore a snapshot taken by a build of store format 2, or start with an empty DATA_DIR.`),
    );
  });

  it('keeps msgpack structures in the record tables only', () => {
    const store = opened(freshDir());
    const structured = ['profiles', 'wallets', 'services', 'orders', 'idempotency', 'refills'];
    for (const name of TABLE_NAMES) {
      store.tables[name].putSync('row', { a: 1, b: 2 });
      expect([name, store.tables[name].get(Symbol.for('structures')) !== undefined]).toEqual([name, structured.includes(name)]);
    }
    store.log.putSync(1, event(1));
    expect((store.log as unknown as { get(key: symbol): unknown }).get(Symbol.for('structures'))).toBeDefined();
    expect(STRUCTURES_KEY).toBe(Symbol.for('structures'));
  });

  it('keeps the log, the commit chain and each table in a database of its own name, as every build reads them', async () => {
    const dir = freshDir();
    const store = opened(dir);
    store.log.putSync(1, event(1));
    store.chain.putSync(CHAIN_KEY, 1, 7);
    for (const name of TABLE_NAMES) store.tables[name].putSync('row', name);
    await store.close();
    const root = open({ path: dir, maxDbs: 32 });
    try {
      expect(root.openDB({ name: 'log', sharedStructuresKey: Symbol.for('structures') }).get(1)).toStrictEqual(event(1));
      expect(root.openDB({ name: 'chain', useVersions: true }).getEntry('commits')).toMatchObject({ value: 1, version: 7 });
      for (const name of TABLE_NAMES) expect(root.openDB({ name }).get('row')).toBe(name);
    } finally {
      await root.close();
    }
  });

  it('caches no rows in any table, and keeps a version on the commit chain', () => {
    const store = opened(freshDir());
    for (const name of TABLE_NAMES) expect([name, (store.tables[name] as unknown as { cache: unknown }).cache]).toEqual([name, false]);
    expect((store.log as unknown as { cache: unknown }).cache).toBe(false);
    expect((store.chain as unknown as { cache: unknown; useVersions: unknown })).toMatchObject({ cache: false, useVersions: true });
  });

  it('gives the next event the key after the log’s last, and key 1 in an empty log', async () => {
    const dir = freshDir();
    const store = opened(dir);
    expect(store.nextSeq).toBe(1);
    for (const seq of [1, 2, 3]) store.log.putSync(seq, event(seq));
    await store.close();
    expect(opened(dir).nextSeq).toBe(4);
  });

  it('closes the environment: nothing can be read after', async () => {
    const store = opened(freshDir());
    await store.close();
    expect(() => store.tables.meta.get('storeFormat')).toThrow();
  });
});

describe('lastOrderNumber and lastRefillId', () => {
  it('are 0 in an empty store, and the highest key in numeric order otherwise', () => {
    const store = opened(freshDir());
    expect(lastOrderNumber(store)).toBe(0);
    expect(lastRefillId(store)).toBe(0);
    for (const n of [2, 10, 9]) {
      store.tables.numbers.putSync(n, `order-${n}`);
      store.tables.refills.putSync(n + 1, { id: n + 1 });
    }
    expect(lastOrderNumber(store)).toBe(10);
    expect(lastRefillId(store)).toBe(11);
  });
});
