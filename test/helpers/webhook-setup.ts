/**
 * The set-up the webhook tests share: a receiver, the real server allowed
 * to post to it (loopback, http), its clock at real wall time (so
 * Webhook.verify's five-minute tolerance holds until a test moves it), a
 * funded account and a service; and `register`, which adds an endpoint and
 * tells the receiver its secret. `startWebhookTest` makes one inside a
 * test; `useWebhookTest` makes a fresh one for every test of a file.
 */
import { afterEach, beforeEach, expect } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { Config } from '../../src/app/config.js';
import { startTestServer, useServer, type Creds, type FixtureOptions, type TestServer } from './server.js';
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

export interface WebhookOptions {
  random: number;
  config?: Partial<Config>;
  windowMax?: number;
}

function serverOptions(options: WebhookOptions): FixtureOptions {
  return {
    config: { webhooksAllowHttp: true, webhooksAllowPrivate: true, ...options.config },
    // Deliveries are counted: they must not yield to a busy loop, which depends on real time.
    server: { random: () => options.random, webhookYield: false, ...(options.windowMax === undefined ? {} : { webhookWindowMax: options.windowMax }) },
  };
}

const wallClock = (): ManualClock => new ManualClock(1_000_000, Date.now());
const fundedAccount = (t: TestServer): Promise<Creds> => t.createAccount('reseller', '1000');
const refillableService = (t: TestServer): Promise<number> => t.createService({ rate: '1', min: 1, max: 100, refill: true, refill_days: 7, cancel: true });

async function register(t: TestServer, receiver: Receiver, creds: Creds, path = '/hook', events = ['order.updated', 'refill.updated']): Promise<number> {
  const r = await t.api('POST', '/api/v1/webhooks', creds, { url: `${receiver.url}${path}`, events });
  expect(r.status, r.text).toBe(201);
  expect(r.body.webhook.secret).toMatch(/^whsec_/);
  receiver.setSecret(path, r.body.webhook.secret);
  return r.body.webhook.id;
}

export async function startWebhookTest(options: WebhookOptions): Promise<WebhookTest> {
  const receiver = await startReceiver();
  const clock = wallClock();
  const t = await startTestServer({ clock, ...serverOptions(options) });
  const creds = await fundedAccount(t);
  const service = await refillableService(t);
  return {
    t,
    receiver,
    clock,
    creds,
    service,
    register: (path, events) => register(t, receiver, creds, path, events),
    async close() {
      await t.close();
      await receiver.close();
    },
  };
}

/**
 * A fresh webhook set-up for every test of the enclosing block (or file):
 * the returned object reads the current test's receiver, clock, account and
 * service; its server is closed and its receiver stopped after each test.
 */
export function useWebhookTest(options: WebhookOptions): Omit<WebhookTest, 'close'> {
  let receiver: Receiver | null = null;
  let creds: Creds | null = null;
  let service: number | null = null;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(() => receiver?.close());
  const t = useServer({ perTest: true, late: () => ({ clock: wallClock() }), ...serverOptions(options) }, async (t) => {
    creds = await fundedAccount(t);
    service = await refillableService(t);
  });
  const current = <T>(value: T | null): T => {
    if (value === null) throw new Error('the webhook set-up is made before each test: read it inside a test');
    return value;
  };
  return {
    t,
    get receiver() {
      return current(receiver);
    },
    get clock() {
      return t.clock;
    },
    get creds() {
      return current(creds);
    },
    get service() {
      return current(service);
    },
    register: (path, events) => register(t, current(receiver), current(creds), path, events),
  };
}
