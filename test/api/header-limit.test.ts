import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Creds, type TestServer } from '../helpers/server.js';

describe('request header size limit (HEADER_BYTES_MAX)', () => {
  let t: TestServer;
  let creds: Creds;
  beforeAll(async () => {
    t = await startTestServer({ config: { headerBytesMax: 1024 } });
    creds = await t.createAccount('h', '1');
  });
  afterAll(() => t.close());

  it('answers 431 VALIDATION when the headers exceed the configured limit, and serves normal requests', async () => {
    const big = await t.api('GET', '/api/v1/balance', creds, undefined, { 'x-padding': 'p'.repeat(1200) });
    expect(big.status).toBe(431);
    expect(big.body).toMatchObject({ ok: false, error: 'VALIDATION' });
    expect(big.body.message).toContain('1024 bytes');
    const fine = await t.api('GET', '/api/v1/balance', creds, undefined, { 'x-padding': 'p'.repeat(600) });
    expect(fine.status).toBe(200);
  });
});
