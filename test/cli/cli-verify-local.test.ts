/**
 * `credit-order-api verify --data-dir DIR`: the CLI checks a store itself,
 * with the server stopped, on a data directory or a snapshot, using the
 * same replay as the server, and answers as the server would.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { order, useScratchDirs, useServer } from '../helpers/server.js';
import { CREDIT, Ledger } from '../helpers/ledger.js';
import { writeMetaWithLmdb } from '../helpers/temp-store.js';

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  // No ADMIN_URL, no token, nothing listening: a local verify needs none of them.
  const code = await runCli(argv, { stdout: (s) => (out += s), stderr: (s) => (err += s), env: { DATA_DIR: '/nonexistent' } });
  return { code, out, err };
}

describe('verify --data-dir on a stopped server', () => {
  const scratchDir = useScratchDirs();
  let snapshotDir: string;
  const t = useServer({}, async (t) => {
    const service = await t.createService({ rate: '0.1', min: 1, max: 1000 });
    const alice = await t.createAccount('alice', '100');
    for (let i = 1; i <= 12; i++) expect((await t.api('POST', '/api/v1/order', alice, order(service, i))).status).toBe(201);
    snapshotDir = join(scratchDir(), 'snapshot');
    expect((await t.admin('POST', '/admin/v1/snapshot', { out: snapshotDir })).status).toBe(200);
    expect((await t.api('POST', '/api/v1/order', alice, order(service, 100))).status).toBe(201);
    await t.server.close();
  });

  it('verifies the data directory and prints its counts and exact totals', async () => {
    const r = await cli('verify', '--data-dir', t.dir);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Ledger verified: every invariant holds\.\n/);
    expect(r.out).toMatch(/^orders\s+13$/m);
    // 1 + … + 12 = 78 units, then 100, at 0.1 credits each.
    expect(r.out).toMatch(/^debited\s+17\.8$/m);
    expect(r.out).toMatch(/^credited\s+100$/m);
  });

  it('verifies a snapshot, the moment it was taken (--json prints the report as the server would)', async () => {
    const r = await cli('verify', '--data-dir', snapshotDir, '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ ok: true, report: { ok: true, first_broken: null, counts: { orders: 12 }, totals: { debited: 7.8 } } });
  });

  it('a directory without a store is a plain sentence and exit 1', async () => {
    const empty = scratchDir();
    expect(await cli('verify', '--data-dir', empty)).toEqual({
      code: 1,
      out: '',
      err: `error: there is no store in ${empty} (no data.mdb); give a server's data directory or a snapshot directory.\n`,
    });
  });
});

describe('verify --data-dir on a store of another format', () => {
  const scratchDir = useScratchDirs();
  it('is a plain sentence and exit 1, and the store is not read', async () => {
    const dir = scratchDir();
    await writeMetaWithLmdb(dir, { storeFormat: 3 });
    expect(await cli('verify', '--data-dir', dir)).toEqual({
      code: 1,
      out: '',
      err: `error: The data directory ${dir} holds store format 3; this build reads store format 2. Restore a snapshot taken by a build of store format 2, or start with an empty DATA_DIR.\n`,
    });
  });
});

describe('verify --data-dir on a broken store', () => {
  it('prints the report, names the first broken invariant as LEDGER and exits 1', async () => {
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000).move('o1', 'canceled');
    ledger.last('order.status').refund -= 1;
    ledger.last('order.status').balance -= 1;
    ledger.wallet(1).credits -= 1;
    const { store, dir } = ledger.write();
    await store.close();
    try {
      const r = await cli('verify', '--data-dir', dir);
      expect(r.code).toBe(1);
      expect(r.out).toMatch(/^The ledger is BROKEN\. Counts and totals as replayed:\n/);
      expect(r.err).toBe(
        'error: LEDGER: Order status check failed at seq 4 (account 1, order o1): the move to canceled refunds 0.999999 credits but should refund 1 credits (debit 1 credits).\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
