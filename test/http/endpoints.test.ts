import { describe, expect, it } from 'vitest';
import { order, useServer } from '../helpers/server.js';

describe('customer endpoints over HTTP', () => {
  const t = useServer({ services: { main: { rate: '0.1', min: 1, max: 1000 } }, accounts: { alice: '100' } });

  it('GET /balance reports credits and the plan', async () => {
    const r = await t.api('GET', '/api/v1/balance', t.accounts.alice);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, credits: 100, unlimited: false, unlimited_expires: null });
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('request-id')).toMatch(/^req_/);
  });

  it('GET /services lists only enabled services with exact rates', async () => {
    const disabled = await t.createService({ name: 'Hidden', enabled: false });
    const r = await t.api('GET', '/api/v1/services', t.accounts.alice);
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
    expect(r.body.services).toContainEqual({
      id: t.services.main,
      platform: 'instagram',
      name: 'Followers',
      rate: 0.1,
      min: 1,
      max: 1000,
      category: '',
      type: 'Default',
      refill: false,
      refill_days: 30,
      cancel: false,
      dripfeed: false,
      description: '',
      average_time: null,
    });
    expect(r.body.services.map((s: { id: number }) => s.id)).not.toContain(disabled);
  });

  it('POST /order charges quantity × rate exactly: 0.1 × 3 = 0.3', async () => {
    const r = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 3));
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ ok: true, charge: 0.3, status: 'pending', balance: 99.7 });
    expect(r.text).toContain('"charge":0.3,');
    expect(r.body.order).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const balance = await t.api('GET', '/api/v1/balance', t.accounts.alice);
    expect(balance.body.credits).toBe(99.7);
  });

  it('GET /status returns the order as placed', async () => {
    const placed = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 7));
    expect(Number.isSafeInteger(placed.body.number) && placed.body.number >= 1).toBe(true);
    const r = await t.api('GET', `/api/v1/status?order=${placed.body.order}`, t.accounts.alice);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, order: placed.body.order, number: placed.body.number, status: 'pending', quantity: 7, charge: 0.7, start_count: null, remains: 7 });
  });

  it('an order id spelled differently in its last character\'s unused bits is NOT_FOUND, on the API and the admin API', async () => {
    const placed = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 7));
    const id: string = placed.body.order;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelled = id.slice(0, 21) + alphabet[alphabet.indexOf(id[21]!) ^ 1];
    expect(Buffer.from(respelled, 'base64url').equals(Buffer.from(id, 'base64url'))).toBe(true);
    const r = await t.api('GET', `/api/v1/status?order=${respelled}`, t.accounts.alice);
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('NOT_FOUND');
    expect((await t.admin('GET', `/admin/v1/orders/${respelled}`)).status).toBe(404);
    expect((await t.api('GET', `/api/v1/status?order=${id}`, t.accounts.alice)).status).toBe(200);
  });

  it('order ids are unique and random, not sequential', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) ids.add((await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 1))).body.order);
    expect(ids.size).toBe(20);
  });

  it('an order keeps the rate it was placed with when the rate changes', async () => {
    const placed = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 10));
    expect(placed.body.charge).toBe(1);
    const patched = await t.admin('PATCH', `/admin/v1/services/${t.services.main}`, { rate: 0.25 });
    expect(patched.body.service.rate).toBe(0.25);
    const status = await t.api('GET', `/api/v1/status?order=${placed.body.order}`, t.accounts.alice);
    expect(status.body.charge).toBe(1);
    const next = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 10));
    expect(next.body.charge).toBe(2.5);
    await t.admin('PATCH', `/admin/v1/services/${t.services.main}`, { rate: '0.1' });
  });

  it("every authenticated response carries the draft's rate-limit headers, and by default not the X-RateLimit-* trio", async () => {
    const r = await t.api('GET', '/api/v1/balance', t.accounts.alice);
    expect(r.headers.get('ratelimit-policy')).toBe('"default";q=1000000;w=60');
    expect(r.headers.get('ratelimit')).toMatch(/^"default";r=\d+;t=\d+$/);
    expect([...r.headers.keys()].filter((name) => name.startsWith('x-ratelimit'))).toEqual([]);
  });

  it('serves the OpenAPI document without credentials', async () => {
    const r = await t.api('GET', '/api/v1/openapi.json', null);
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    expect(Object.keys(r.body.paths)).toEqual(
      expect.arrayContaining(['/api/v1/balance', '/api/v1/services', '/api/v1/order', '/api/v1/status']),
    );
  });
});
