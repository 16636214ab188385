/**
 * The webhook endpoints' input and bookkeeping: every bad request is
 * VALIDATION with a sentence and changes nothing; the limit per account;
 * another account's endpoint is not found; the secret is shown once; the
 * routes count against the rate limit; rotation keeps the old secret
 * signing beside the new one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { PREVIOUS_SECRET_GRACE_MS } from '../../src/webhooks/index.js';
import { order, useServer, type Creds } from '../helpers/server.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

let creds: Creds;
let receiver: Receiver;

beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(() => receiver.close());
const t = useServer(
  { perTest: true, late: () => ({ clock: new ManualClock(1_000_000, Date.now()) }), config: { webhooksAllowPrivate: true }, server: { webhookYield: false } },
  async (t) => {
    creds = await t.createAccount('reseller', '100');
  },
);

const URL_OK = 'https://hooks.example.com/coa';

describe('webhook endpoints', () => {
  it('refuses bad input with VALIDATION and a sentence, and changes nothing', async () => {
    const before = await t.api('GET', '/api/v1/webhooks', creds);
    const logBefore = t.server.context.store.log.getStats() as { entryCount: number };
    const cases: [unknown, RegExp][] = [
      [[], /must be a JSON object/],
      [{}, /'url' is required/],
      [{ url: 42 }, /'url' is required/],
      [{ url: 'not a url' }, /not a valid absolute URL/],
      [{ url: 'ftp://hooks.example.com/x' }, /must be an https URL/],
      [{ url: 'http://hooks.example.com/x' }, /must be an https URL/],
      [{ url: 'https://user:pw@hooks.example.com/x' }, /user name or password/],
      [{ url: `https://hooks.example.com/${'a'.repeat(2100)}` }, /at most 2048 characters/],
      [{ url: URL_OK, events: [] }, /non-empty list of event types from: order.updated, refill.updated/],
      [{ url: URL_OK, events: ['order.created'] }, /non-empty list of event types/],
      [{ url: URL_OK, events: 'order.updated' }, /non-empty list of event types/],
      [{ url: URL_OK, events: ['order.updated', 'order.updated'] }, /names an event type twice/],
      [{ url: URL_OK, enabled: 'yes' }, /'enabled' must be true or false/],
      [{ url: URL_OK, secret: 'mine' }, /Field 'secret' is not allowed here/],
    ];
    for (const [body, message] of cases) {
      const r = await t.api('POST', '/api/v1/webhooks', creds, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe('VALIDATION');
      expect(r.body.message).toMatch(message);
    }
    const notJson = await t.api('POST', '/api/v1/webhooks', creds, '{"url":', {});
    expect(notJson.body.error).toBe('VALIDATION');
    const wrongType = await t.api('POST', '/api/v1/webhooks', creds, 'url=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(wrongType.status).toBe(415);
    for (const path of ['/api/v1/webhooks/abc', '/api/v1/webhooks/0', '/api/v1/webhooks/-1']) {
      const r = await t.api('DELETE', path, creds);
      expect(r.status, path).toBe(400);
      expect(r.body.message).toMatch(/not a webhook id/);
    }
    expect((await t.api('GET', '/api/v1/webhooks', creds)).body).toEqual(before.body);
    expect((t.server.context.store.log.getStats() as { entryCount: number }).entryCount).toBe(logBefore.entryCount);
  });

  it('without WEBHOOKS_ALLOW_PRIVATE, refuses loopback, private and link-local URLs at registration, in every spelling', async () => {
    await t.restart({ webhooksAllowPrivate: false });
    const spellings = [
      ...['https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://169.254.169.254/latest', 'https://[::1]/x', 'https://localhost/x', 'https://192.168.1.1/x'],
      // Trailing dots: the fully qualified names of the same hosts.
      ...['https://localhost./x', 'https://LOCALHOST../x', 'https://api.localhost./x', 'https://127.0.0.1./x'],
      // IPv6 forms that carry 127.0.0.1, 10.0.0.1 or 169.254.169.254: compatible, mapped, translated, 6to4, NAT64, Teredo, ISATAP.
      ...['https://[::7f00:1]/x', 'https://[::127.0.0.1]/x', 'https://[::ffff:7f00:1]/x', 'https://[::ffff:0:7f00:1]/x', 'https://[2002:7f00:1::]/x'],
      ...['https://[2002:a00:1::5]/x', 'https://[64:ff9b::7f00:1]/x', 'https://[64:ff9b::169.254.169.254]/x', 'https://[64:ff9b:1::a00:1]/x', 'https://[64:ff9b:1:7f00:0:100::]/x'],
      ...['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x', 'https://[fe80::1]/x', 'https://[2600::5efe:7f00:1]/x', 'https://[fd00::5efe:808:808]/x'],
    ];
    for (const url of spellings) {
      const r = await t.api('POST', '/api/v1/webhooks', creds, { url });
      expect(r.status, url).toBe(400);
      expect(r.body.message).toMatch(/loopback, private or link-local/);
    }
    expect((await t.api('GET', '/api/v1/webhooks', creds)).body.webhooks).toEqual([]);
    // The same forms around a public IPv4 address are public: they are accepted.
    for (const url of ['https://[::ffff:808:808]/x', 'https://[2002:808:808::1]/x', 'https://[64:ff9b::8.8.8.8]/x', 'https://hooks.example.com./x']) {
      const r = await t.api('POST', '/api/v1/webhooks', creds, { url });
      expect(r.status, `${url}: ${r.text}`).toBe(201);
    }
  });

  it('shows the secret once, lists without it, keeps to the per-account limit, and hides other accounts\u2019 endpoints', async () => {
    const created = await t.api('POST', '/api/v1/webhooks', creds, { url: URL_OK, events: ['order.updated'] });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      ok: true,
      webhook: { id: 1, url: URL_OK, events: ['order.updated'], enabled: true, failing: false, failing_since: null, created_at: expect.any(String), secret: expect.stringMatching(/^whsec_/) },
    });
    const listed = await t.api('GET', '/api/v1/webhooks', creds);
    expect(listed.body.webhooks).toHaveLength(1);
    expect(listed.body.webhooks[0].secret).toBeUndefined();
    expect(listed.text).not.toContain('whsec_');
    // The secret is not in the store in the clear either: neither its text nor its key bytes are anywhere in
    // the database file (the endpoint's row or the log's webhook.saved event), once the registration is synced.
    const secret: string = created.body.webhook.secret;
    const file = readFileSync(join(t.dir, 'data.mdb'));
    expect(file.includes(Buffer.from('webhook.saved')), 'the registration is in this file').toBe(true);
    expect(file.includes(Buffer.from(secret.slice(6)))).toBe(false);
    expect(file.includes(Buffer.from(secret.slice(6), 'base64'))).toBe(false);
    for (let i = 2; i <= 5; i++) expect((await t.api('POST', '/api/v1/webhooks', creds, { url: `${URL_OK}/${i}` })).status).toBe(201);
    const sixth = await t.api('POST', '/api/v1/webhooks', creds, { url: `${URL_OK}/6` });
    expect(sixth.status).toBe(400);
    expect(sixth.body.message).toMatch(/already has 5 webhook endpoints/);
    const other = await t.createAccount('other');
    expect((await t.api('GET', '/api/v1/webhooks', other)).body.webhooks).toEqual([]);
    for (const [method, path] of [['DELETE', '/api/v1/webhooks/1'], ['POST', '/api/v1/webhooks/1/rotate'], ['DELETE', '/api/v1/webhooks/99']] as const) {
      const r = await t.api(method, path, other);
      expect(r.status, path).toBe(404);
      expect(r.body.message).toBe('No webhook endpoint with this id exists on this account.');
    }
    const deleted = await t.api('DELETE', '/api/v1/webhooks/1', creds);
    expect(deleted.body).toEqual({ ok: true, deleted: 1 });
    expect((await t.api('GET', '/api/v1/webhooks', creds)).body.webhooks.map((w: { id: number }) => w.id)).toEqual([2, 3, 4, 5]);
    // Survives a restart, and the deleted id is not given again.
    await t.restart();
    expect((await t.api('GET', '/api/v1/webhooks', creds)).body.webhooks.map((w: { id: number }) => w.id)).toEqual([2, 3, 4, 5]);
    await t.api('DELETE', '/api/v1/webhooks/5', creds);
    await t.restart();
    expect((await t.api('POST', '/api/v1/webhooks', creds, { url: URL_OK })).body.webhook.id).toBe(6);
  });

  it('counts every webhook request against the rate limit and needs the API credentials', async () => {
    expect((await t.api('GET', '/api/v1/webhooks', null)).status).toBe(401);
    await t.admin('PATCH', `/admin/v1/accounts/${creds.id}`, { rate_limit_per_minute: 2 });
    expect((await t.api('GET', '/api/v1/webhooks', creds)).headers.get('ratelimit')).toMatch(/^"default";r=1;/);
    expect((await t.api('POST', '/api/v1/webhooks', creds, { url: URL_OK })).status).toBe(201);
    const limited = await t.api('POST', '/api/v1/webhooks', creds, { url: URL_OK });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('RATE');
    expect((await t.api('PUT', '/api/v1/webhooks', creds)).headers.get('allow')).toBe('GET, POST');
  });

  it('after a rotation, messages are signed with the new secret and, for a day, the old one too', async () => {
    await t.restart({ webhooksAllowHttp: true });
    const service = await t.createService({ rate: '1', min: 1, max: 10 });
    const created = await t.api('POST', '/api/v1/webhooks', creds, { url: `${receiver.url}/old` });
    const rotated = await t.api('POST', `/api/v1/webhooks/${created.body.webhook.id}/rotate`, creds);
    expect(rotated.status).toBe(200);
    expect(rotated.body.webhook.secret).not.toBe(created.body.webhook.secret);
    // The receiver checks the one message with each secret in turn.
    receiver.setSecret('/old', created.body.webhook.secret);
    await t.api('POST', '/api/v1/order', creds, order(service, 2));
    await receiver.waitFor((r) => r.length === 1);
    expect(receiver.received[0]!.verified).toBe(true);
    expect(receiver.received[0]!.signature.split(' ')).toHaveLength(2);
    const { Webhook } = await import('standardwebhooks');
    const r = receiver.received[0]!;
    const headers = { 'webhook-id': r.id, 'webhook-timestamp': String(r.timestamp), 'webhook-signature': r.signature };
    expect(() => new Webhook(rotated.body.webhook.secret).verify(r.body, headers)).not.toThrow();
    expect(() => new Webhook('whsec_' + Buffer.alloc(32, 7).toString('base64')).verify(r.body, headers)).toThrow();
    // A day later the old secret no longer signs: one signature, the new secret's.
    t.clock.advance(PREVIOUS_SECRET_GRACE_MS);
    await t.api('POST', '/api/v1/order', creds, order(service, 2));
    await receiver.waitFor((received) => received.length === 2);
    const later = receiver.received[1]!;
    expect(later.signature.split(' ')).toHaveLength(1);
    expect(later.verified, 'the old secret does not verify it').toBe(false);
    expect(later.signature).toBe(new Webhook(rotated.body.webhook.secret).sign(later.id, new Date(later.timestamp * 1000), later.body));
  });

  it('counts failing endpoints for /metrics as they are marked, changed, replayed, deleted and loaded at start-up', async () => {
    const failingGauge = async (): Promise<string | undefined> => /coa_webhook_failing_endpoints (\d+)\n/.exec((await t.admin('GET', '/metrics')).text)?.[1];
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) ids.push((await t.api('POST', '/api/v1/webhooks', creds, { url: `${URL_OK}/${i}` })).body.webhook.id);
    const directory = t.server.webhooks.directory;
    for (const id of ids.slice(0, 3)) await directory.markFailing(directory.get(id)!, 'a message failed for 24 hours');
    expect(await failingGauge()).toBe('3');
    // Marked again, rotated, disabled: still one failing endpoint each.
    await directory.markFailing(directory.get(ids[0]!)!, 'again');
    expect((await t.api('POST', `/api/v1/webhooks/${ids[0]}/rotate`, creds)).status).toBe(200);
    expect((await t.admin('PATCH', `/admin/v1/webhooks/${ids[1]}`, { enabled: false })).status).toBe(200);
    expect(await failingGauge()).toBe('3');
    expect((await t.admin('POST', `/admin/v1/webhooks/${ids[0]}/replay`)).status).toBe(200);
    expect((await t.api('DELETE', `/api/v1/webhooks/${ids[1]}`, creds)).status).toBe(200);
    expect((await t.api('DELETE', `/api/v1/webhooks/${ids[3]}`, creds)).status).toBe(200);
    expect(await failingGauge()).toBe('1');
    await t.restart();
    expect(await failingGauge()).toBe('1');
  });
});
