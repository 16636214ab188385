import { describe, expect, it } from 'vitest';
import { useServer, withServer } from '../helpers/server.js';

describe('request header size limit (HEADER_BYTES_MAX)', () => {
  const t = useServer({ config: { headerBytesMax: 1024 }, accounts: { h: '1' } });

  it('answers 431 VALIDATION when the headers exceed the configured limit, and serves normal requests', async () => {
    const big = await t.api('GET', '/api/v1/balance', t.accounts.h, undefined, { 'x-padding': 'p'.repeat(1200) });
    expect(big.status).toBe(431);
    expect(big.body).toMatchObject({ ok: false, error: 'VALIDATION' });
    expect(big.body.message).toContain('1024 bytes');
    const fine = await t.api('GET', '/api/v1/balance', t.accounts.h, undefined, { 'x-padding': 'p'.repeat(600) });
    expect(fine.status).toBe(200);
  });
});

describe('order target length limit (TARGET_CHARS_MAX)', () => {
  it('refuses targets longer than the configured limit and accepts one at the limit', async () => {
    await withServer({ config: { targetCharsMax: 40 } }, async (t) => {
      const service = await t.createService({ rate: '1', min: 1, max: 10 });
      const creds = await t.createAccount('t', '10');
      const atLimit = 'https://example.com/' + 'a'.repeat(20);
      expect(atLimit.length).toBe(40);
      expect((await t.api('POST', '/api/v1/order', creds, { service, target: atLimit, quantity: 1 })).status).toBe(201);
      const over = await t.api('POST', '/api/v1/order', creds, { service, target: atLimit + 'b', quantity: 1 });
      expect(over.status).toBe(400);
      expect(over.body.message).toContain('at most 40 characters');
    });
  });

  it('is checked once at start-up: out of range is refused with a sentence naming the variable', async () => {
    const { loadConfig } = await import('../../src/app/config.js');
    expect(() => loadConfig([], { TARGET_CHARS_MAX: '5000' })).toThrow(/TARGET_CHARS_MAX/);
    expect(loadConfig([], {}).targetCharsMax).toBe(2048);
  });
});
