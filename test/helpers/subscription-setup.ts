/**
 * What the subscription tests share: a customer with 100 credits, an API
 * v2 key and a Subscriptions service at 0.25 a unit (10 to 1,000 units a
 * post); a day in milliseconds, an expiry day as panels write it
 * (DD/MM/YYYY, UTC), and the check that the server's verify finds nothing
 * broken.
 */
import { expect } from 'vitest';
import type { Creds, TestServer } from './server.js';

export const DAY_MS = 86_400_000;

/** The UTC day of `ms` as DD/MM/YYYY. */
export function ddmmyyyy(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getUTCDate()).padStart(2, '0')}/${String(d.getUTCMonth() + 1).padStart(2, '0')}/${d.getUTCFullYear()}`;
}

export async function verified(t: TestServer): Promise<void> {
  const r = await t.admin('GET', '/admin/v1/verify');
  expect(r.body.report?.firstBroken ?? null, r.text).toBe(null);
}

export async function subscriptionCustomer(t: TestServer): Promise<{ creds: Creds; key: string; service: number }> {
  const creds = await t.createAccount('alice', '100');
  const key = await t.issueV2Key(creds.id);
  const service = await t.createService({ name: 'Auto likes', rate: '0.25', min: 10, max: 1000, type: 'Subscriptions' });
  return { creds, key, service };
}
