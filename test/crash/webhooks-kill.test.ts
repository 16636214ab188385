/**
 * Webhooks across SIGKILL: the built server runs as a real process and is
 * killed while deliveries hang in flight and orders keep changing; after
 * the restart every acknowledged change still reaches the receiver (its
 * message is an event of the change's own commit), in order per order, the
 * messages in flight at the kill come again under the same webhook-id, and
 * every signature checks out with `standardwebhooks`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const TOKEN = 'kill-test-admin-token';
const ENV = { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_TIMEOUT_MS: '20000' };
const FLOW = ['processing', 'in_progress', 'completed'];

interface Proc {
  child: { kill(signal: string): boolean };
  url: string;
  adminUrl: string;
  exited: Promise<unknown>;
}

async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(base + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

const dirs: string[] = [];
let receiver: Receiver | null = null;
/** The server running now, killed at the end even when the test fails half-way. */
let live: Proc | null = null;
afterAll(async () => {
  live?.child.kill('SIGKILL');
  await receiver?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('webhooks across SIGKILL', () => {
  it('loses no acknowledged change and resends what was in flight under the same id', async () => {
    const { spawnServer } = (await import('../../dist/scripts/crash/server-process.js' as string)) as {
      spawnServer(dir: string, token: string, env: Record<string, string>): Promise<Proc>;
    };
    const dir = mkdtempSync(join(tmpdir(), 'coa-webhooks-kill-'));
    dirs.push(dir);
    receiver = await startReceiver();
    let server = await spawnServer(dir, TOKEN, ENV);
    live = server;
    const admin = { authorization: `Bearer ${TOKEN}` };
    const account = await call(server.adminUrl, 'POST', '/admin/v1/accounts', admin, { name: 'reseller' });
    const id = account.body.account.id as number;
    await call(server.adminUrl, 'POST', `/admin/v1/accounts/${id}/credits`, admin, { amount: '100000', reason: 'kill test' });
    const service = (await call(server.adminUrl, 'POST', '/admin/v1/services', admin, { platform: 'x', name: 'y', rate: '1', min: 1, max: 100 })).body.service.id;
    const creds = { 'x-api-key': account.body.api_key as string, 'x-api-secret': account.body.api_secret as string };
    const hook = await call(server.url, 'POST', '/api/v1/webhooks', creds, { url: `${receiver.url}/hook`, events: ['order.updated'] });
    expect(hook.status).toBe(201);
    receiver.setSecret('/hook', hook.body.webhook.secret);

    /** Per order: the statuses asked for, in order, and how many of them were acknowledged. */
    const issued = new Map<string, string[]>();
    const acknowledged = new Map<string, number>();
    const place = async (): Promise<void> => {
      const r = await call(server.url, 'POST', '/api/v1/order', creds, { service, target: 'https://x.test/a', quantity: 3 });
      if (r.status !== 201) return;
      issued.set(r.body.order, ['pending']);
      acknowledged.set(r.body.order, 1);
    };
    const advance = async (order: string): Promise<void> => {
      const list = issued.get(order)!;
      const next = FLOW[list.length - 1];
      if (next === undefined || acknowledged.get(order) !== list.length) return;
      list.push(next);
      try {
        const r = await call(server.adminUrl, 'POST', `/admin/v1/orders/${order}/status`, admin, { status: next });
        if (r.status === 200) acknowledged.set(order, list.length);
      } catch {
        // Killed before the answer: the move may or may not be durable; it stays "asked for".
      }
    };

    await Promise.all(Array.from({ length: 8 }, place));
    await Promise.all([...issued.keys()].map(advance));
    await receiver.waitFor((r) => r.filter((x) => x.answered === 'ok').length >= 8);
    // Deliveries start hanging; more changes are made; the server is killed with attempts in flight.
    receiver.behave("hang");
    const moving = Promise.all([...issued.keys()].map(advance));
    await receiver.waitFor((r) => r.some((x) => x.answered === 'hang'));
    server.child.kill('SIGKILL');
    await server.exited;
    await moving;
    const inFlightAtKill = new Set(receiver.received.filter((x) => x.answered === 'hang').map((x) => x.id));
    receiver.releaseHung();
    receiver.behave('ok');

    server = await spawnServer(dir, TOKEN, ENV);
    live = server;
    // Orders whose last move was unanswered are moved on only after they are seen again.
    for (const [order, list] of issued) {
      const s = await call(server.url, 'GET', `/api/v1/status?order=${order}`, creds);
      if (s.body.status === list[list.length - 1]) acknowledged.set(order, list.length);
      else list.pop();
    }
    await Promise.all([...issued.keys()].map(advance));
    await Promise.all([...issued.keys()].map(advance));

    const firstArrivals = (): Map<string, string[]> => {
      const seen = new Set<string>();
      const out = new Map<string, string[]>();
      for (const r of receiver!.received) {
        if (r.answered !== 'ok' || seen.has(r.id)) continue;
        seen.add(r.id);
        const order = r.json.data['order'] as string;
        out.set(order, [...(out.get(order) ?? []), r.json.data['status'] as string]);
      }
      return out;
    };
    await receiver.waitFor(() => [...issued].every(([order, list]) => (firstArrivals().get(order)?.length ?? 0) >= acknowledged.get(order)!), 30_000);
    const arrived = firstArrivals();
    for (const [order, list] of issued) {
      const got = arrived.get(order) ?? [];
      // Every acknowledged change arrived, in the order it was made; nothing arrived that was not asked for.
      expect(got.slice(0, acknowledged.get(order)!), order).toEqual(list.slice(0, acknowledged.get(order)!));
      expect(list.slice(0, got.length), order).toEqual(got);
    }
    // What was in flight at the kill came again, under the same id, and was then accepted.
    const acceptedIds = new Set(receiver.received.filter((x) => x.answered === 'ok').map((x) => x.id));
    expect(inFlightAtKill.size).toBeGreaterThan(0);
    for (const msg of inFlightAtKill) expect(acceptedIds.has(msg), msg).toBe(true);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    server.child.kill('SIGKILL');
    await server.exited;
  }, 90_000);
});
