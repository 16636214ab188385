import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

/** SIGTERM and SIGINT under load: stop accepting, answer what is in flight, sync, exit 0. */
describe('graceful shutdown of the real process', () => {
  let spawnServer: typeof import('../../scripts/crash/server-process.js').spawnServer;
  beforeAll(async () => {
    ({ spawnServer } = await import('../../dist/scripts/crash/server-process.js' as string));
  }, 120_000);

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} under load exits 0 and every acknowledged order survives the restart`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-shutdown-'));
      const token = 'shutdown-token';
      try {
        let server = await spawnServer(dir, token);
        const admin = async (base: string, method: string, path: string, body?: unknown) => {
          const r = await fetch(`${base}${path}`, {
            method,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
          return (await r.json()) as any;
        };
        const service = (await admin(server.adminUrl, 'POST', '/admin/v1/services', { platform: 'p', name: 'n', rate: 0.01, min: 1, max: 100 })).service.id;
        const created = await admin(server.adminUrl, 'POST', '/admin/v1/accounts', { name: 'a' });
        await admin(server.adminUrl, 'POST', `/admin/v1/accounts/${created.account.id}/credits`, { amount: 100000, reason: 'test' });
        const acked: string[] = [];
        const statuses = new Set<number>();
        // Every request sent before the signal, with what became of it: the
        // drain must answer each one (201, or 503 while draining), never drop
        // its connection, as a server that exits at once would.
        const sentBeforeSignal: Promise<string>[] = [];
        let signalled = false;
        let pending = 0;
        let stop = false;
        const url = server.url;
        const worker = async () => {
          while (!stop) {
            pending++;
            const request = fetch(`${url}/api/v1/order`, {
              method: 'POST',
              headers: { 'x-api-key': created.api_key, 'x-api-secret': created.api_secret, 'content-type': 'application/json' },
              body: JSON.stringify({ service, target: 'https://example.com/x', quantity: 5 }),
            }).then(async (r) => {
              statuses.add(r.status);
              const body = (await r.json()) as { order?: string };
              if (r.status === 201) acked.push(body.order!);
              return `answered ${r.status}`;
            });
            const outcome = request.catch((error: unknown) => `no answer: ${(error as Error).message}`).finally(() => pending--);
            if (!signalled) sentBeforeSignal.push(outcome);
            // After the signal a new request may find the listener closed: that ends this worker.
            if ((await outcome).startsWith('no answer')) return;
          }
        };
        const workers = Array.from({ length: 8 }, worker);
        while (acked.length < 50) await new Promise((r) => setTimeout(r, 10));
        const inFlight = pending;
        server.child.kill(signal);
        signalled = true;
        const exit = await server.exited;
        stop = true;
        await Promise.all(workers);
        const outcomes = await Promise.all(sentBeforeSignal);
        expect(inFlight, 'requests were in flight when the signal came').toBeGreaterThan(0);
        expect(outcomes.filter((o) => !o.startsWith('answered'))).toEqual([]);
        expect(exit.code).toBe(0);
        expect(server.output()).toContain('stopped cleanly');
        // Only acknowledged orders or a clean 503 while draining: never a 5xx fault.
        for (const s of statuses) expect([201, 503]).toContain(s);
        server = await spawnServer(dir, token);
        for (const id of acked) {
          const shown = await admin(server.adminUrl, 'GET', `/admin/v1/orders/${id}`);
          expect(shown.ok, id).toBe(true);
        }
        server.child.kill('SIGTERM');
        expect((await server.exited).code).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  }
});
