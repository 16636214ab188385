import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/platform/log.js';
import { order, roundTrips, startTestServer, tempDir, withServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * A commit that fails stops the process with one clear log line, the
 * request in that batch is never answered, and a restart recovers exactly
 * the durable state. Here the failure is injected in-process: the orders
 * table can no longer store a record. (A real failing disk under load, on
 * LMDB's write thread, is test/crash/disk-full.test.ts.)
 */
describe('fail-stop on a failed commit (injected: a record cannot be stored)', () => {
  it('logs one fatal line, exits 1, never answers the failed batch, and a restart has only durable state', async () => {
    const dir = tempDir();
    const lines: string[] = [];
    const log = createLogger('info', new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }) as never);
    const exits: number[] = [];
    const t = await startTestServer({ dir, server: { log, onFatal: undefined, exit: (code) => void exits.push(code) } });
    const service = await t.createService({ rate: '1', min: 1, max: 10 });
    const creds = await t.createAccount('victim', '10');
    expect((await t.api('POST', '/api/v1/order', creds, order(service, 1))).status).toBe(201);

    // From now on the orders table refuses to store a record.
    const orders = t.server.context.store.tables.orders as unknown as { encoder: { encode(value: unknown): Uint8Array } };
    orders.encoder.encode = () => {
      throw new Error('the orders table cannot store this record (injected)');
    };
    let answered = false;
    const pending = t.api('POST', '/api/v1/order', creds, order(service, 2)).then(
      () => (answered = true),
      () => undefined,
    );
    await waitFor('the failed commit to stop the process', () => exits.length > 0);
    expect(exits).toEqual([1]);
    const fatal = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level === 60);
    expect(fatal).toHaveLength(1);
    expect(fatal[0]!.msg).toContain('a commit failed; stopping');
    await roundTrips(t);
    expect(answered).toBe(false);
    // Later requests are not acknowledged either.
    const after = t.api('GET', '/api/v1/balance', creds).then(
      () => (answered = true),
      () => undefined,
    );
    await roundTrips(t);
    expect(answered).toBe(false);

    // "Restart": a new server on the same directory sees only the durable state.
    t.server.context.store.root.close();
    await withServer({ dir }, async (restarted) => {
      const balance = await restarted.api('GET', '/api/v1/balance', creds);
      expect(balance.body.credits).toBe(9);
      expect((await restarted.admin('GET', '/admin/v1/verify')).body.report.ok).toBe(true);
      expect((await restarted.admin('GET', '/admin/v1/orders?status=pending')).body.orders).toHaveLength(1);
    });
    void pending;
    void after;
  });
});
