/**
 * The set-up the webhook tests share: a receiver, the real server allowed
 * to post to it (loopback, http), its clock at real wall time (so
 * Webhook.verify's five-minute tolerance holds until a test moves it), a
 * funded account and a service; and `register`, which adds an endpoint and
 * tells the receiver its secret.
 */
import { expect } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { Config } from '../../src/app/config.js';
import { startTestServer, type Creds, type TestServer } from './server.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';

export interface WebhookTest {
  t: TestServer;
  receiver: Receiver;
  clock: ManualClock;
  creds: Creds;
  service: number;
  register(path?: string, events?: string[]): Promise<number>;
  close(): Promise<void>;
}

export async function startWebhookTest(options: { random: number; config?: Partial<Config>; windowMax?: number }): Promise<WebhookTest> {
  const receiver = await startReceiver();
  const clock = new ManualClock(1_000_000, Date.now());
  const t = await startTestServer({
    clock,
    config: { webhooksAllowHttp: true, webhooksAllowPrivate: true, ...options.config },
    // Deliveries are counted: they must not yield to a busy loop, which depends on real time.
    server: { random: () => options.random, webhookYield: false, ...(options.windowMax === undefined ? {} : { webhookWindowMax: options.windowMax }) },
  });
  const creds = await t.createAccount('reseller', '1000');
  const service = await t.createService({ rate: '1', min: 1, max: 100, refill: true, refill_days: 7, cancel: true });
  return {
    t,
    receiver,
    clock,
    creds,
    service,
    async register(path = '/hook', events = ['order.updated', 'refill.updated']) {
      const r = await t.api('POST', '/api/v1/webhooks', creds, { url: `${receiver.url}${path}`, events });
      expect(r.status, r.text).toBe(201);
      expect(r.body.webhook.secret).toMatch(/^whsec_/);
      receiver.setSecret(path, r.body.webhook.secret);
      return r.body.webhook.id;
    },
    async close() {
      await t.close();
      await receiver.close();
    },
  };
}
