/**
 * One access-log line at info for every answered request, on both
 * listeners: method, route pattern, status, error code, duration, request id
 * and account, with an ISO-8601 time, and never a key, a secret or the
 * admin token.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/platform/log.js';
import { ADMIN_TOKEN, order, useServer } from '../helpers/server.js';

const lines: string[] = [];
const log = createLogger('info', new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }) as never);
const t = useServer({ services: { main: {} }, accounts: { buyer: '100' }, server: { log } });

/** The access-log lines written since `from`, parsed. */
function accessLines(from: number): Record<string, unknown>[] {
  return lines
    .slice(from)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line['msg'] === 'request');
}

describe('the access log', () => {
  it('logs each answered request once, with its route pattern, status, duration, request id and account', async () => {
    const from = lines.length;
    const placed = await t.api('POST', '/api/v1/order', t.accounts.buyer, order(t.services.main, 10));
    expect(placed.status, placed.text).toBe(201);
    const status = await t.api('GET', `/api/v1/status?order=${placed.body.order}`, t.accounts.buyer);
    const refused = await t.api('GET', '/api/v1/balance', { id: 0, key: t.accounts.buyer.key, secret: 'wrong' });
    const admin = await t.admin('GET', `/admin/v1/accounts/${t.accounts.buyer.id}`);
    const logged = accessLines(from);
    expect(logged).toHaveLength(4);
    const [orderLine, statusLine, refusedLine, adminLine] = logged;
    expect(orderLine).toMatchObject({ level: 30, method: 'POST', route: '/api/v1/order', status: 201, code: null, account: t.accounts.buyer.id, requestId: placed.headers.get('request-id') });
    expect(orderLine!['durationMs']).toEqual(expect.any(Number));
    expect(orderLine!['time']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // The route, never the URL: the query stays out of the log.
    expect(statusLine).toMatchObject({ method: 'GET', route: '/api/v1/status', status: 200, requestId: status.headers.get('request-id') });
    expect(refusedLine).toMatchObject({ route: '/api/v1/balance', status: 401, code: 'AUTH', account: null, requestId: refused.headers.get('request-id') });
    expect(adminLine).toMatchObject({ method: 'GET', route: '/admin/v1/accounts/:id', status: 200, account: null, requestId: admin.headers.get('request-id') });
    const text = lines.slice(from).join('');
    for (const secret of [t.accounts.buyer.key, t.accounts.buyer.secret, ADMIN_TOKEN, placed.body.order as string]) expect(text).not.toContain(secret);
  });

  it("an API v2 request logs its route and account, never the key in its form", async () => {
    const key = await t.issueV2Key(t.accounts.buyer.id);
    const from = lines.length;
    const balance = await t.v2({ key, action: 'balance' });
    expect(balance.status).toBe(200);
    const logged = accessLines(from);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ method: 'POST', route: '/api/v2', status: 200, account: t.accounts.buyer.id });
    expect(lines.slice(from).join('')).not.toContain(key);
  });

  it('the /metrics answer is counted and logged like any other', async () => {
    const from = lines.length;
    const metrics = await t.admin('GET', '/metrics');
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(accessLines(from)).toMatchObject([{ route: '/metrics', status: 200 }]);
    const again = (await t.admin('GET', '/metrics')).text;
    expect(again).toMatch(/^coa_http_requests_total\{route="\/metrics",status="200",code=""\} 1$/m);
    // prom-client's default process figures are served beside the server's own.
    expect(again).toMatch(/^nodejs_eventloop_lag_seconds \S+$/m);
    expect(again).toMatch(/^nodejs_heap_size_used_bytes \S+$/m);
  });
});
