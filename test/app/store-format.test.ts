/**
 * A data directory of another store format stops the server before it
 * serves: `startServer` rejects, and `npm start` (the built dist/src/main.js,
 * as a real process) exits non-zero with the sentence on stderr. A fresh
 * directory is stamped with this build's format, and a snapshot carries it
 * (test/ops/snapshot.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, STORE_FORMAT } from '../../src/wal/index.js';
import { startTestServer, useScratchDirs, withServer } from '../helpers/server.js';
import { writeMetaWithLmdb } from '../helpers/temp-store.js';

const sentence = (dir: string): string =>
  `The data directory ${dir} holds store format 3; this build reads store format 2. Restore a snapshot taken by a build of store format 2, or start with an empty DATA_DIR.`;

describe('the server and the store format', () => {
  const scratchDir = useScratchDirs();

  /** A directory that a later build left at store format 3. */
  async function formatThree(): Promise<string> {
    const dir = scratchDir();
    await writeMetaWithLmdb(dir, { storeFormat: 3 });
    return dir;
  }

  it('stamps a fresh data directory with this build’s format', async () => {
    await withServer({}, async (t) => {
      expect(t.server.context.store.tables.meta.get('storeFormat')).toBe(STORE_FORMAT);
      await t.server.close();
      const store = openStore(t.dir, { readOnly: true });
      expect(store.tables.meta.get('storeFormat')).toBe(STORE_FORMAT);
      await store.close();
    });
  });

  it('startServer rejects a directory of another format with the sentence', async () => {
    const dir = await formatThree();
    await expect(startTestServer({ dir })).rejects.toThrow(sentence(dir));
  });

  it('npm start exits non-zero with the sentence on stderr', async () => {
    const dir = await formatThree();
    const run = spawnSync(process.execPath, [join(process.cwd(), 'dist/src/main.js')], {
      env: { ...process.env, DATA_DIR: dir, PORT: '0', ADMIN_PORT: '0', ADMIN_TOKEN: 'test-admin-token', SEED_DEMO: 'false', LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(`credit-order-api: ${sentence(dir)}\n`);
  });
});
