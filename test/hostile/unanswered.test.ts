/**
 * Valid HTTP/1.1 that this uWebSockets.js release (20.30.0-unofficial.0)
 * refuses before any handler runs, so the server cannot answer it
 * (docs/RELIABILITY.md and docs/deployment.md say what a reverse proxy in
 * front should do). Its parser accepts header names of
 * letters, digits and `-` only, and request targets in origin form (`/…`)
 * only; a request without `Host` is dropped at once. None of these reaches
 * `app.any('/*')`, and the binding has no parser-error hook, so no 400 can be
 * sent from JavaScript: the connection gets no answer and is closed at once
 * (no Host) or by uWS's idle timeout (about 10 s, not configurable here).
 *
 * These tests pin that behaviour with raw sockets and short timeouts (they
 * never wait for the idle timeout): if a uWS release starts answering these
 * requests, they fail, and the docs must be brought up to date. Each also
 * checks that the server keeps serving.
 */
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/server.js';
import { rawRequest } from './support.js';

describe('valid HTTP/1.1 that uWS refuses unanswered', () => {
  const t = useServer({ accounts: { probe: '10' } });

  const auth = (): string => `X-API-Key: ${t.accounts.probe.key}\r\nX-API-Secret: ${t.accounts.probe.secret}\r\n`;
  const WAIT_MS = 1_500;

  it('control: the same request in the accepted form is answered 200 at once', async () => {
    const r = await rawRequest(t.server.port, `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\n${auth()}\r\n`, { timeoutMs: WAIT_MS });
    expect(r.status).toBe(200);
  });

  const held: Array<[string, () => string]> = [
    ['a header name with `_` (X_Forwarded_For)', () => `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nX_Forwarded_For: 203.0.113.7\r\n${auth()}\r\n`],
    ['a header name with `.` (A.b)', () => `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nA.b: c\r\n${auth()}\r\n`],
    ['a header name with other tchar (A~b, A+b)', () => `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nA~b: c\r\nA+b: d\r\n${auth()}\r\n`],
    ['an absolute-form request line', () => `GET http://x/api/v1/balance HTTP/1.1\r\nHost: x\r\n${auth()}\r\n`],
    ['an asterisk-form request line (OPTIONS *)', () => 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n'],
  ];
  it.concurrent.each(held)('%s: no answer; the connection stays open until uWS drops it', async (_name, request) => {
    const r = await rawRequest(t.server.port, request(), { timeoutMs: WAIT_MS });
    expect({ status: r.status, closed: r.closed, timedOut: r.timedOut }).toEqual({ status: null, closed: false, timedOut: true });
    expect((await t.api('GET', '/api/v1/balance', t.accounts.probe)).status).toBe(200);
  });

  it('a request without Host: no answer, the connection is closed at once', async () => {
    const r = await rawRequest(t.server.port, `GET /api/v1/balance HTTP/1.1\r\n${auth()}\r\n`, { timeoutMs: WAIT_MS });
    expect({ status: r.status, closed: r.closed, timedOut: r.timedOut }).toEqual({ status: null, closed: true, timedOut: false });
    expect((await t.api('GET', '/api/v1/balance', t.accounts.probe)).status).toBe(200);
  });
});
