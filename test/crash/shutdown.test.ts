import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnServer } from '../helpers/server-process.js';
import { waitFor } from '../helpers/wait-for.js';

/** SIGTERM and SIGINT under load: stop accepting, answer what is in flight, sync, exit 0. */
describe('graceful shutdown of the real process', () => {
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
        // Every request written before the signal, with what became of it:
        // the drain must answer each one (201, or 503 while draining), never
        // drop its connection, as a server that exits at once would. Written
        // means handed to the kernel (node:http's 'finish'): on loopback its
        // bytes are then in the server's socket. A request only begun (a
        // fetch() called, its bytes not yet written when the signal came) may
        // find the server gone, and is not counted.
        const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
        type Sent = { written: boolean; settled: boolean; outcome: Promise<string> };
        const requests: Sent[] = [];
        let stop = false;
        const url = server.url;
        const body = JSON.stringify({ service, target: 'https://example.com/x', quantity: 5 });
        const post = (): Sent => {
          const sent: Sent = { written: false, settled: false, outcome: Promise.resolve('') };
          sent.outcome = new Promise<string>((resolve) => {
            const headers = { 'x-api-key': created.api_key, 'x-api-secret': created.api_secret, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
            const request = http.request(`${url}/api/v1/order`, { method: 'POST', agent, headers }, (response) => {
              const chunks: Buffer[] = [];
              response.on('data', (chunk: Buffer) => chunks.push(chunk));
              response.on('end', () => {
                const status = response.statusCode ?? 0;
                statuses.add(status);
                if (status === 201) acked.push((JSON.parse(Buffer.concat(chunks).toString()) as { order: string }).order);
                resolve(`answered ${status}`);
              });
              response.on('close', () => resolve('no answer: the connection closed mid-answer'));
            });
            request.on('finish', () => (sent.written = true));
            request.on('error', (error) => resolve(`no answer: ${error.message}`));
            request.end(body);
          }).finally(() => (sent.settled = true));
          return sent;
        };
        const worker = async () => {
          while (!stop) {
            const sent = post();
            requests.push(sent);
            // After the signal a new request may find the listener closed: that ends this worker.
            if ((await sent.outcome).startsWith('no answer')) return;
          }
        };
        const workers = Array.from({ length: 8 }, worker);
        await waitFor('50 orders acknowledged before the signal', () => acked.length >= 50, 30_000, () => `${acked.length} acknowledged`);
        // In the same turn as the signal: which requests were written before it, and which of those await their answer.
        const writtenBeforeSignal = requests.filter((r) => r.written);
        const inFlight = writtenBeforeSignal.filter((r) => !r.settled).length;
        server.child.kill(signal);
        const exit = await server.exited;
        stop = true;
        await Promise.all(workers);
        agent.destroy();
        const outcomes = await Promise.all(writtenBeforeSignal.map((r) => r.outcome));
        expect(inFlight, 'requests were written and waiting for their answer when the signal came').toBeGreaterThan(0);
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
