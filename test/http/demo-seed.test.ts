/**
 * What `npm start` seeds on an empty data directory lets a new user run the
 * examples of the README and the reseller guide as written: an order of each
 * kind they show, on the service ids they name, a cancel, and API v2's add.
 */
import { describe, expect, it } from 'vitest';
import { seedIfEmpty, type SeedResult } from '../../src/app/seed.js';
import { useServer, type Creds } from '../helpers/server.js';

let seed: SeedResult;
let creds: Creds;
const t = useServer({}, async (t) => {
  seed = (await seedIfEmpty(t.server.context))!;
  creds = { id: seed.accountId, key: seed.apiKey, secret: seed.apiSecret };
});

describe('the demo seed runs the examples of the README and the reseller guide', () => {
  it('custom comments on service 4, drip-feed on service 1 (charge 250), its cancel, and v2 add', async () => {
    const comments = await t.api('POST', '/api/v1/order', creds, { service: 4, target: 'https://instagram.com/p/x', comments: 'great!\nlove it' });
    expect(comments.status, comments.text).toBe(201);
    const drip = await t.api('POST', '/api/v1/order', creds, { service: 1, target: 'https://instagram.com/u', quantity: 100, runs: 5, interval: 30 });
    expect(drip.status, drip.text).toBe(201);
    expect(drip.body.charge).toBe(250);
    const canceled = await t.api('POST', '/api/v1/cancel', creds, { orders: [drip.body.order] });
    expect(canceled.body.orders[drip.body.order]).toEqual({ status: 'canceled', refund: 250 });
    const v2 = await fetch(`${t.url}/api/v2`, { method: 'POST', body: new URLSearchParams({ key: seed.v2Key, action: 'add', service: '1', link: 'https://instagram.com/p/abc', quantity: '1000' }) });
    expect(await v2.json()).toEqual({ order: expect.any(Number) });
    const services = (await t.api('GET', '/api/v1/services', creds)).body.services;
    expect(services[0]).toMatchObject({ id: 1, cancel: true, refill: true, dripfeed: true });
  });
});
