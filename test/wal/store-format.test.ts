/**
 * The store format in `meta`: a fresh store gets this build's, and a store
 * of another format, or with data and no format, is refused before anything
 * reads it, with a sentence that says what was found and what to do.
 * Stores of another format are written with lmdb directly, as another build
 * would have left them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, STORE_FORMAT, StoreFormatError, TABLE_NAMES } from '../../src/wal/index.js';
import { checkStoreFormat, type FormatCheckedStore } from '../../src/wal/store-format.js';
import { tempStores, writeMetaWithLmdb } from '../helpers/temp-store.js';

const { open: openTemp, cleanup } = tempStores('credit-order-api-format');
const dirs: string[] = [];
afterEach(async () => {
  await cleanup();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A directory whose `meta` holds `rows`, as another build left it. */
async function writtenElsewhere(rows: Record<string, unknown>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-format-'));
  dirs.push(dir);
  await writeMetaWithLmdb(dir, rows);
  return dir;
}

describe('store format', () => {
  it('a fresh store gets this build’s format when opened, and keeps it when opened again', async () => {
    const { store, dir } = openTemp();
    expect(store.tables.meta.get('storeFormat')).toBe(STORE_FORMAT);
    await store.close();
    const again = openStore(dir);
    expect(again.tables.meta.get('storeFormat')).toBe(STORE_FORMAT);
    await again.close();
    const readOnly = openStore(dir, { readOnly: true });
    expect(readOnly.tables.meta.get('storeFormat')).toBe(STORE_FORMAT);
    await readOnly.close();
  });

  it('refuses a store of another format, for writing and for reading, and leaves it as it was', async () => {
    const dir = await writtenElsewhere({ storeFormat: 0, orderIdSecret: 'x' });
    const sentence = `The data directory ${dir} holds store format 0; this build reads store format 2. Restore a snapshot taken by a build of store format 2, or start with an empty DATA_DIR.`;
    expect(() => openStore(dir)).toThrow(StoreFormatError);
    expect(() => openStore(dir)).toThrow(sentence);
    expect(() => openStore(dir, { readOnly: true })).toThrow(sentence);
    const root = open({ path: dir });
    expect(root.openDB({ name: 'meta' }).get('storeFormat')).toBe(0);
    await root.close();
  });

  it('refuses a store that holds data and no format', async () => {
    const dir = await writtenElsewhere({ orderIdSecret: 'x' });
    expect(() => openStore(dir)).toThrow(
      `The data directory ${dir} holds data without a store format; this build reads store format 2. Restore a snapshot taken by a build of store format 2, or start with an empty DATA_DIR.`,
    );
  });
});

/** A stand-in for one LMDB database: its rows, and the puts made to it. */
function table(rows: Record<string, unknown> = {}): { get(key: string): unknown; putSync(key: string, value: unknown): void; getKeys(options: { limit: number }): Iterable<string>; puts: [string, unknown][] } {
  const puts: [string, unknown][] = [];
  return {
    puts,
    get: (key) => rows[key],
    putSync: (key, value) => void puts.push([key, value]),
    getKeys: ({ limit }) => Object.keys(rows).slice(0, limit),
  };
}

/** A store whose `meta` holds `meta` and whose other databases hold `elsewhere`. */
function checked(meta: Record<string, unknown>, elsewhere: { log?: Record<string, unknown>; chain?: Record<string, unknown>; orders?: Record<string, unknown> } = {}) {
  const tables = Object.fromEntries(TABLE_NAMES.map((name) => [name, table(name === 'orders' ? elsewhere.orders : {})]));
  tables['meta'] = table(meta);
  const store = { path: '/data', log: table(elsewhere.log), chain: table(elsewhere.chain), tables } as unknown as FormatCheckedStore;
  return { store, metaPuts: (tables['meta'] as ReturnType<typeof table>).puts };
}

const refusal = (what: string): string =>
  `The data directory /data holds ${what}; this build reads store format 2. Restore a snapshot taken by a build of store format 2, or start with an empty DATA_DIR.`;

describe('store format check', () => {
  it('stamps a fresh store and an upgradable one when opened for writing, and neither when read-only; leaves the current format as it is', () => {
    for (const meta of [{}, { storeFormat: 1 }]) {
      const writing = checked(meta);
      checkStoreFormat(writing.store, { readOnly: false });
      expect(writing.metaPuts).toEqual([['storeFormat', 2]]);
      const reading = checked(meta);
      checkStoreFormat(reading.store, { readOnly: true });
      expect(reading.metaPuts).toEqual([]);
    }
    const current = checked({ storeFormat: 2 });
    checkStoreFormat(current.store, { readOnly: false });
    expect(current.metaPuts).toEqual([]);
  });

  it('refuses data without a format wherever it is: the log, the chain, a table', () => {
    for (const elsewhere of [{ log: { 1: {} } }, { chain: { head: 1 } }, { orders: { o1: {} } }]) {
      const { store, metaPuts } = checked({}, elsewhere);
      expect(() => checkStoreFormat(store, { readOnly: false })).toThrow(new StoreFormatError(refusal('data without a store format')));
      expect(metaPuts).toEqual([]);
    }
  });

  it('refuses a format it does not know, also one that only looks like its own', () => {
    expect(() => checkStoreFormat(checked({ storeFormat: 3 }).store, { readOnly: true })).toThrow(refusal('store format 3'));
    expect(() => checkStoreFormat(checked({ storeFormat: '2' }).store, { readOnly: false })).toThrow(refusal('store format 2'));
    expect(() => checkStoreFormat(checked({ storeFormat: null }).store, { readOnly: false })).toThrow(refusal('store format null'));
  });
});

describe('StoreFormatError', () => {
  it('is named for what it is, so a log line or a crash report shows the kind of refusal', () => {
    expect(new StoreFormatError('x').name).toBe('StoreFormatError');
    expect(String(new StoreFormatError('The data directory holds data.'))).toBe('StoreFormatError: The data directory holds data.');
  });
});
