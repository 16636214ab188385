/**
 * A restore end to end over HTTP: a snapshot of a running server with a
 * webhook endpoint, a new server started on the snapshot with the sealing
 * key the way the operator guide says, and deliveries still signed with the
 * endpoint's secret and verified by a local receiver. Without that key the
 * new server refuses to start, naming the key it needs; with
 * WEBHOOKS_ROTATE_SECRETS it starts, and the endpoint waits, disabled, for
 * a new secret.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { Config } from '../../src/app/config.js';
import { order, startTestServer, useScratchDirs, type Creds, type TestServer } from '../helpers/server.js';
import { startWebhookTest, type WebhookTest } from '../helpers/webhook-setup.js';
import type { Receiver } from '../helpers/webhook-receiver.js';

const KEY_FILE = 'webhook-secrets.key';

/** The restored server: the same webhook settings as the original, on the snapshot's directory. */
function startOn(dir: string, config: Partial<Config> = {}): Promise<TestServer> {
  return startTestServer({
    dir,
    clock: new ManualClock(1_000_000, Date.now()),
    config: { webhooksAllowHttp: true, webhooksAllowPrivate: true, ...config },
    server: { random: () => 0, webhookYield: false },
  });
}

function keyId(base64: string): string {
  return createHash('sha256').update(Buffer.from(base64.trim(), 'base64')).digest('hex').slice(0, 16);
}

async function placeAndReceive(t: TestServer, receiver: Receiver, creds: Creds, service: number): Promise<string> {
  const placed = await t.api('POST', '/api/v1/order', creds, order(service, 5));
  expect(placed.status, placed.text).toBe(201);
  await receiver.waitFor((r) => r.some((x) => x.json.data['order'] === placed.body.order));
  return placed.body.order;
}

describe('a restore from a snapshot', () => {
  const scratch = useScratchDirs();
  let w: WebhookTest | null = null;
  let restored: TestServer | null = null;
  afterEach(async () => {
    await restored?.close();
    restored = null;
    await w?.close();
    w = null;
  });

  /** A server with one endpoint that has received a signed delivery, snapshotted over the admin API. */
  async function snapshotWithEndpoint(): Promise<{ w: WebhookTest; out: string; webhook: number; key: string }> {
    w = await startWebhookTest({ random: 0 });
    const webhook = await w.register('/hook');
    await placeAndReceive(w.t, w.receiver, w.creds, w.service);
    expect(w.receiver.received.every((x) => x.verified)).toBe(true);
    const out = join(scratch(), 'snapshot');
    const taken = await w.t.admin('POST', '/admin/v1/snapshot', { out });
    expect(taken.status, taken.text).toBe(200);
    expect(taken.body.snapshot.verify.ok).toBe(true);
    // A snapshot holds LMDB's files only: the sealing key stays outside it.
    expect(existsSync(join(out, KEY_FILE))).toBe(false);
    return { w, out, webhook, key: readFileSync(join(w.t.dir, KEY_FILE), 'utf8') };
  }

  it('with the key file beside it, the restored server signs deliveries the receiver verifies with the secret it was given before', async () => {
    const { w, out } = await snapshotWithEndpoint();
    copyFileSync(join(w.t.dir, KEY_FILE), join(out, KEY_FILE));
    await w.t.close();
    restored = await startOn(out);
    const before = w.receiver.received.length;
    const id = await placeAndReceive(restored, w.receiver, w.creds, w.service);
    const delivered = w.receiver.received.slice(before).filter((x) => x.json.data['order'] === id);
    expect(delivered.length).toBeGreaterThan(0);
    expect(delivered.every((x) => x.verified && x.path === '/hook')).toBe(true);
  });

  it('with the key in WEBHOOKS_SECRET_KEY, the same', async () => {
    const { w, out, key } = await snapshotWithEndpoint();
    await w.t.close();
    restored = await startOn(out, { webhooksSecretKey: key.trim() });
    const id = await placeAndReceive(restored, w.receiver, w.creds, w.service);
    expect(w.receiver.received.filter((x) => x.json.data['order'] === id).every((x) => x.verified)).toBe(true);
  });

  it('without the key, the server refuses to start, names the key it needs by its id, and makes no key of its own', async () => {
    const { w, out, key } = await snapshotWithEndpoint();
    await w.t.close();
    const refused = startOn(out);
    await expect(refused).rejects.toThrow(`sealed with the key whose id is ${keyId(key)}`);
    await expect(refused).rejects.toThrow(/WEBHOOKS_SECRET_KEY is not set and .*webhook-secrets\.key does not exist.*WEBHOOKS_ROTATE_SECRETS=true/);
    expect(existsSync(join(out, KEY_FILE))).toBe(false);
    // Given the key afterwards, it starts.
    writeFileSync(join(out, KEY_FILE), key, { mode: 0o600 });
    restored = await startOn(out);
  });

  it('with another key, the server refuses to start, naming both keys', async () => {
    const { w, out, key } = await snapshotWithEndpoint();
    await w.t.close();
    const other = Buffer.alloc(32, 7).toString('base64');
    await expect(startOn(out, { webhooksSecretKey: other })).rejects.toThrow(
      `sealed with the key whose id is ${keyId(key)}, and they do not open with this server's key from WEBHOOKS_SECRET_KEY (id ${keyId(other)})`,
    );
  });

  it('with WEBHOOKS_ROTATE_SECRETS the endpoint gets a new secret and is disabled; rotated and enabled, it delivers signed with the new secret', async () => {
    const { w, out, webhook } = await snapshotWithEndpoint();
    await w.t.close();
    restored = await startOn(out, { webhooksRotateSecrets: true });
    const listed = await restored.api('GET', '/api/v1/webhooks', w.creds);
    expect(listed.body.webhooks).toEqual([expect.objectContaining({ id: webhook, enabled: false })]);
    // Nothing is sent to it while it is disabled.
    const before = w.receiver.received.length;
    const placed = await restored.api('POST', '/api/v1/order', w.creds, order(w.service, 5));
    expect(placed.status).toBe(201);
    const rotated = await restored.api('POST', `/api/v1/webhooks/${webhook}/rotate`, w.creds);
    expect(rotated.status, rotated.text).toBe(200);
    w.receiver.setSecret('/hook', rotated.body.webhook.secret);
    const enabled = await restored.admin('PATCH', `/admin/v1/webhooks/${webhook}`, { enabled: true });
    expect(enabled.status, enabled.text).toBe(200);
    const id = await placeAndReceive(restored, w.receiver, w.creds, w.service);
    const after = w.receiver.received.slice(before);
    expect(after.every((x) => x.json.data['order'] === id && x.verified)).toBe(true);
    // The new key is recorded: a restart without the flag starts.
    await restored.restart({ webhooksRotateSecrets: false });
  });
});
