import { describe, expect, it } from 'vitest';
import { order, useServer } from '../helpers/server.js';

/** A rate limit small enough to spend in a few requests. */
const RATE_LIMIT = 3;

/** Every error code with its HTTP status, and bad input that changes nothing. */
describe('error catalogue over HTTP', () => {
  const t = useServer({ config: { bodyBytesMax: 1024 }, services: { main: { rate: '0.5', min: 10, max: 100 } }, accounts: { alice: '50', bob: '50' } });

  async function snapshot() {
    const accounts = await t.admin('GET', '/admin/v1/accounts');
    return { accounts: accounts.text, events: t.server.context.store.nextSeq };
  }

  function expectError(r: { status: number; body: any; headers: Headers }, status: number, code: string): void {
    expect(r.status).toBe(status);
    expect(r.body.ok).toBe(false);
    expect(r.body.error).toBe(code);
    expect(typeof r.body.message).toBe('string');
    expect(r.body.message.length).toBeGreaterThan(10);
    expect(r.body.request_id).toBe(r.headers.get('request-id'));
  }

  it('AUTH 401 for missing credentials, unknown key and wrong secret, with the same answer for the last two', async () => {
    expectError(await t.api('GET', '/api/v1/balance', null), 401, 'AUTH');
    const unknown = await t.api('GET', '/api/v1/balance', { ...t.accounts.alice, key: 'key_00000000000000000000000000000000' });
    const wrongSecret = await t.api('GET', '/api/v1/balance', { ...t.accounts.alice, secret: 'sec_nope' });
    expectError(unknown, 401, 'AUTH');
    expectError(wrongSecret, 401, 'AUTH');
    expect(unknown.body.message).toBe(wrongSecret.body.message);
  });

  it('BANNED 403 before RATE: a banned key whose rate limit is spent is told BANNED, and unbanning restores access', async () => {
    const banned = await t.createAccount('mallory', '10');
    await t.admin('PATCH', `/admin/v1/accounts/${banned.id}`, { rate_limit_per_minute: RATE_LIMIT });
    // Spend the whole minute: the next request is RATE.
    const spent: number[] = [];
    for (let i = 0; i < RATE_LIMIT; i++) spent.push((await t.api('GET', '/api/v1/balance', banned)).status);
    expect(spent).toEqual(Array.from({ length: RATE_LIMIT }, () => 200));
    expectError(await t.api('GET', '/api/v1/balance', banned), 429, 'RATE');
    await t.admin('PATCH', `/admin/v1/accounts/${banned.id}`, { banned: true });
    expectError(await t.api('GET', '/api/v1/balance', banned), 403, 'BANNED');
    expectError(await t.api('POST', '/api/v1/order', banned, order(t.services.main, 10)), 403, 'BANNED');
    await t.admin('PATCH', `/admin/v1/accounts/${banned.id}`, { banned: false });
    // Still RATE until the minute refills; then served.
    expectError(await t.api('GET', '/api/v1/balance', banned), 429, 'RATE');
    t.clock.advance(60_000);
    expect((await t.api('GET', '/api/v1/balance', banned)).status).toBe(200);
  });

  it('BALANCE 402 when the wallet is short, and nothing is debited', async () => {
    const poor = await t.createAccount('poor', '4.999999');
    const before = await snapshot();
    const r = await t.api('POST', '/api/v1/order', poor, order(t.services.main, 10));
    expectError(r, 402, 'BALANCE');
    expect(r.body).toMatchObject({ charge: 5, balance: 4.999999 });
    expect(await snapshot()).toEqual(before);
  });

  it('SERVICE 422 for unknown and disabled services', async () => {
    expectError(await t.api('POST', '/api/v1/order', t.accounts.alice, order(9999, 10)), 422, 'SERVICE');
    const off = await t.createService({ enabled: false });
    expectError(await t.api('POST', '/api/v1/order', t.accounts.alice, order(off, 10)), 422, 'SERVICE');
  });

  it('QTY 422 for integers outside min..max, 0 and negatives included, naming the range', async () => {
    for (const q of [0, -5, 9, 101]) {
      const r = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, q));
      expectError(r, 422, 'QTY');
      expect(r.body.message).toContain('between 10 and 100');
      expect(r.body).toMatchObject({ min: 10, max: 100 });
    }
  });

  it('VALIDATION 400 for malformed payloads, and each changes nothing', async () => {
    const before = await snapshot();
    const bad: unknown[] = [
      '{"service":1,',
      '[]',
      'null',
      '"x"',
      { target: 'https://x.com/a', quantity: 10 },
      { service: t.services.main, quantity: 10 },
      { service: t.services.main, target: 'https://x.com/a' },
      { ...order(t.services.main, 10), price: 0 },
      { ...order(t.services.main, 10), charge: 0 },
      { service: t.services.main, target: 'https://x.com/a', quantity: '10' },
      { service: t.services.main, target: 'https://x.com/a', quantity: 1.5 },
      '{"service":1,"target":"https://x.com/a","quantity":1e300}',
      '{"service":1,"target":"https://x.com/a","quantity":9007199254740993}',
      { service: '1', target: 'https://x.com/a', quantity: 10 },
      { service: t.services.main, target: 'ftp://x.com/a', quantity: 10 },
      { service: t.services.main, target: 'https://x.com/a b', quantity: 10 },
      { service: t.services.main, target: 'https://x.com/\u0000', quantity: 10 },
      { service: t.services.main, target: 'https://x.com/' + 'a'.repeat(2100), quantity: 10 },
      { service: t.services.main, target: 123, quantity: 10 },
      '{"__proto__":{"admin":true},"service":1,"target":"https://x.com/a","quantity":10}',
    ];
    for (const body of bad) {
      const r = await t.api('POST', '/api/v1/order', t.accounts.alice, body);
      expectError(r, r.status === 413 ? 413 : 400, 'VALIDATION');
    }
    const notUtf8 = await fetch(`${t.url}/api/v1/order`, {
      method: 'POST',
      headers: { 'x-api-key': t.accounts.alice.key, 'x-api-secret': t.accounts.alice.secret, 'content-type': 'application/json' },
      body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
    });
    expect(notUtf8.status).toBe(400);
    expect(await snapshot()).toEqual(before);
  });

  it('VALIDATION for a number JSON would round to another value, while the same values written exactly are orders', async () => {
    const before = await snapshot();
    const body = (quantity: string): string => `{"service":${t.services.main},"target":"https://x.com/a","quantity":${quantity}}`;
    // Each parses to a whole number in range (10, 10, 9007199254740990 > max, 0) that the client did not write.
    for (const quantity of ['10.0000000000000001', '9.99999999999999999', '9007199254740990.5', '1e-400']) {
      const r = await t.api('POST', '/api/v1/order', t.accounts.alice, body(quantity));
      expectError(r, 400, 'VALIDATION');
      expect(r.body.message).toContain(`The number ${quantity} cannot be read exactly`);
    }
    // The admin API too: this amount would have been a top-up of 5.
    const credit = await t.admin('POST', `/admin/v1/accounts/${t.accounts.alice.id}/credits`, '{"amount":5.0000000000000001,"reason":"typo"}');
    expect(credit.status).toBe(400);
    expect(credit.body.message).toContain('The number 5.0000000000000001 cannot be read exactly');
    expect(await snapshot()).toEqual(before);
    // Exact spellings of a whole number stay orders.
    for (const quantity of ['10.0', '1e1', '100e-1']) expect((await t.api('POST', '/api/v1/order', t.accounts.alice, body(quantity))).status).toBe(201);
  });

  it('VALIDATION 415 for a wrong content type and 413 for an oversized body', async () => {
    const before = await snapshot();
    const wrongType = await t.api('POST', '/api/v1/order', t.accounts.alice, JSON.stringify(order(t.services.main, 10)), { 'content-type': 'text/plain' });
    expectError(wrongType, 415, 'VALIDATION');
    const huge = await t.api('POST', '/api/v1/order', t.accounts.alice, { ...order(t.services.main, 10), target: 'https://x.com/' + 'a'.repeat(2000) });
    expectError(huge, 413, 'VALIDATION');
    for (const type of ['application/json-patch+json', 'application/jsonp', 'text/json']) {
      expectError(await t.api('POST', '/api/v1/order', t.accounts.alice, JSON.stringify(order(t.services.main, 10)), { 'content-type': type }), 415, 'VALIDATION');
    }
    expect(await snapshot()).toEqual(before);
    expect((await t.api('GET', '/api/v1/balance', t.accounts.alice)).status).toBe(200);
    // The media type is read in any case, with parameters and spaces.
    for (const type of ['application/json', 'Application/JSON', ' application/json ; charset=utf-8']) {
      expect((await t.api('POST', '/api/v1/order', t.accounts.alice, JSON.stringify(order(t.services.main, 10)), { 'content-type': type })).status).toBe(201);
    }
  });

  it('VALIDATION for a bad Idempotency-Key header', async () => {
    const r = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 10), { 'idempotency-key': 'x'.repeat(256) });
    expectError(r, 400, 'VALIDATION');
    expect(r.body.message).toContain('Idempotency-Key');
  });

  it('NOT_FOUND 404 for unknown routes, unknown orders and other accounts\' orders alike', async () => {
    expectError(await t.api('GET', '/api/v1/nothing', t.accounts.alice), 404, 'NOT_FOUND');
    expectError(await t.api('GET', '/', null), 404, 'NOT_FOUND');
    const mine = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 10));
    expect(mine.status).toBe(201);
    const theirs = await t.api('GET', `/api/v1/status?order=${mine.body.order}`, t.accounts.bob);
    const unknown = await t.api('GET', `/api/v1/status?order=${'A'.repeat(22)}`, t.accounts.bob);
    expectError(theirs, 404, 'NOT_FOUND');
    expectError(unknown, 404, 'NOT_FOUND');
    expect(theirs.body.message).toBe(unknown.body.message);
  });

  it('VALIDATION for a missing or malformed order id', async () => {
    expectError(await t.api('GET', '/api/v1/status', t.accounts.alice), 400, 'VALIDATION');
    expectError(await t.api('GET', '/api/v1/status?order=', t.accounts.alice), 400, 'VALIDATION');
    expectError(await t.api('GET', '/api/v1/status?order=../../etc', t.accounts.alice), 400, 'VALIDATION');
  });

  it('METHOD 405 with Allow for a wrong method on a known route', async () => {
    const r = await t.api('DELETE', '/api/v1/order', t.accounts.alice);
    expectError(r, 405, 'METHOD');
    expect(r.headers.get('allow')).toBe('POST');
    expectError(await t.api('POST', '/api/v1/balance', t.accounts.alice, {}), 405, 'METHOD');
  });

  it('runs checks in order: AUTH before VALIDATION, VALIDATION before SERVICE', async () => {
    expectError(await t.api('POST', '/api/v1/order', null, '{bad json'), 401, 'AUTH');
    expectError(await t.api('POST', '/api/v1/order', t.accounts.alice, { service: 9999, target: 'https://x.com', quantity: 'x' }), 400, 'VALIDATION');
    expectError(await t.api('POST', '/api/v1/order', t.accounts.alice, order(9999, 0)), 422, 'SERVICE');
  });

  it('keeps serving after all of the above', async () => {
    const r = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 10));
    expect(r.status).toBe(201);
  });
});
