/**
 * Webhooks end to end: the real server (real LMDB, real HTTP) posts to a
 * real local receiver; every delivery's signature is checked with the
 * `standardwebhooks` package. Every change of every order of a run arrives,
 * in order per order; a failing or hung receiver gets the same webhook-id
 * again once the retry is due on the injected clock.
 */
import { describe, expect, it } from 'vitest';
import { order } from '../helpers/server.js';
import { useWebhookTest } from '../helpers/webhook-setup.js';

const w = useWebhookTest({ random: 0.5, config: { webhooksTimeoutMs: 300, webhooksConnectTimeoutMs: 300 } });
const { t } = w;

async function move(id: string, status: string, extra: Record<string, unknown> = {}): Promise<void> {
  const r = await t.admin('POST', `/admin/v1/orders/${id}/status`, { status, ...extra });
  expect(r.status, r.text).toBe(200);
}

/** The statuses each order's messages carried, in arrival order, counting a repeated delivery once when it follows itself. */
function statusesByOrder(path: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const lastId = new Map<string, string>();
  for (const r of w.receiver.received) {
    if (r.path !== path || r.answered !== 'ok' || r.json.type !== 'order.updated') continue;
    const id = r.json.data['order'] as string;
    // Only a repeat straight after itself: an older message arriving after a newer one is out of order and shows.
    if (lastId.get(id) === r.id) continue;
    lastId.set(id, r.id);
    out.set(id, [...(out.get(id) ?? []), r.json.data['status'] as string]);
  }
  return out;
}

describe('webhooks: signed delivery of every change', () => {
  it('delivers every status change of every order, in order per order, each signature verified; the outbox ends empty', async () => {
    await w.register('/hook');
    const expected = new Map<string, string[]>();
    const orders: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await t.api('POST', '/api/v1/order', w.creds, order(w.service, 5));
      expect(r.status).toBe(201);
      orders.push(r.body.order);
      expected.set(r.body.order, ['pending']);
    }
    // Moves of different orders interleave; each order's own moves are in sequence.
    const finals = ['completed', 'partial', 'canceled', 'completed', 'canceled', 'partial'];
    for (const step of ['processing', 'in_progress', 'final'] as const) {
      await Promise.all(
        orders.map(async (id, i) => {
          const to = step === 'final' ? finals[i]! : step;
          await move(id, to, to === 'partial' ? { remains: 2 } : {});
          expected.get(id)!.push(to);
        }),
      );
    }
    await t.server.webhooks.dispatcher.idle();
    await w.receiver.waitFor(() => [...statusesByOrder('/hook').values()].flat().length === 6 * 4);
    expect(statusesByOrder('/hook')).toEqual(expected);
    for (const r of w.receiver.received) {
      expect(r.verified, r.body).toBe(true);
      expect(r.id).toMatch(/^msg_[0-9a-f]{32}$/);
    }
    // The body is the order as GET /api/v1/status shows it.
    const last = w.receiver.received.filter((r) => r.json.data['order'] === orders[1]).at(-1)!;
    const status = await t.api('GET', `/api/v1/status?order=${orders[1]}`, w.creds);
    const { ok: _ok, ...fields } = status.body;
    expect(last.json).toEqual({ type: 'order.updated', timestamp: expect.stringMatching(/Z$/), data: fields });
    expect(t.server.webhooks.dispatcher.backlog().held).toBe(0);
    // The ledger's replay knows the webhook events in the log.
    const verify = await t.admin('GET', '/admin/v1/verify');
    expect(verify.status, verify.text).toBe(200);
  });

  it('posts refill.updated with the refill as GET /api/v1/refill_status shows it, only to endpoints that asked for it', async () => {
    await w.register('/both');
    await w.register('/orders-only', ['order.updated']);
    const placed = await t.api('POST', '/api/v1/order', w.creds, order(w.service, 5));
    const id = placed.body.order as string;
    await move(id, 'completed');
    const asked = await t.api('POST', '/api/v1/refill', w.creds, { orders: [id] });
    const refill = asked.body.orders[id].refill as number;
    expect((await t.admin('POST', `/admin/v1/refills/${refill}/status`, { status: 'in_progress' })).status).toBe(200);
    await t.server.webhooks.dispatcher.idle();
    await w.receiver.waitFor((r) => r.filter((x) => x.path === '/both' && x.json.type === 'refill.updated').length === 2);
    const refills = w.receiver.received.filter((x) => x.json.type === 'refill.updated');
    expect(refills.every((x) => x.path === '/both' && x.verified)).toBe(true);
    expect(refills.map((x) => x.json.data['status'])).toEqual(['pending', 'in_progress']);
    const shown = await t.api('GET', `/api/v1/refill_status?refills=${refill}`, w.creds);
    expect(refills[1]!.json.data).toEqual(shown.body.refills[String(refill)]);
  });

  it('retries a failing receiver with the same webhook-id, first within 5 s on the clock, and keeps later changes of that order behind it', async () => {
    await w.register('/hook');
    w.receiver.behave('fail');
    const placed = await t.api('POST', '/api/v1/order', w.creds, order(w.service, 5));
    const id = placed.body.order as string;
    await w.receiver.waitFor((r) => r.length === 1);
    // The next change of the same order is written while the first message is still held.
    await move(id, 'processing');
    await t.server.webhooks.dispatcher.idle();
    expect(w.receiver.received).toHaveLength(1);
    // random() = 0.5: the first retry is due 750 ms later, the second 1.5 s after that.
    w.clock.advance(749);
    await t.server.webhooks.dispatcher.idle();
    t.server.webhooks.dispatcher.pass();
    await t.server.webhooks.dispatcher.idle();
    expect(w.receiver.received).toHaveLength(1);
    w.clock.advance(1);
    t.server.webhooks.dispatcher.pass();
    await w.receiver.waitFor((r) => r.length === 2);
    expect(w.receiver.received[1]!.id).toBe(w.receiver.received[0]!.id);
    // The second failure is recorded (its retry scheduled on the clock as it stands) before the clock moves on.
    await t.server.webhooks.dispatcher.idle();
    w.receiver.behave('ok');
    w.clock.advance(1_500);
    t.server.webhooks.dispatcher.pass();
    await w.receiver.waitFor((r) => r.filter((x) => x.answered === 'ok').length === 2);
    const ok = w.receiver.received.filter((x) => x.answered === 'ok');
    expect(ok.map((x) => x.json.data['status'])).toEqual(['pending', 'processing']);
    expect(ok[0]!.id).toBe(w.receiver.received[0]!.id);
    expect(w.receiver.received.every((r) => r.verified)).toBe(true);
  });

  it('counts messages that fail together as one backoff step: the first retry of a receiver that went down with several in flight is still due within 1 s', async () => {
    await w.register('/hook');
    w.receiver.behave('hang');
    for (let i = 0; i < 4; i++) expect((await t.api('POST', '/api/v1/order', w.creds, order(w.service, 5))).status).toBe(201);
    await w.receiver.waitFor((r) => r.length === 4);
    // All four time out (300 ms of real time) at the same moment of the test's clock.
    await t.server.webhooks.dispatcher.idle();
    const first = w.receiver.received.map((r) => r.id).sort();
    w.receiver.behave('ok');
    // random() = 0.5: one step is due 750 ms later (four steps would be 6 s).
    w.clock.advance(749);
    t.server.webhooks.dispatcher.pass();
    await t.server.webhooks.dispatcher.idle();
    expect(w.receiver.received).toHaveLength(4);
    w.clock.advance(1);
    t.server.webhooks.dispatcher.pass();
    await w.receiver.waitFor((r) => r.length === 8);
    expect(w.receiver.received.slice(4).map((r) => r.id).sort()).toEqual(first);
    expect(w.receiver.received.slice(4).every((r) => r.answered === 'ok' && r.verified)).toBe(true);
  });

  it('gives up on a hung receiver within the timeout and sends the same message again', async () => {
    await w.register('/hook');
    w.receiver.next(1, 'hang');
    await t.api('POST', '/api/v1/order', w.creds, order(w.service, 5));
    await w.receiver.waitFor((r) => r.length === 1);
    await t.server.webhooks.dispatcher.idle();
    const log = await t.admin('GET', `/admin/v1/webhooks/1/deliveries`);
    expect(log.status, log.text).toBe(200);
    expect(log.body.deliveries[0]).toMatchObject({ outcome: 'timeout', attempt: 1, message: w.receiver.received[0]!.id });
    w.clock.advance(5_000);
    t.server.webhooks.dispatcher.pass();
    await w.receiver.waitFor((r) => r.length === 2);
    expect(w.receiver.received[1]!.id).toBe(w.receiver.received[0]!.id);
    expect(w.receiver.received[1]!.verified).toBe(true);
  });
});
