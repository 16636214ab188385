/**
 * The real server over sync mode 'log': an acknowledged order is readable at
 * once (its reply waited for LMDB's commit as well as the log's sync); a
 * clean stop leaves LMDB synced and removes the commit log; a directory
 * still holding a commit log (a log-mode server that did not stop cleanly)
 * is refused by the other sync modes with a sentence saying what to do.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { COMMIT_LOG_FILES, CommitLog } from '../../src/wal/index.js';
import { order, startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const logFiles = (dir: string): boolean[] => COMMIT_LOG_FILES.map((name) => existsSync(join(dir, name)));

describe("sync mode 'log' on the real server", () => {
  it('serves reads of what it acknowledged at once, and a clean stop removes the commit log', async () => {
    t = await startTestServer({ config: { syncMode: 'log' } });
    expect(logFiles(t.dir)).toEqual([true, true]);
    const service = await t.createService({ rate: '1', min: 1, max: 100 });
    const creds = await t.createAccount('log-mode', '100');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const placed = await t.api('POST', '/api/v1/order', creds, order(service, 10));
      expect(placed.status, placed.text).toBe(201);
      ids.push(placed.body.order);
      // Read straight after the reply: the order is already in LMDB.
      const status = await t.api('GET', `/api/v1/status?order=${placed.body.order}`, creds);
      expect(status.status, status.text).toBe(200);
    }
    const balance = await t.api('GET', '/api/v1/balance', creds);
    expect(balance.body.credits).toBe(50);

    await t.restart();
    expect(logFiles(t.dir)).toEqual([true, true]);
    for (const id of ids) expect((await t.api('GET', `/api/v1/status?order=${id}`, creds)).status).toBe(200);
    await t.server.close();
    expect(logFiles(t.dir)).toEqual([false, false]);
    // Without a commit log the directory opens in any mode.
    await t.restart({ syncMode: 'commit' });
    expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(50);
  });

  it('the other sync modes refuse a directory that still holds a commit log', async () => {
    t = await startTestServer();
    await t.server.close();
    // What a log-mode server leaves when it is killed.
    new CommitLog(t.dir, { fileBytes: 64 * 1024, whenApplied: async () => {} }).close();
    await expect(t.restart({ syncMode: 'commit' })).rejects.toThrow(
      `${t.dir} holds a commit log: it was last run with WAL_SYNC_MODE=log and did not stop cleanly. Start it with WAL_SYNC_MODE=log`,
    );
    await t.restart({ syncMode: 'log' });
    await t.server.close();
    await t.restart({ syncMode: 'commit' });
  });
});
