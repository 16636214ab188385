import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/wal/index.js';
import { spawnServer } from '../helpers/server-process.js';

/**
 * A broken invariant stops the real process (dist/src/main.js). Between two
 * runs the test breaks one on purpose in the stopped server's LMDB files: an
 * account's wallet row gets a negative balance, which no command can
 * produce. The next run serves the other accounts as usual; the first
 * request that loads that wallet meets the violation, and the process logs
 * it (one fatal line with its message and stack, after the access lines
 * of the requests answered before it) and exits 1 without answering that
 * request, never a 500 that carries on. With the row put
 * back as it was, a restart holds exactly the durable state: every
 * acknowledged order and balance, and a ledger that verifies.
 */
describe('a broken invariant stops the real process', () => {
  it('logs the violation, exits 1 without answering, and a restart has every acknowledged order and balance', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-invariant-'));
    const token = 'invariant-token';
    const env = { WAL_PREALLOCATE_MB: '1' };
    const call = async (url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> => {
      const r = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: r.status, body: await r.json() };
    };
    const admin = (base: string, method: string, path: string, body?: unknown) => call(`${base}${path}`, method, { authorization: `Bearer ${token}` }, body);
    type Customer = { id: number; headers: Record<string, string> };
    const api = (base: string, method: string, path: string, who: Customer, body?: unknown) => call(`${base}${path}`, method, who.headers, body);
    try {
      let server = await spawnServer(dir, token, env);
      const service = (await admin(server.adminUrl, 'POST', '/admin/v1/services', { platform: 'p', name: 'n', rate: '0.01', min: 1, max: 100 })).body.service.id;
      const customer = async (name: string): Promise<Customer> => {
        const created = (await admin(server.adminUrl, 'POST', '/admin/v1/accounts', { name })).body;
        expect((await admin(server.adminUrl, 'POST', `/admin/v1/accounts/${created.account.id}/credits`, { amount: '10', reason: 'test' })).status).toBe(200);
        return { id: created.account.id, headers: { 'x-api-key': created.api_key, 'x-api-secret': created.api_secret } };
      };
      const broken = await customer('broken');
      const healthy = await customer('healthy');
      const acked: { id: string; who: Customer; quantity: number }[] = [];
      const place = async (who: Customer, quantity: number): Promise<void> => {
        const placed = await api(server.url, 'POST', '/api/v1/order', who, { service, target: 'https://example.com/p', quantity });
        expect(placed.status).toBe(201);
        acked.push({ id: placed.body.order, who, quantity });
      };
      await place(broken, 7);
      await place(healthy, 5);
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);

      // The invariant broken on purpose, in the files of the stopped server.
      const store = openStore(dir);
      const committed = store.tables.wallets.get(broken.id) as { credits: number };
      expect(committed.credits).toBe(10_000_000 - 70_000);
      await store.tables.wallets.put(broken.id, { ...committed, credits: -1 });
      await store.close();

      server = await spawnServer(dir, token, env);
      await place(healthy, 3);
      await place(healthy, 2);
      const answer = await api(server.url, 'GET', '/api/v1/balance', broken).then(
        (reply) => `answered ${reply.status}`,
        () => 'no answer',
      );
      expect(answer).toBe('no answer');
      expect((await server.exited).code).toBe(1);
      const fatal = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{"level"'))
        .map((line) => JSON.parse(line) as { level: number; msg: string; err?: { type: string; message: string; stack: string } })
        .filter((line) => line.level >= 50);
      expect(fatal).toHaveLength(1);
      expect(fatal[0]).toMatchObject({ level: 60, msg: 'an invariant is broken; stopping so that a restart recovers exactly the durable state' });
      expect(fatal[0]!.err!.type).toBe('InvariantError');
      expect(fatal[0]!.err!.message).toMatch(new RegExp(`^invariant: wallet credits must be a non-negative safe integer; got \\{"id":${broken.id},"credits":-1,`));
      expect(fatal[0]!.err!.stack).toContain('checkWallet');
      // The access lines of the two orders answered just before were still in the log's buffer: the fatal line writes them first.
      const logged = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{"level"'))
        .map((line) => JSON.parse(line) as { level: number; msg: string; route?: string; status?: number });
      const fatalAt = logged.findIndex((line) => line.level === 60);
      expect(logged.slice(0, fatalAt).filter((line) => line.msg === 'request' && line.route === '/api/v1/order' && line.status === 201)).toHaveLength(2);
      expect(logged.filter((line) => line.msg === 'request' && line.route === '/api/v1/balance')).toHaveLength(0);

      // The operator puts the row back as it was committed; the restart has exactly the durable state.
      const repair = openStore(dir);
      await repair.tables.wallets.put(broken.id, committed);
      await repair.close();
      server = await spawnServer(dir, token, env);
      expect(acked).toHaveLength(4);
      for (const { id, who, quantity } of acked) {
        const status = await api(server.url, 'GET', `/api/v1/status?order=${id}`, who);
        expect(status.body, id).toMatchObject({ ok: true, order: id, status: 'pending', quantity, charge: quantity / 100 });
      }
      expect((await api(server.url, 'GET', '/api/v1/balance', broken)).body.credits).toBe(9.93);
      expect((await api(server.url, 'GET', '/api/v1/balance', healthy)).body.credits).toBe(9.9);
      const verify = await admin(server.adminUrl, 'GET', '/admin/v1/verify');
      expect(verify.body.report.ok, JSON.stringify(verify.body.report)).toBe(true);
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
