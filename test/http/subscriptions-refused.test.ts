import { describe, expect, it } from 'vitest';
import { useServer, type Creds } from '../helpers/server.js';

/**
 * Subscriptions are not an order type of this server (docs/DECISIONS.md,
 * "Order types of the dialect"): no service can be given the type, and a
 * reseller's Subscriptions payload is refused by a sentence naming its first
 * field the service does not take, in both dialects, charging nothing.
 */
describe('Subscriptions orders', () => {
  let creds: Creds;
  let service: number;
  const subscription = { username: 'natgeo', min: 100, max: 200, posts: 5, old_posts: 0, delay: 30, expiry: '31/12/2026' };

  const t = useServer({}, async (t) => {
    creds = await t.createAccount('alice', '100');
    service = await t.createService();
  });

  it('are refused at the service, in v1 and in v2 JSON, and change nothing', async () => {
    const svc = await t.admin('POST', '/admin/v1/services', { platform: 'instagram', name: 'Auto likes', rate: '0.1', min: 100, max: 1000, type: 'Subscriptions' });
    expect(svc.status).toBe(400);
    expect(svc.body.message).toMatch(/^Field 'type' must be one of Default, .*Invites from Groups\.$/);
    expect(svc.body.message).not.toContain('Subscriptions');

    const v1 = await t.api('POST', '/api/v1/order', creds, { service, ...subscription });
    expect(v1.status).toBe(400);
    expect(v1.body).toMatchObject({ error: 'VALIDATION', message: expect.stringMatching(/^Field 'min' is not allowed;/) });

    const key = await t.issueV2Key(creds.id);
    const v2 = await fetch(`${t.url}/api/v2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key, action: 'add', service, ...subscription }) });
    expect(await v2.json()).toEqual({ error: "Field 'min' is not taken by Default orders; they take 'link', 'quantity', 'runs', 'interval'." });

    expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(100);
    expect((await t.admin('GET', `/admin/v1/orders?account=${creds.id}`)).body.orders ?? []).toEqual([]);
  });
});
