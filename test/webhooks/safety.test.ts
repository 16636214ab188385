/**
 * Where deliveries may go and what a receiver can do to the server: nothing
 * is ever sent to a loopback address unless WEBHOOKS_ALLOW_PRIVATE allows
 * it (neither to a literal IP nor to a name that resolves to one), a
 * redirect is not followed, and after WEBHOOKS_RETRY_HOURS of failures the
 * endpoint is marked failing, shown to the operator and replayed by them.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ForbiddenAddressError, guardedLookup, Sender } from '../../src/webhooks/index.js';
import { order } from '../helpers/server.js';
import { useWebhookTest } from '../helpers/webhook-setup.js';

const w = useWebhookTest({ random: 0 });
const { t } = w;

describe('webhook safety', () => {
  it('never sends to a loopback address when WEBHOOKS_ALLOW_PRIVATE is not set: the attempt is logged as forbidden and the endpoint is failing at once', async () => {
    const id = await w.register();
    // The endpoint was allowed when registered; the operator then turns private addresses off.
    await t.restart({ webhooksAllowPrivate: false });
    await t.api('POST', '/api/v1/order', w.creds, order(w.service, 2));
    await t.server.webhooks.dispatcher.idle();
    await t.server.context.wal.flushed();
    const log = await t.admin('GET', `/admin/v1/webhooks/${id}/deliveries`);
    expect(log.body.deliveries).toHaveLength(1);
    expect(log.body.deliveries[0]).toMatchObject({ outcome: 'forbidden', status: null, error: expect.stringMatching(/WEBHOOKS_ALLOW_PRIVATE/) });
    // Not retried for a day: failing after its first refusal, shown to the operator with why.
    const failing = (await t.admin('GET', '/admin/v1/webhooks?failing=true')).body.webhooks;
    expect(failing).toHaveLength(1);
    expect(failing[0]).toMatchObject({ id, failing: true, held: 1 });
    for (const step of [1_000, 60_000, 3_600_000]) {
      w.clock.advance(step);
      t.server.webhooks.dispatcher.pass();
      await t.server.webhooks.dispatcher.idle();
    }
    expect((await t.admin('GET', `/admin/v1/webhooks/${id}/deliveries`)).body.deliveries).toHaveLength(1);
    expect(w.receiver.connections()).toBe(0);
    // The message is kept, not lost: allowed again and replayed, it is delivered.
    await t.restart({ webhooksAllowPrivate: true });
    expect((await t.admin('POST', `/admin/v1/webhooks/${id}/replay`)).body.webhook).toMatchObject({ failing: false });
    await w.receiver.waitFor((r) => r.length === 1);
    expect(w.receiver.received[0]!.verified).toBe(true);
  });

  it('refuses at delivery the hosts refused at registration, in every spelling, before connecting', async () => {
    const sender = new Sender({ allowPrivate: false, connectTimeoutMs: 1000, timeoutMs: 2000, socketsMax: 2 });
    try {
      const hosts = ['localhost', 'localhost.', '127.0.0.1.', '[::7f00:1]', '[::ffff:7f00:1]', '[::ffff:0:7f00:1]', '[2002:7f00:1::]', '[64:ff9b::7f00:1]', '[64:ff9b:1::7f00:1]'];
      for (const host of hosts) {
        const result = await sender.post(`http://${host}:${w.receiver.port}/hook`, { 'content-type': 'application/json' }, '{}');
        expect(result.outcome, host).toBe('forbidden');
        expect(result.error, host).toMatch(/loopback, private or link-local.*WEBHOOKS_ALLOW_PRIVATE/);
      }
      expect(w.receiver.connections()).toBe(0);
      const allowed = new Sender({ allowPrivate: true, connectTimeoutMs: 1000, timeoutMs: 2000, socketsMax: 2 });
      expect((await allowed.post(`http://localhost:${w.receiver.port}/hook`, {}, '{}')).outcome).toBe('delivered');
      allowed.close();
      expect(w.receiver.connections()).toBe(1);
    } finally {
      sender.close();
    }
  });

  it('refuses a name that resolves to loopback after the DNS look-up, before connecting', async () => {
    const lookup = guardedLookup(false);
    const refused = await new Promise<Error | null>((resolve) => lookup('localhost', {}, (error) => resolve(error)));
    expect(refused).toBeInstanceOf(ForbiddenAddressError);
    expect(refused!.message).toMatch(/resolves to (127\.0\.0\.1|::1)/);
    const allowed = await new Promise<unknown>((resolve) => guardedLookup(true)('localhost', {}, (error, address) => resolve(error ?? address)));
    expect(allowed).toMatch(/^(127\.0\.0\.1|::1)$/);
  });

  it('does not follow a redirect: the attempt fails and the message is retried to the same URL', async () => {
    const id = await w.register();
    w.receiver.next(1, 'redirect');
    await t.api('POST', '/api/v1/order', w.creds, order(w.service, 2));
    await w.receiver.waitFor((r) => r.length === 1);
    await t.server.webhooks.dispatcher.idle();
    const log = await t.admin('GET', `/admin/v1/webhooks/${id}/deliveries`);
    expect(log.body.deliveries[0]).toMatchObject({ outcome: 'failed', status: 307, error: expect.stringMatching(/redirects are not followed/) });
    w.clock.advance(1_000);
    t.server.webhooks.dispatcher.pass();
    await w.receiver.waitFor((r) => r.length === 2);
    expect(w.receiver.received.map((r) => r.path)).toEqual(['/hook', '/hook']);
    expect(w.receiver.received[1]!.id).toBe(w.receiver.received[0]!.id);
  });

  it('drops what a deleted endpoint held and writes nothing more for it', async () => {
    const id = await w.register();
    w.receiver.behave('fail');
    for (let i = 0; i < 3; i++) await t.api('POST', '/api/v1/order', w.creds, order(w.service, 2));
    await w.receiver.waitFor((r) => r.length >= 1);
    await t.server.webhooks.dispatcher.idle();
    expect(t.server.webhooks.dispatcher.heldCount(id)).toBe(3);
    expect((await t.api('DELETE', `/api/v1/webhooks/${id}`, w.creds)).status).toBe(200);
    const sent = w.receiver.connections();
    const placed = await t.api('POST', '/api/v1/order', w.creds, order(w.service, 2));
    // The order placed after the delete names no endpoint: nothing is written for the deleted one.
    const placements = [...t.server.context.store.log.getRange()].map((e) => e.value as { type: string; order?: string; webhooks?: number[] }).filter((e) => e.type === 'order.placed');
    expect(placements.map((e) => e.webhooks ?? [])).toEqual([[id], [id], [id], []]);
    expect(placements.at(-1)!.order).toBe(placed.body.order);
    w.clock.advance(10_000);
    t.server.webhooks.dispatcher.pass();
    await t.server.webhooks.dispatcher.idle();
    await t.server.context.wal.flushed();
    expect(t.server.webhooks.dispatcher.backlog().held).toBe(0);
    expect(w.receiver.connections()).toBe(sent);
    w.clock.advance(60_000);
    t.server.webhooks.dispatcher.pass();
    await t.server.webhooks.dispatcher.idle();
    expect(w.receiver.connections()).toBe(sent);
  });

  it('marks an endpoint failing after 24 hours of failures, keeps its messages, shows it to the operator, and delivers them on replay', async () => {
    const id = await w.register();
    w.receiver.behave('fail');
    const placed = await t.api('POST', '/api/v1/order', w.creds, order(w.service, 2));
    await w.receiver.waitFor((r) => r.length === 1);
    await t.server.webhooks.dispatcher.idle();
    // Retries continue, each due on the clock, until the message is 24 hours old.
    for (const step of [1_000, 60_000, 3_600_000, 20 * 3_600_000]) {
      w.clock.advance(step);
      t.server.webhooks.dispatcher.pass();
      await t.server.webhooks.dispatcher.idle();
    }
    const attemptsBefore = w.receiver.received.length;
    expect(attemptsBefore).toBeGreaterThanOrEqual(4);
    expect((await t.admin('GET', '/admin/v1/webhooks?failing=true')).body.webhooks).toEqual([]);
    w.clock.advance(3 * 3_600_000);
    t.server.webhooks.dispatcher.pass();
    await t.server.webhooks.dispatcher.idle();
    await t.server.context.wal.flushed();
    const failing = await t.admin('GET', '/admin/v1/webhooks?failing=true');
    expect(failing.body.webhooks).toHaveLength(1);
    expect(failing.body.webhooks[0]).toMatchObject({ id, account: w.creds.id, failing: true, held: 1 });
    const metrics = await t.admin('GET', '/metrics');
    expect(metrics.text).toMatch(/coa_webhook_failing_endpoints 1/);
    expect(metrics.text).toMatch(/coa_webhook_queue_depth 1/);
    expect(metrics.text).toMatch(/coa_webhook_oldest_undelivered_age_seconds 86\d{3}/);
    expect(metrics.text).toMatch(/coa_webhook_deliveries_total\{outcome="failed"\} \d+/);
    // Failing: no more attempts, but new changes are still kept for it.
    await t.admin('POST', `/admin/v1/orders/${placed.body.order}/status`, { status: 'processing' });
    w.clock.advance(7_200_000);
    t.server.webhooks.dispatcher.pass();
    await t.server.webhooks.dispatcher.idle();
    expect(w.receiver.received.length).toBe(attemptsBefore + 1);
    expect((await t.admin('GET', '/admin/v1/webhooks?failing=true')).body.webhooks[0].held).toBe(2);
    // The marking survives a restart.
    await t.restart();
    expect((await t.admin('GET', '/admin/v1/webhooks?failing=true')).body.webhooks).toHaveLength(1);
    w.receiver.behave('ok');
    const replayed = await t.admin('POST', `/admin/v1/webhooks/${id}/replay`);
    expect(replayed.body.webhook).toMatchObject({ failing: false });
    await w.receiver.waitFor((r) => r.filter((x) => x.answered === 'ok').length === 2);
    const ok = w.receiver.received.filter((x) => x.answered === 'ok');
    expect(ok.map((x) => x.json.data['status'])).toEqual(['pending', 'processing']);
    expect(ok[0]!.id).toBe(w.receiver.received[0]!.id);
    expect(w.receiver.received.every((r) => r.verified)).toBe(true);
    await t.server.webhooks.dispatcher.idle();
    expect((await t.admin('GET', '/admin/v1/webhooks')).body.webhooks[0]).toMatchObject({ held: 0, failing: false });
  });

  it('counts the 24 hours from a message\u2019s first failure, not its age: after a replay, messages older than that are retried again for 24 hours', async () => {
    const id = await w.register();
    w.receiver.behave('fail');
    await t.api('POST', '/api/v1/order', w.creds, order(w.service, 2));
    await w.receiver.waitFor((r) => r.length === 1);
    await t.server.webhooks.dispatcher.idle();
    for (const step of [3_600_000, 23 * 3_600_000]) {
      w.clock.advance(step);
      t.server.webhooks.dispatcher.pass();
      await t.server.webhooks.dispatcher.idle();
    }
    await t.server.context.wal.flushed();
    expect((await t.admin('GET', '/admin/v1/webhooks?failing=true')).body.webhooks).toHaveLength(1);
    // Replayed while the receiver still fails: the message is now a day old, but the endpoint's retries start over.
    const attempts = w.receiver.received.length;
    expect((await t.admin('POST', `/admin/v1/webhooks/${id}/replay`)).body.webhook).toMatchObject({ failing: false });
    await w.receiver.waitFor((r) => r.length === attempts + 1);
    for (const step of [1_000, 3_600_000, 20 * 3_600_000]) {
      await t.server.webhooks.dispatcher.idle();
      await t.server.context.wal.flushed();
      expect((await t.admin('GET', '/admin/v1/webhooks?failing=true')).body.webhooks).toEqual([]);
      w.clock.advance(step);
      t.server.webhooks.dispatcher.pass();
    }
    await t.server.webhooks.dispatcher.idle();
    expect(w.receiver.received.length).toBeGreaterThanOrEqual(attempts + 4);
    w.clock.advance(3 * 3_600_000);
    t.server.webhooks.dispatcher.pass();
    await t.server.webhooks.dispatcher.idle();
    await t.server.context.wal.flushed();
    const failing = (await t.admin('GET', '/admin/v1/webhooks?failing=true')).body.webhooks;
    expect(failing).toHaveLength(1);
    expect(failing[0]).toMatchObject({ id, held: 1 });
  });

  it('marks the endpoint failing when one message has failed for 24 hours, though the receiver takes every other', async () => {
    const id = await w.register();
    // The receiver refuses every message about one order, and takes every other.
    let refused = '';
    w.receiver.behaveWhen((json) => json.data['order'] === refused, 'fail');
    refused = (await t.api('POST', '/api/v1/order', w.creds, order(w.service, 2))).body.order as string;
    await w.receiver.waitFor((r) => r.length === 1);
    await t.server.webhooks.dispatcher.idle();
    const delivered = (o: string): boolean => w.receiver.received.some((x) => x.json.data['order'] === o && x.answered === 'ok');
    for (let hour = 0; hour < 26; hour++) {
      w.clock.advance(3_600_000);
      // Every hour another order's change is delivered: a success on the same endpoint (the refused message's
      // retries hold the endpoint for a second or so after each failure, so the clock is moved on until it goes).
      const other = (await t.api('POST', '/api/v1/order', w.creds, order(w.service, 2))).body.order as string;
      for (let i = 0; i < 30 && !delivered(other); i++) {
        t.server.webhooks.dispatcher.pass();
        await t.server.webhooks.dispatcher.idle();
        if (!delivered(other)) w.clock.advance(1_000);
      }
      await t.server.context.wal.flushed();
      const marked = (await t.admin('GET', '/admin/v1/webhooks?failing=true')).body.webhooks;
      if (hour < 23) {
        expect(marked, `hour ${hour}`).toEqual([]);
        expect(delivered(other), `hour ${hour}`).toBe(true);
      } else if (marked.length > 0) break;
    }
    const failing = (await t.admin('GET', '/admin/v1/webhooks?failing=true')).body.webhooks;
    expect(failing).toHaveLength(1);
    expect(failing[0]).toMatchObject({ id, failing: true });
    const refusedAttempts = w.receiver.received.filter((r) => r.json.data['order'] === refused && r.answered === 'fail');
    expect(refusedAttempts.length).toBeGreaterThanOrEqual(3);
    expect(new Set(refusedAttempts.map((r) => r.id)).size).toBe(1);
  });

  it('logs a failed attempt with a sentence when the secret cannot be opened (restored without its key), keeps the message, and delivers it once the secret is rotated', async () => {
    const id = await w.register();
    // The data directory comes back with another sealing key than the one that sealed the secret.
    await t.restart({ webhooksSecretKey: randomBytes(32).toString('base64') });
    const placed = await t.api('POST', '/api/v1/order', w.creds, order(w.service, 2));
    expect(placed.status).toBe(201);
    await t.server.webhooks.dispatcher.idle();
    await t.server.context.wal.flushed();
    expect(w.receiver.connections()).toBe(0);
    const log = await t.admin('GET', `/admin/v1/webhooks/${id}/deliveries`);
    expect(log.body.deliveries[0]).toMatchObject({ outcome: 'failed', status: null, error: expect.stringMatching(/secret cannot be opened .*WEBHOOKS_SECRET_KEY.*rotate its secret/) });
    // The attempt gave its slot back: other messages are not held up behind it.
    expect((await t.admin('GET', '/metrics')).text).toMatch(/^coa_webhook_in_flight 0$/m);
    const rotated = await t.api('POST', `/api/v1/webhooks/${id}/rotate`, w.creds);
    expect(rotated.status, rotated.text).toBe(200);
    w.receiver.setSecret('/hook', rotated.body.webhook.secret);
    w.clock.advance(1_000);
    t.server.webhooks.dispatcher.pass();
    await w.receiver.waitFor((r) => r.length === 1);
    const got = w.receiver.received[0]!;
    expect(got.verified).toBe(true);
    // Only the new secret signs: the rotated-out one cannot be opened with this key.
    expect(got.signature.split(' ')).toHaveLength(1);
    expect(got.json.data['order']).toBe(placed.body.order);
  });
});
