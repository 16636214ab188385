/**
 * LMDB stores in temporary directories for the storage tests: `open` makes
 * (or reopens) one, and `cleanup` (an afterEach hook) closes every store
 * still open and removes the directories; `writeMetaWithLmdb` leaves a
 * store as another build would have.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { openStore, type Store } from '../../src/wal/index.js';

export function tempStores(prefix: string): { open(dir?: string): { store: Store; dir: string }; cleanup(): Promise<void> } {
  const dirs: string[] = [];
  const stores: Store[] = [];
  return {
    open(dir) {
      const d = dir ?? mkdtempSync(join(tmpdir(), `${prefix}-`));
      if (dir === undefined) dirs.push(d);
      const store = openStore(d);
      stores.push(store);
      return { store, dir: d };
    },
    async cleanup() {
      // A store a test closed itself rejects a second close: ignored.
      for (const s of stores.splice(0)) await s.close().catch(() => {});
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** A store as another build left it: `rows` written into `meta` in `dir` by lmdb alone, not through openStore. */
export async function writeMetaWithLmdb(dir: string, rows: Record<string, unknown>): Promise<void> {
  const root = open({ path: dir });
  const meta = root.openDB({ name: 'meta' });
  for (const [key, value] of Object.entries(rows)) await meta.put(key, value);
  await root.close();
}
