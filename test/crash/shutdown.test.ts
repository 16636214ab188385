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
        let stop = false;
        const url = server.url;
        const worker = async () => {
          while (!stop) {
            try {
              const r = await fetch(`${url}/api/v1/order`, {
                method: 'POST',
                headers: { 'x-api-key': created.api_key, 'x-api-secret': created.api_secret, 'content-type': 'application/json' },
                body: JSON.stringify({ service, target: 'https://example.com/x', quantity: 5 }),
              });
              statuses.add(r.status);
              const body = (await r.json()) as { order?: string };
              if (r.status === 201) acked.push(body.order!);
            } catch {
              return;
            }
          }
        };
        const workers = Array.from({ length: 8 }, worker);
        while (acked.length < 50) await new Promise((r) => setTimeout(r, 10));
        server.child.kill(signal);
        const exit = await server.exited;
        stop = true;
        await Promise.all(workers);
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
