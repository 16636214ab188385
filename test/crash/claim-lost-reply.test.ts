import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { spawnServer } from '../helpers/server-process.js';
import { startTestServer, useScratchDirs } from '../helpers/server.js';
import { WAIT_DEADLINE_MS, waitFor } from '../helpers/wait-for.js';

const LEASE_SECONDS = 60;
const SECOND_MS = 1000;

/** A request to a running server process, with its token. */
async function call(base: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed = await res.json();
  expect(res.status, JSON.stringify(parsed)).toBeLessThan(300);
  return parsed;
}

/** Writes a claim on a socket of its own that nobody reads: the worker that sent it never sees the reply. */
function claimUnread(adminUrl: string, token: string, worker: string, limit: number): Socket {
  const { hostname, port } = new URL(adminUrl);
  const body = JSON.stringify({ limit, worker, lease_seconds: LEASE_SECONDS });
  const socket = connect(Number(port), hostname);
  socket.pause();
  socket.on('error', () => {});
  socket.write(
    `POST /admin/v1/orders/claim HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return socket;
}

/**
 * The lost claim reply: a worker's claim reaches a real server process,
 * which is SIGKILLed before the worker reads the reply (once with the
 * claim's commit on disk, once at once after the request was sent, when
 * it may or may not be). After a restart (in process, on the injected
 * clock, over the same directory) the orders the claim took stay the
 * worker's until the lease ends, then any worker claims them; the worker
 * whose reply was lost gets CONFLICT, and no money moved.
 */
describe('a claim whose reply is lost (SIGKILL between claim and reply)', () => {
  const scratch = useScratchDirs();

  for (const when of ['after the claim is on disk', 'right after the claim is sent'] as const) {
    it(`kill ${when}: after restart and the lease's end the orders are claimable again, no money moved`, async () => {
      const dataDir = join(scratch(), 'data');
      const token = randomBytes(16).toString('hex');
      const server = await spawnServer(dataDir, token);
      let orders: string[];
      let account: { api_key: string; api_secret: string; account: { id: number } };
      try {
        const admin = (method: string, path: string, body?: unknown) => call(server.adminUrl, token, method, path, body);
        const service = (await admin('POST', '/admin/v1/services', { platform: 'lease', name: 'lease', rate: '0.01', min: 1, max: 1000 })).service.id;
        account = await admin('POST', '/admin/v1/accounts', { name: 'reseller' });
        await admin('POST', `/admin/v1/accounts/${account.account.id}/credits`, { amount: '10', reason: 'lease test' });
        const customer = { 'x-api-key': account.api_key, 'x-api-secret': account.api_secret };
        orders = [];
        for (let n = 0; n < 3; n++) {
          const placed = await call(server.url, '', 'POST', '/api/v1/order', { service, target: `https://example.com/lease/${n}`, quantity: 10 }, customer);
          orders.push(placed.order);
        }
        const socket = claimUnread(server.adminUrl, token, 'w1', 2);
        if (when === 'after the claim is on disk') {
          // The admin API lists only durable orders: once both show processing, the claim's commit is on disk.
          let processing = 0;
          const bothProcessing = async (): Promise<boolean> => (processing = (await admin('GET', '/admin/v1/orders?status=processing')).orders.length) === 2;
          await waitFor('the two claimed orders listed as processing (the claim on disk)', bothProcessing, WAIT_DEADLINE_MS, () => `${processing} listed`);
        } else {
          // The request has left for the server once this empty write, queued behind it, is done.
          await new Promise<void>((resolve) => socket.write('', () => resolve()));
        }
        server.child.kill('SIGKILL');
        expect((await server.exited).signal).toBe('SIGKILL');
        socket.destroy();
      } finally {
        server.child.kill('SIGKILL');
        await server.exited;
      }

      const clock = new ManualClock(1_000_000, Date.now());
      const t = await startTestServer({ dir: dataDir, clock });
      try {
        const shown = async (id: string) => (await t.admin('GET', `/admin/v1/orders/${id}`)).body.order;
        const first = await Promise.all(orders.slice(0, 2).map(shown));
        const held = first.filter((o) => o.status === 'processing');
        if (when === 'after the claim is on disk') expect(held).toHaveLength(2);
        for (const o of first) {
          if (o.status === 'pending') continue;
          expect(o).toMatchObject({ status: 'processing', worker: 'w1' });
          expect(Date.parse(o.lease_expires_at)).toBeGreaterThan(clock.wallMs());
        }
        // While the lease runs, another worker gets only what w1 does not hold.
        const during = await t.admin('POST', '/admin/v1/orders/claim', { limit: 10, worker: 'w2' });
        const pendingBefore = [...first.filter((o) => o.status === 'pending').map((o) => o.id), orders[2]];
        expect(during.body.orders.map((o: { id: string }) => o.id)).toEqual(pendingBefore);
        // After the lease's end, the orders w1 never heard of go to the next worker.
        clock.advance(LEASE_SECONDS * SECOND_MS);
        const after = await t.admin('POST', '/admin/v1/orders/claim', { limit: 10, worker: 'w3' });
        expect(after.body.orders.map((o: { id: string }) => o.id)).toEqual(held.map((o) => o.id));
        for (const o of held) {
          const late = await t.admin('POST', `/admin/v1/orders/${o.id}/status`, { status: 'in_progress', worker: 'w1' });
          expect(late.body).toMatchObject({ error: 'CONFLICT', message: `Order ${o.id} is held by w3, not by w1.` });
        }
        // Three orders of 0.1 credits each, debited once; nothing refunded, nothing debited twice.
        expect((await t.admin('GET', `/admin/v1/accounts/${account.account.id}`)).body.account.credits).toBe(9.7);
        const report = (await t.admin('GET', '/admin/v1/verify')).body.report;
        expect(report.ok, report.firstBroken).toBe(true);
        expect(report.totals).toMatchObject({ debited: 0.3, refunded: 0 });
      } finally {
        await t.close();
      }
    }, 60_000);
  }
});
