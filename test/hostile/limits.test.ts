/**
 * Every configurable limit is enforced at its boundary and can be
 * configured: body size (Content-Length and chunked), target length and
 * content, Idempotency-Key length, failed authentications per client IP.
 * Plus a slow-loris client, which uWebSockets.js drops on its own idle
 * timeout while other clients are served.
 */
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { loadConfig } from '../../src/app/config.js';
import { order, useServer, type Creds, type TestServer } from '../helpers/server.js';
import { http, rawRequest } from './support.js';

const TARGET = 'https://instagram.com/p/abc';
/** A service cheap enough that an account of 1,000 credits places every order these tests send. */
const CHEAP = { rate: '0.001', min: 1, max: 1000 };

/** A valid order whose JSON text is exactly `bytes` long (trailing whitespace is valid JSON). */
function paddedOrder(service: number, bytes: number, quantity = 1): string {
  const text = JSON.stringify(order(service, quantity));
  if (text.length > bytes) throw new Error('padding target too small');
  return text + ' '.repeat(bytes - text.length);
}

/** A raw POST /api/v1/order with a chunked body made of `chunks`. */
function chunkedOrder(creds: Creds, chunks: string[]): string[] {
  return [
    `POST /api/v1/order HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${creds.key}\r\nX-API-Secret: ${creds.secret}\r\n` +
      'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    ...chunks.map((c) => `${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`),
    '0\r\n\r\n',
  ];
}

function split(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

async function pendingOrders(t: TestServer): Promise<number> {
  return (await t.admin('GET', '/admin/v1/orders?status=pending&limit=500')).body.orders.length;
}

describe('body size limit', () => {
  const t = useServer({ services: { main: CHEAP }, accounts: { big: '1000' } });
  const small = useServer({ config: { bodyBytesMax: 1024 }, services: { main: CHEAP }, accounts: { small: '1000' } });

  it('defaults to 16 KiB', () => {
    expect(loadConfig([], {}).bodyBytesMax).toBe(16_384);
  });

  it('default: 16,384 bytes with an honest Content-Length pass the size check, 16,385 are 413 and place nothing', async () => {
    const at = await t.api('POST', '/api/v1/order', t.accounts.big, paddedOrder(t.services.main, 16_384));
    expect(at.status).toBe(201);
    const before = await pendingOrders(t);
    const over = await t.api('POST', '/api/v1/order', t.accounts.big, paddedOrder(t.services.main, 16_385));
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ ok: false, error: 'VALIDATION', limit: 16_384 });
    expect(typeof over.body.message).toBe('string');
    expect(await pendingOrders(t)).toBe(before);
  });

  it('default: a chunked body (no Content-Length) over 16 KiB is 413; one of exactly 16 KiB passes', async () => {
    const before = await pendingOrders(t);
    const over = await rawRequest(t.server.port, chunkedOrder(t.accounts.big, split(paddedOrder(t.services.main, 20_000), 1000)));
    expect(over.status).toBe(413);
    expect(JSON.parse(over.body.toString())).toMatchObject({ ok: false, error: 'VALIDATION', limit: 16_384 });
    const barelyOver = await rawRequest(t.server.port, chunkedOrder(t.accounts.big, split(paddedOrder(t.services.main, 16_385), 4096)));
    expect(barelyOver.status).toBe(413);
    expect(await pendingOrders(t)).toBe(before);
    const at = await rawRequest(t.server.port, chunkedOrder(t.accounts.big, split(paddedOrder(t.services.main, 16_384), 4096)));
    expect(at.status).toBe(201);
    expect(await pendingOrders(t)).toBe(before + 1);
  });

  it('default: a Content-Length over the limit is refused before any body byte is sent', async () => {
    const r = await rawRequest(
      t.server.port,
      `POST /api/v1/order HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${t.accounts.big.key}\r\nX-API-Secret: ${t.accounts.big.secret}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n`,
    );
    expect(r.status).toBe(413);
  });

  it('bodyBytesMax 1024: 1,024 bytes pass the size check and 1,025 are 413, with Content-Length and chunked', async () => {
    const before = await pendingOrders(small);
    const over = await small.api('POST', '/api/v1/order', small.accounts.small, paddedOrder(small.services.main, 1025));
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ ok: false, error: 'VALIDATION', limit: 1024 });
    const overChunked = await rawRequest(small.server.port, chunkedOrder(small.accounts.small, split(paddedOrder(small.services.main, 1025), 1000)));
    expect(overChunked.status).toBe(413);
    expect(await pendingOrders(small)).toBe(before);

    const at = await small.api('POST', '/api/v1/order', small.accounts.small, paddedOrder(small.services.main, 1024));
    expect(at.status).toBe(201);
    const atChunked = await rawRequest(small.server.port, chunkedOrder(small.accounts.small, split(paddedOrder(small.services.main, 1024), 1000)));
    expect(atChunked.status).toBe(201);
    expect(await pendingOrders(small)).toBe(before + 2);
    // The same 1,025 bytes that are too large here are fine on the default server.
    expect((await t.api('POST', '/api/v1/order', t.accounts.big, paddedOrder(t.services.main, 1025))).status).toBe(201);
  });

  it('bodyBytesMax 1024 applies to the admin API too', async () => {
    const over = await small.admin('POST', '/admin/v1/accounts', `{"name":"x"}${' '.repeat(1025 - 12)}`);
    expect(over.status).toBe(413);
    const at = await small.admin('POST', '/admin/v1/accounts', `{"name":"x"}${' '.repeat(1024 - 12)}`);
    expect(at.status).toBe(201);
  });
});

describe('order target and Idempotency-Key limits', () => {
  const t = useServer({ services: { main: CHEAP }, accounts: { limits: '1000' } });

  const place = (target: string, headers: Record<string, string> = {}) =>
    t.api('POST', '/api/v1/order', t.accounts.limits, { service: t.services.main, target, quantity: 1 }, headers);

  it('a target of 2,048 characters is accepted; 2,049 is 400 VALIDATION and places nothing', async () => {
    const base = 'https://instagram.com/p/';
    expect((await place(base + 'a'.repeat(2048 - base.length))).status).toBe(201);
    const before = await pendingOrders(t);
    for (const length of [2049, 2050, 4096, 10_000]) {
      const r = await place(base + 'a'.repeat(length - base.length));
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ ok: false, error: 'VALIDATION' });
      expect(r.body.message).toMatch(/2048|2,048/);
    }
    expect(await pendingOrders(t)).toBe(before);
  });

  it('a target with control characters or spaces is 400 VALIDATION', async () => {
    const before = await pendingOrders(t);
    for (const ch of ['\u0000', '\u0001', '\u0008', '\t', '\n', '\u000b', '\r', '\u001b', '\u001f', ' ', '\u007f']) {
      for (const target of [`${TARGET}${ch}`, `${TARGET}/a${ch}b`, `https://insta${ch}gram.com/p/abc`]) {
        const r = await place(target);
        expect(r.status, JSON.stringify(target)).toBe(400);
        expect(r.body.error).toBe('VALIDATION');
      }
    }
    expect(await pendingOrders(t)).toBe(before);
  });

  it('a target that is not an http(s) URL is 400 VALIDATION; http and https (any case) are accepted', async () => {
    const before = await pendingOrders(t);
    for (const target of [
      'ftp://instagram.com/p/abc', 'javascript:alert(1)', 'file:///etc/passwd', 'mailto:a@b.c', 'data:text/html,<b>x</b>', 'ws://x.com/',
      '//instagram.com/p/abc', 'instagram.com/p/abc', 'http:/instagram.com', 'http:instagram.com', 'httpx://x.com', 'xhttp://x.com', 'https:', '',
    ]) {
      const r = await place(target);
      expect(r.status, target).toBe(400);
      expect(r.body.error).toBe('VALIDATION');
    }
    expect(await pendingOrders(t)).toBe(before);
    expect((await place('http://instagram.com/p/abc')).status).toBe(201);
    expect((await place('HTTPS://INSTAGRAM.COM/p/abc')).status).toBe(201);
  });

  it('an Idempotency-Key of 255 characters is accepted (and replays); 256 is 400 VALIDATION', async () => {
    const key255 = 'k'.repeat(254) + '1';
    const first = await place(TARGET, { 'idempotency-key': key255 });
    expect(first.status).toBe(201);
    const replay = await place(TARGET, { 'idempotency-key': key255 });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.order).toBe(first.body.order);
    // The quoted form is the same key; its quotes do not count towards the 255.
    const quoted = await place(TARGET, { 'idempotency-key': `"${key255}"` });
    expect(quoted.body.order).toBe(first.body.order);

    const before = await pendingOrders(t);
    for (const key of ['k'.repeat(256), 'k'.repeat(1000), `"${'k'.repeat(256)}"`]) {
      const r = await place(TARGET, { 'idempotency-key': key });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ ok: false, error: 'VALIDATION' });
      expect(r.body.message).toMatch(/255/);
    }
    expect(await pendingOrders(t)).toBe(before);
  });
});

describe('failed authentications per client IP', () => {
  const clock = new ManualClock();
  const failuresPerMinute = 3;

  const t = useServer({ clock, config: { authFailuresPerMinute: failuresPerMinute }, services: { main: {} }, accounts: { 'ip-limited': '100' } });

  const wrong = (): Creds => ({ ...t.accounts['ip-limited'], secret: 'sec_wrong' });
  /** A balance request from another loopback source address (a different client IP). */
  const fromOtherIp = (c: Creds) =>
    rawRequest(t.server.port, `GET /api/v1/balance HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${c.key}\r\nX-API-Secret: ${c.secret}\r\n\r\n`, {
      localAddress: '127.0.0.2',
    });

  /** Spends 127.0.0.1's failed authentications until the next one is refused with 429, for a test that starts from a blocked address. */
  const blockLoopback = async (): Promise<void> => {
    let status = 0;
    for (let i = 0; i <= failuresPerMinute && status !== 429; i++) status = (await t.api('GET', '/api/v1/balance', wrong())).status;
    expect(status, `127.0.0.1 blocked after ${failuresPerMinute} failed authentications`).toBe(429);
  };

  it('defaults to 30 per minute', () => {
    expect(loadConfig([], {}).authFailuresPerMinute).toBe(30);
  });

  it('successes do not count; after 3 failures the 4th failure gets 429 RATE with Retry-After, while valid credentials from the same IP are served', async () => {
    for (let i = 0; i < 6; i++) expect((await t.api('GET', '/api/v1/balance', t.accounts['ip-limited'])).status).toBe(200);
    expect((await t.api('GET', '/api/v1/balance', wrong())).status).toBe(401);
    expect((await t.api('GET', '/api/v1/balance', null)).status).toBe(401);
    expect((await t.api('GET', '/api/v1/balance', { ...t.accounts['ip-limited'], key: 'key_unknown' })).status).toBe(401);

    for (const attempt of [wrong(), null, { ...t.accounts['ip-limited'], key: 'key_unknown' }]) {
      const blocked = await t.api('GET', '/api/v1/balance', attempt);
      expect(blocked.status).toBe(429);
      expect(blocked.body).toMatchObject({ ok: false, error: 'RATE' });
      const retryAfter = Number(blocked.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(blocked.body.retry_after).toBe(retryAfter);
    }

    // A blocked failed order places nothing; the valid customer behind the
    // same address (a shared NAT) is served on every endpoint meanwhile.
    const before = await pendingOrders(t);
    const order429 = await t.api('POST', '/api/v1/order', wrong(), order(t.services.main, 5));
    expect(order429.status).toBe(429);
    expect(order429.headers.get('retry-after')).not.toBeNull();
    expect(await pendingOrders(t)).toBe(before);
    expect((await t.api('GET', '/api/v1/balance', t.accounts['ip-limited'])).status).toBe(200);
    expect((await t.api('GET', '/api/v1/services', t.accounts['ip-limited'])).status).toBe(200);
    expect((await t.api('POST', '/api/v1/order', t.accounts['ip-limited'], order(t.services.main, 5))).status).toBe(201);
    expect(await pendingOrders(t)).toBe(before + 1);
    expect((await t.api('GET', '/api/v1/balance', wrong())).status).toBe(429);
  });

  it('API v2 shares the limit and serves a valid key from a blocked address (a reseller behind the same NAT)', async () => {
    const v2 = async (key: string): Promise<{ status: number; body: Record<string, unknown> }> => {
      const res = await fetch(`${t.url}/api/v2`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `key=${key}&action=balance` });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const issued = await t.admin('POST', `/admin/v1/accounts/${t.accounts['ip-limited'].id}/v2-key`);
    expect(issued.status).toBe(200);
    // 127.0.0.1 uses up its failures on v1: a failed v2 key is then refused as blocked.
    await blockLoopback();
    const blocked = await v2('0'.repeat(32));
    expect(blocked.body['error']).toMatch(/^Too many failed authentications from this address; retry in \d+ seconds\.$/);
    const served = await v2(issued.body.v2_key);
    expect(served.status).toBe(200);
    expect(served.body).toMatchObject({ balance: expect.any(String), currency: expect.any(String) });
  });

  it('the limit is per IP: another client address is not blocked and has its own count', async () => {
    await blockLoopback();
    expect((await fromOtherIp(wrong())).status).toBe(401);
    expect((await fromOtherIp(t.accounts['ip-limited'])).status).toBe(200);
    // 127.0.0.1 is still blocked.
    expect((await t.api('GET', '/api/v1/balance', wrong())).status).toBe(429);
  });

  it('recovers as the clock advances: Retry-After seconds later one more failure is allowed, a minute later the full 3', async () => {
    await blockLoopback();
    const retryAfter = Number((await t.api('GET', '/api/v1/balance', wrong())).headers.get('retry-after'));
    clock.advance(retryAfter * 1000 - 1000);
    if (retryAfter > 1) expect((await t.api('GET', '/api/v1/balance', wrong())).status).toBe(429);
    clock.advance(1000);
    // One token came back: one failure spends it, and the next failure is blocked again.
    expect((await t.api('GET', '/api/v1/balance', wrong())).status).toBe(401);
    expect((await t.api('GET', '/api/v1/balance', wrong())).status).toBe(429);

    clock.advance(60_000);
    for (let i = 0; i < 3; i++) expect((await t.api('GET', '/api/v1/balance', wrong())).status).toBe(401);
    expect((await t.api('GET', '/api/v1/balance', wrong())).status).toBe(429);
    expect((await t.api('POST', '/api/v1/order', t.accounts['ip-limited'], order(t.services.main, 5))).status).toBe(201);
  });
});

describe('limit edge cases found by testing', () => {
  const statuses: Record<string, number> = {};

  useServer({}, async (t) => {
    const service = await t.createService();
    const creds = await t.createAccount('c1', '100');
    for (const ch of ['\u0080', '\u0085', '\u009b', '\u009f']) {
      const r = await t.api('POST', '/api/v1/order', creds, { service, target: `${TARGET}/a${ch}b`, quantity: 5 });
      statuses[ch] = r.status;
    }
  });

  it('a target with a C1 control character (U+0080–U+009F) is 400 VALIDATION', () => {
    for (const status of Object.values(statuses)) expect(status).toBe(400);
  });
});

describe('slow loris', () => {
  const t = useServer({ accounts: { patient: '10' } });

  // Real time on purpose: uWebSockets.js drops idle HTTP connections after
  // about 10 s on its own timer (not configurable in this build).
  it('partial requests are closed by the server within 20 s while other clients are served', { timeout: 25_000 }, async () => {
    const started = Date.now();
    const open = (first: string | null): Promise<{ socket: Socket; closed: Promise<number> }> =>
      new Promise((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port: t.server.port });
        const closed = new Promise<number>((done) => socket.on('close', () => done(Date.now() - started)));
        socket.on('error', () => {});
        socket.on('connect', () => {
          if (first !== null) socket.write(first);
          resolve({ socket, closed });
        });
        socket.setTimeout(0);
        socket.once('error', reject);
      });
    const loris = await Promise.all([
      ...Array.from({ length: 10 }, () => open('GET /api/v1/balance HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Ke')),
      ...Array.from({ length: 5 }, () => open('GET /api/v1/bal')),
      ...Array.from({ length: 5 }, () =>
        open(
          `POST /api/v1/order HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${t.accounts.patient.key}\r\nX-API-Secret: ${t.accounts.patient.secret}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"service":',
        ),
      ),
      ...Array.from({ length: 5 }, () => open(null)),
    ]);
    let stillOpen = loris.length;
    const closedAt: number[] = [];
    for (const l of loris) {
      void l.closed.then((ms) => {
        closedAt.push(ms);
        stillOpen--;
      });
    }

    // Meanwhile other clients are served, promptly.
    const servedWhileOpen: number[] = [];
    while (stillOpen > 0 && Date.now() - started < 20_000) {
      const sent = Date.now();
      const [balance, health] = await Promise.all([
        http(`${t.url}/api/v1/balance`, 'GET', [['x-api-key', t.accounts.patient.key], ['x-api-secret', t.accounts.patient.secret]]),
        http(`${t.adminUrl}/healthz`, 'GET'),
      ]);
      expect(balance.status).toBe(200);
      expect(health.status).toBe(200);
      if (stillOpen > 0) servedWhileOpen.push(Date.now() - sent);
      await new Promise((r) => setTimeout(r, 250));
    }
    const all = await Promise.race([
      Promise.all(loris.map((l) => l.closed)),
      new Promise<null>((r) => setTimeout(() => r(null), Math.max(0, 20_000 - (Date.now() - started)))),
    ]);
    for (const l of loris) l.socket.destroy();
    expect(all, `${stillOpen} of ${loris.length} slow connections still open after 20 s`).not.toBeNull();
    expect(Math.max(...closedAt)).toBeLessThanOrEqual(20_000);
    expect(servedWhileOpen.length).toBeGreaterThanOrEqual(5);
  });
});
