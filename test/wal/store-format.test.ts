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
import { openStore, STORE_FORMAT, StoreFormatError } from '../../src/wal/index.js';
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
