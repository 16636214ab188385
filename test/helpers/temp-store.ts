/**
 * LMDB stores in temporary directories for the storage tests: `open` makes
 * (or reopens) one, and `cleanup` (an afterEach hook) closes every store
 * still open and removes the directories.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
