import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { retryDelayMs, RETRY_CAP_MS, newWebhookSecret, signatureHeader } from '../../src/webhooks/index.js';

describe('webhook retry schedule', () => {
  it('retries first within a second, doubles with jitter in the upper half of each step, and caps at an hour', () => {
    expect(retryDelayMs(1, 0)).toBe(500);
    expect(retryDelayMs(1, 0.999999)).toBeLessThanOrEqual(1000);
    expect(retryDelayMs(2, 0)).toBe(1000);
    expect(retryDelayMs(5, 0.5)).toBe(12_000);
    expect(retryDelayMs(40, 0.999999)).toBeLessThanOrEqual(RETRY_CAP_MS);
    expect(retryDelayMs(40, 0)).toBe(RETRY_CAP_MS / 2);
    expect(() => retryDelayMs(0, 0)).toThrow(/invariant/);
    // Attempts for at least 24 hours: the schedule never stops by itself, it only grows to the cap.
    let total = 0;
    let n = 0;
    while (total < 24 * 3_600_000) total += retryDelayMs(++n, 0.5);
    // About 13 doublings to the cap, then one attempt every 30–60 minutes.
    expect(n).toBeGreaterThan(30);
    expect(n).toBeLessThan(60);
  });
});

describe('Standard Webhooks signatures', () => {
  it('are what the standardwebhooks package computes and verifies, with every secret of a rotation', () => {
    const [a, b] = [newWebhookSecret(), newWebhookSecret()];
    const body = '{"type":"order.updated","timestamp":"2026-01-01T00:00:00.000Z","data":{}}';
    const ts = Math.floor(Date.now() / 1000);
    const header = signatureHeader([a, b], 'msg_1', ts, body);
    expect(header.split(' ')[0]).toBe(new Webhook(a).sign('msg_1', new Date(ts * 1000), body));
    for (const secret of [a, b]) {
      expect(new Webhook(secret).verify(body, { 'webhook-id': 'msg_1', 'webhook-timestamp': String(ts), 'webhook-signature': header })).toEqual(JSON.parse(body));
    }
    expect(() => new Webhook(newWebhookSecret()).verify(body, { 'webhook-id': 'msg_1', 'webhook-timestamp': String(ts), 'webhook-signature': header })).toThrow();
  });
});
