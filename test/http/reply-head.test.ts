/**
 * The head of a reply as it goes over the wire: the status line, then each
 * header once, in a well-formed line of its own: what any HTTP client
 * relies on before it reads a byte of the body. The server writes the
 * whole head in one call into uWS, from text it builds itself, so a line
 * break missing or doubled there would show here first.
 */
import { describe, expect, it } from 'vitest';
import { order, useServer, type Creds } from '../helpers/server.js';
import { rawRequest } from '../hostile/support.js';

function request(method: string, path: string, creds: Creds, body = ''): string {
  const length = body === '' ? '' : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${creds.key}\r\nX-API-Secret: ${creds.secret}\r\n${length}\r\n`;
}

/** Each header name, in the order of first appearance, with how often it came. */
function names(headers: Map<string, string[]>): Array<[string, number]> {
  return [...headers].map(([name, values]) => [name, values.length]);
}

/** A counted answer's header names in wire order, each once: the server's own, then `extra`, then uWS's Date and Content-Length. */
function countedHead(...extra: string[]): Array<[string, number]> {
  return ['content-type', 'request-id', 'ratelimit-policy', 'ratelimit', ...extra, 'date', 'content-length'].map((name): [string, number] => [name, 1]);
}

describe("a reply's head", () => {
  const t = useServer({ config: { defaultRateLimitPerMinute: 2 }, services: { main: {} }, accounts: { alice: '100' } });

  it('an order: 201, Content-Type, Request-Id and the rate-limit pair once each, then Date and Content-Length from uWS', async () => {
    const body = JSON.stringify(order(t.services.main, 1));
    const r = await rawRequest(t.server.port, request('POST', '/api/v1/order', t.accounts.alice, body) + body);
    expect(r.status).toBe(201);
    expect(names(r.headers)).toEqual(countedHead());
    expect(r.headers.get('content-type')).toEqual(['application/json']);
    expect(r.headers.get('request-id')![0]).toMatch(/^req_[A-Za-z0-9_-]+$/);
    expect(r.headers.get('ratelimit-policy')).toEqual(['"default";q=2;w=60']);
    expect(r.headers.get('ratelimit')).toEqual(['"default";r=1;t=30']);
    expect(JSON.parse(r.body.toString())).toMatchObject({ ok: true, status: 'pending' });
  });

  it("a refusal with headers of its own: 429 carries Retry-After after the rate-limit pair; HEAD gets the head and no body", async () => {
    const spender = await t.createAccount('spender', '100');
    for (let i = 0; i < 2; i++) expect((await rawRequest(t.server.port, request('GET', '/api/v1/balance', spender))).status).toBe(200);
    const refused = await rawRequest(t.server.port, request('GET', '/api/v1/balance', spender));
    expect(refused.status).toBe(429);
    expect(names(refused.headers)).toEqual(countedHead('retry-after'));
    expect(JSON.parse(refused.body.toString())).toMatchObject({ ok: false, error: 'RATE' });
    const head = await fetch(`${t.url}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect([...head.headers.keys()].sort()).toEqual(['content-length', 'content-type', 'date', 'request-id']);
    expect(head.headers.get('content-length')).toBe(String('{"ok":true}'.length));
    expect(await head.text()).toBe('');
  });
});
