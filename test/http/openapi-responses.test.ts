/**
 * The check the test helpers run on every v1 response (test/helpers/openapi-check.ts)
 * holds real answers to the document and names each way an answer departs from it.
 */
import { describe, expect, it } from 'vitest';
import { openApiProblems } from '../helpers/openapi-check.js';
import { useServer } from '../helpers/server.js';

describe('responses against the OpenAPI document', () => {
  const t = useServer({ services: { main: {} }, accounts: { alice: '10' } });

  it('real answers match: a balance, an order refused for its balance, an unknown path, a method a path does not take', async () => {
    const balance = await t.api('GET', '/api/v1/balance', t.accounts.alice);
    expect(balance.headers.get('ratelimit-policy')).toMatch(/^"default";q=\d+;w=60$/);
    const poor = await t.api('POST', '/api/v1/order', t.accounts.alice, { service: t.services.main, target: 'https://x.test/p', quantity: 1000 });
    expect(poor.body).toMatchObject({ error: 'BALANCE', charge: 100, balance: 10 });
    expect((await t.api('GET', '/api/v1/nowhere', t.accounts.alice)).status).toBe(404);
    const wrong = await t.api('PUT', '/api/v1/balance', t.accounts.alice);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
  });

  it('names an undeclared status, an undeclared or missing header, a bad header value, and a body the schema refuses', async () => {
    const real = await t.api('GET', '/api/v1/balance', t.accounts.alice);
    const headers = (change: (h: Headers) => void) => {
      const copy = new Headers(real.headers);
      change(copy);
      return copy;
    };
    expect(openApiProblems('GET', '/api/v1/balance', 200, real.headers, real.text)).toEqual([]);
    expect(openApiProblems('GET', '/api/v1/balance', 402, real.headers, real.text)).toEqual([
      'GET /api/v1/balance → 402: the document declares no such status for this operation',
    ]);
    expect(openApiProblems('GET', '/api/v1/balance', 200, headers((h) => h.set('x-debug', '1')), real.text)).toEqual([
      'GET /api/v1/balance → 200: header x-debug is not declared for this response',
    ]);
    expect(openApiProblems('GET', '/api/v1/balance', 200, headers((h) => h.delete('request-id')), real.text)).toEqual([
      'GET /api/v1/balance → 200: required header request-id is missing',
    ]);
    expect(openApiProblems('GET', '/api/v1/balance', 200, headers((h) => h.set('x-ratelimit-remaining', 'many')), real.text)[0]).toMatch(
      /^GET \/api\/v1\/balance → 200: header x-ratelimit-remaining: "many" .*must be integer/,
    );
    const extra = JSON.stringify({ ...real.body, debug: true });
    expect(openApiProblems('GET', '/api/v1/balance', 200, real.headers, extra)[0]).toMatch(/must NOT have additional properties .*debug/);
    const wrongType = JSON.stringify({ ...real.body, credits: '10' });
    expect(openApiProblems('GET', '/api/v1/balance', 200, real.headers, wrongType)[0]).toMatch(/\/credits must be number/);
    expect(openApiProblems('GET', '/api/v1/nowhere', 200, real.headers, real.text)).toEqual(['GET /api/v1/nowhere → 200: the document declares no such status for this request']);
  });
});
