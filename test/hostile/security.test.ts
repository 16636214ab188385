/**
 * Security properties of the running server: secrets never reach a log line,
 * the admin API is closed without its token and bound to loopback by default,
 * authentication failures do not tell an unknown key from a wrong secret,
 * secrets are long random strings, and rotation retires the old secret.
 */
import { createHash } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.js';
import { createLogger } from '../../src/platform/log.js';
import { startServer } from '../../src/app/server.js';
import { ADMIN_TOKEN, order, tempDir, useServer, type Creds } from '../helpers/server.js';
import { http, rawRequest } from './support.js';

const sha256hex = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('(a) no secret in any log line, at level trace', () => {
  const lines: string[] = [];
  const secrets: string[] = [];
  const log = createLogger('trace', { write: (line: string) => void lines.push(line) });

  useServer({ server: { log }, config: { defaultRateLimitPerMinute: 5, authFailuresPerMinute: 1_000 } }, async (t) => {
    const service = await t.createService({ rate: '0.1', min: 1, max: 1000 });
    // Accounts (their secrets come back in the admin answer), top-ups, rotations.
    const accounts: Creds[] = [];
    for (const name of ['alice', 'bob', 'carol']) {
      const c = await t.createAccount(name, '100');
      accounts.push(c);
      secrets.push(c.secret);
    }
    for (const c of accounts.slice(0, 2)) {
      const rotated = await t.admin('POST', `/admin/v1/accounts/${c.id}/rotate-secret`);
      expect(rotated.status).toBe(200);
      secrets.push(rotated.body.api_secret);
      c.secret = rotated.body.api_secret;
    }
    const [alice, bob, carol] = accounts as [Creds, Creds, Creds];
    // Authenticated requests with right and wrong secrets, an order, an order with a bad body.
    expect((await t.api('GET', '/api/v1/balance', alice)).status).toBe(200);
    expect((await t.api('POST', '/api/v1/order', alice, order(service, 3), { 'idempotency-key': 'log-test-1' })).status).toBe(201);
    expect((await t.api('POST', '/api/v1/order', bob, '{"service":1,"target":"https://x/","quantity":"ten"}')).status).toBe(400);
    expect((await t.api('POST', '/api/v1/order', bob, '{not json')).status).toBe(400);
    for (const wrong of [secrets[0]!, 'sec_wrong', carol.secret + 'x']) {
      expect((await t.api('GET', '/api/v1/balance', { ...alice, secret: wrong })).status).toBe(401);
    }
    expect((await t.api('GET', '/api/v1/balance', { ...carol, key: 'key_unknown' })).status).toBe(401);
    // Rate-limit abuse is logged (with a 5/minute limit, the 6th request is refused).
    for (let i = 0; i < 8; i++) await t.api('GET', '/api/v1/services', carol);
    // Admin requests with the token, and with wrong ones.
    expect((await t.admin('GET', '/admin/v1/accounts')).status).toBe(200);
    expect((await t.admin('GET', '/admin/v1/stats')).status).toBe(200);
    expect((await t.admin('PATCH', `/admin/v1/accounts/${bob.id}`, { rate_limit_per_minute: 100, reason: 'log test' })).status).toBe(200);
    expect((await t.admin('GET', '/admin/v1/accounts', undefined, { authorization: `Bearer ${ADMIN_TOKEN}x` })).status).toBe(401);
    // A restart logs its start-up line again.
    await t.restart();
    expect((await t.api('GET', '/api/v1/balance', alice)).status).toBe(200);
  });

  it('captured lines exist (the capture works) and include the start-up and the abuse warning', () => {
    expect(lines.length).toBeGreaterThanOrEqual(3);
    const parsed = lines.map((l) => JSON.parse(l) as { msg: string });
    expect(parsed.some((l) => l.msg === 'listening')).toBe(true);
    expect(parsed.some((l) => l.msg.startsWith('rate limit exceeded'))).toBe(true);
  });

  it('no line contains an API secret, a wrong secret that was sent, the admin token, or a secret hash', () => {
    const forbidden = new Map<string, string>();
    for (const s of secrets) {
      forbidden.set(s, 'api secret');
      forbidden.set(sha256hex(s), 'secret hash (hex)');
      forbidden.set(createHash('sha256').update(s).digest('base64'), 'secret hash (base64)');
      forbidden.set(s.replace(/^sec_/, ''), 'api secret without prefix');
    }
    forbidden.set('sec_wrong', 'wrong secret sent');
    forbidden.set(ADMIN_TOKEN, 'admin token');
    forbidden.set(sha256hex(`Bearer ${ADMIN_TOKEN}`), 'admin token hash');
    const leaks: string[] = [];
    for (const line of lines) {
      for (const [value, what] of forbidden) if (line.includes(value)) leaks.push(`${what} in: ${line.slice(0, 200)}`);
    }
    expect(leaks).toEqual([]);
  });
});

describe('(b) the admin API refuses every route without the token', () => {
  let creds: Creds;
  let orderId: string;

  const t = useServer({}, async (t) => {
    const service = await t.createService();
    creds = await t.createAccount('victim', '50');
    const placed = await t.api('POST', '/api/v1/order', creds, order(service, 5));
    orderId = placed.body.order;
  });

  it('answers 401 AUTH on every admin route with no token or a wrong one, changing nothing', async () => {
    const routes: Array<[string, string, unknown]> = [
      ['POST', '/admin/v1/accounts', { name: 'intruder' }],
      ['GET', '/admin/v1/accounts', undefined],
      ['GET', `/admin/v1/accounts/${creds.id}`, undefined],
      ['PATCH', `/admin/v1/accounts/${creds.id}`, { banned: true }],
      ['POST', `/admin/v1/accounts/${creds.id}/credits`, { amount: '1000', reason: 'steal' }],
      ['POST', `/admin/v1/accounts/${creds.id}/rotate-secret`, undefined],
      ['POST', '/admin/v1/services', { platform: 'x', name: 'y', rate: '0', min: 1, max: 10 }],
      ['GET', '/admin/v1/services', undefined],
      ['PATCH', '/admin/v1/services/1', { rate: '0' }],
      ['GET', '/admin/v1/orders?status=pending', undefined],
      ['GET', `/admin/v1/orders/${orderId}`, undefined],
      ['POST', `/admin/v1/orders/${orderId}/status`, { status: 'canceled' }],
      ['POST', `/admin/v1/accounts/${creds.id}/orders`, order(1, 5)],
      ['POST', `/admin/v1/accounts/${creds.id}/plan`, { months: 1 }],
      ['POST', `/admin/v1/accounts/${creds.id}/forcejoin`, { exempt: true }],
      ['GET', '/admin/v1/stats', undefined],
    ];
    const tokens: Array<[string, Record<string, string>]> = [
      ['none', {}],
      ['wrong token', { authorization: 'Bearer not-the-token' }],
      ['token + 1 char', { authorization: `Bearer ${ADMIN_TOKEN}x` }],
      ['token - 1 char', { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}` }],
      ['token without scheme', { authorization: ADMIN_TOKEN }],
      ['basic', { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` }],
      ['empty bearer', { authorization: 'Bearer ' }],
      ['token in another header', { 'x-admin-token': ADMIN_TOKEN }],
      ['customer credentials', { 'x-api-key': creds.key, 'x-api-secret': creds.secret }],
    ];
    const before = { log: t.server.context.store.nextSeq, accounts: (await t.admin('GET', '/admin/v1/accounts')).text };
    const wrong: string[] = [];
    for (const [method, path, body] of routes) {
      for (const [name, headers] of tokens) {
        const r = await http(
          `${t.adminUrl}${path}`,
          method,
          Object.entries({ ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }),
          body === undefined ? undefined : JSON.stringify(body),
        );
        const parsed = JSON.parse(r.text) as { ok: boolean; error: string; message: string };
        if (r.status !== 401 || parsed.ok !== false || parsed.error !== 'AUTH' || typeof parsed.message !== 'string') {
          wrong.push(`${method} ${path} with ${name}: ${r.status} ${r.text.slice(0, 120)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect({ log: t.server.context.store.nextSeq, accounts: (await t.admin('GET', '/admin/v1/accounts')).text }).toEqual(before);
    // The customer's secret was not rotated by any of the refused calls.
    expect((await t.api('GET', '/api/v1/balance', creds)).status).toBe(200);
  });

  it('answers GET /healthz without a token, and with the token every route above is reachable', async () => {
    const health = await http(`${t.adminUrl}/healthz`, 'GET');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.text)).toEqual({ ok: true });
    // Control: the same client with the right token gets in, so the 401s above were about the token.
    expect((await t.admin('GET', '/admin/v1/stats')).status).toBe(200);
    expect((await t.admin('GET', `/admin/v1/orders/${orderId}`)).status).toBe(200);
  });
});

describe('(c) both listeners are on loopback by default', () => {
  it('loadConfig([], {}) gives host and adminHost 127.0.0.1', () => {
    const config = loadConfig([], {});
    expect(config.host).toBe('127.0.0.1');
    expect(config.adminHost).toBe('127.0.0.1');
  });

  it('a server started from the defaults is unreachable on a non-loopback address, and its generated token file is 0600', async () => {
    const dir = tempDir();
    const config = { ...loadConfig([], {}), port: 0, adminPort: 0, dataDir: dir, seedDemo: false };
    const server = await startServer(config, { log: createLogger('silent'), onFatal: () => {} });
    try {
      expect(server.adminTokenGenerated).toBe(true);
      expect(statSync(join(dir, 'admin-token')).mode & 0o777).toBe(0o600);
      expect(server.adminToken.length).toBeGreaterThanOrEqual(22);
      const reach = (host: string, port: number): Promise<boolean> =>
        new Promise((resolve) => {
          const s = connect({ host, port });
          s.on('connect', () => {
            s.destroy();
            resolve(true);
          });
          s.on('error', () => resolve(false));
        });
      expect(await reach('127.0.0.1', server.adminPort)).toBe(true);
      expect(await reach('127.0.0.1', server.port)).toBe(true);
      const external = Object.values(networkInterfaces())
        .flat()
        .filter((i) => i !== undefined && !i.internal && i.family === 'IPv4')
        .map((i) => i!.address);
      // Control: a listener on every interface is reachable on these addresses, so a refusal below means loopback-only.
      const everywhere = createServer((c) => c.destroy());
      await new Promise<void>((resolve) => everywhere.listen(0, '0.0.0.0', resolve));
      const controlPort = (everywhere.address() as AddressInfo).port;
      for (const address of external) expect(await reach(address, controlPort)).toBe(true);
      everywhere.close();
      for (const address of external) {
        expect(await reach(address, server.adminPort)).toBe(false);
        expect(await reach(address, server.port)).toBe(false);
      }
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('(d) an unknown key and a wrong secret get the same answer', () => {
  let creds: Creds;

  const t = useServer({ config: { authFailuresPerMinute: 1_000 } }, async (t) => {
    await t.createService();
    creds = await t.createAccount('known', '10');
  });

  const normalise = (text: string): string => text.replace(/"request_id":"[^"]*"/, '"request_id":"<id>"');
  const headerNames = (h: Headers): string[] => [...h.keys()].sort();
  const headerValues = (h: Headers): Array<[string, string]> => [...h.entries()].filter(([k]) => k !== 'request-id' && k !== 'date').sort();

  it.each([
    ['GET', '/api/v1/balance', undefined],
    ['GET', '/api/v1/services', undefined],
    ['GET', `/api/v1/status?order=${'A'.repeat(22)}`, undefined],
    ['POST', '/api/v1/order', order(1, 5)],
  ])('%s %s: same status, same headers, byte-identical body except request_id', async (method, path, body) => {
    const unknownKey = await t.api(method, path, { ...creds, key: 'key_' + 'f'.repeat(32) }, body);
    const wrongSecret = await t.api(method, path, { ...creds, secret: 'sec_' + 'A'.repeat(43) }, body);
    const unknownBoth = await t.api(method, path, { id: 0, key: 'key_' + 'e'.repeat(32), secret: 'sec_' + 'B'.repeat(43) }, body);
    expect(wrongSecret.status).toBe(401);
    for (const other of [unknownKey, unknownBoth]) {
      expect(other.status).toBe(wrongSecret.status);
      expect(normalise(other.text)).toBe(normalise(wrongSecret.text));
      expect(headerNames(other.headers)).toEqual(headerNames(wrongSecret.headers));
      expect(headerValues(other.headers)).toEqual(headerValues(wrongSecret.headers));
    }
    expect(wrongSecret.body.request_id).not.toBe(unknownKey.body.request_id);
  });
});

describe('(e) secrets carry at least 128 bits and are never shared', () => {
  const t = useServer();

  /** Bits per character of the alphabet a string is drawn from, judged from the characters it uses. */
  function bitsPerChar(body: string): number {
    if (/^[0-9a-f]+$/.test(body) || /^[0-9A-F]+$/.test(body)) return 4;
    if (/^[A-Za-z0-9_-]+$/.test(body) || /^[A-Za-z0-9+/]+=*$/.test(body)) return 6;
    return Math.log2(95);
  }

  it('api_secret: length and charset imply ≥ 128 bits, the charset is really used, and no key or secret repeats (also across rotations)', async () => {
    const keys: string[] = [];
    const secrets: string[] = [];
    for (let i = 0; i < 24; i++) {
      const created = await t.admin('POST', '/admin/v1/accounts', { name: `acct-${i}` });
      expect(created.status).toBe(201);
      keys.push(created.body.api_key);
      secrets.push(created.body.api_secret);
      if (i % 3 === 0) {
        const rotated = await t.admin('POST', `/admin/v1/accounts/${created.body.account.id}/rotate-secret`);
        expect(rotated.body.api_key).toBe(created.body.api_key);
        secrets.push(rotated.body.api_secret);
      }
    }
    const bodies = secrets.map((s) => s.replace(/^[a-z]{2,6}_/, ''));
    for (const body of bodies) {
      expect(body.length * bitsPerChar(body)).toBeGreaterThanOrEqual(128);
    }
    // The alphabet claimed above is the one actually drawn from: ~1,000 characters of
    // base64url cover (almost) all 64 symbols; a constant or low-entropy filler would not.
    const alphabet = new Set(bodies.join(''));
    const claimed = 2 ** Math.min(...bodies.map(bitsPerChar));
    expect(alphabet.size).toBeGreaterThanOrEqual(Math.floor(claimed * 0.85));
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(secrets).size).toBe(secrets.length);
    for (const s of secrets) expect(keys.some((k) => s.includes(k) || k.includes(s))).toBe(false);
    // No two secrets share a long run (a counter or timestamp in the middle would).
    const chunks = new Set<string>();
    for (const body of bodies) {
      for (let i = 0; i + 12 <= body.length; i += 12) {
        const chunk = body.slice(i, i + 12);
        expect(chunks.has(chunk)).toBe(false);
        chunks.add(chunk);
      }
    }
  });
});

describe('(f) rotation retires the old secret', () => {
  const t = useServer({ config: { authFailuresPerMinute: 1_000 } });

  it('the old secret stops working, the new one works, the key and the other accounts are unaffected', async () => {
    const service = await t.createService();
    const a = await t.createAccount('rotating', '10');
    const b = await t.createAccount('bystander', '10');
    expect((await t.api('GET', '/api/v1/balance', a)).status).toBe(200);
    const rotated = await t.admin('POST', `/admin/v1/accounts/${a.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.api_key).toBe(a.key);
    expect(rotated.body.api_secret).not.toBe(a.secret);
    const fresh = { ...a, secret: rotated.body.api_secret as string };

    const old = await t.api('GET', '/api/v1/balance', a);
    expect(old.status).toBe(401);
    expect(old.body.error).toBe('AUTH');
    expect((await t.api('POST', '/api/v1/order', a, order(service, 5))).status).toBe(401);
    expect((await t.api('GET', '/api/v1/balance', fresh)).status).toBe(200);
    expect((await t.api('POST', '/api/v1/order', fresh, order(service, 5))).status).toBe(201);
    expect((await t.api('GET', '/api/v1/balance', b)).status).toBe(200);

    // Rotating twice retires the middle secret too, and the change survives a restart.
    const again = await t.admin('POST', `/admin/v1/accounts/${a.id}/rotate-secret`);
    const newest = { ...a, secret: again.body.api_secret as string };
    await t.restart();
    expect((await t.api('GET', '/api/v1/balance', fresh)).status).toBe(401);
    expect((await t.api('GET', '/api/v1/balance', a)).status).toBe(401);
    expect((await t.api('GET', '/api/v1/balance', newest)).status).toBe(200);
  });
});

describe('(g) what an anonymous client learns', () => {
  let creds: Creds;
  const t = useServer({ config: { authFailuresPerMinute: 1_000 } }, async (t) => {
    creds = await t.createAccount('observed', '10');
  });

  it('no response names the server or its version (no uWebSockets header), on either listener', async () => {
    const replies = [
      await rawRequest(t.server.port, 'GET /api/v1/balance HTTP/1.1\r\nHost: x\r\n\r\n'),
      await rawRequest(t.server.port, `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nX-API-Key: ${creds.key}\r\nX-API-Secret: ${creds.secret}\r\n\r\n`),
      await rawRequest(t.server.port, 'GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n'),
      await rawRequest(t.server.adminPort, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'),
      await rawRequest(t.server.adminPort, 'GET /admin/v1/stats HTTP/1.1\r\nHost: x\r\n\r\n'),
    ];
    expect(replies.map((r) => r.status)).toEqual([401, 200, 404, 200, 401]);
    for (const r of replies) {
      expect([...r.headers.keys()]).not.toContain('uwebsockets');
      expect([...r.headers.keys()]).not.toContain('server');
    }
  });

  it('request ids are random: 100 of them share no prefix and do not count', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push((await t.api('GET', '/api/v1/balance', null)).headers.get('request-id')!);
    expect(new Set(ids).size).toBe(100);
    const bodies = ids.map((id) => {
      expect(id).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
      return id.slice(4);
    });
    // A per-process prefix plus a counter would share its first characters.
    expect(new Set(bodies.map((b) => b.slice(0, 2))).size).toBeGreaterThan(80);
  });

  it('the admin listener answers every request without a valid token the same way, whatever the route or method', async () => {
    const requests: Array<[string, string]> = [
      ['GET', '/admin/v1/stats'],
      ['DELETE', '/admin/v1/stats'],
      ['GET', '/admin/v1/nowhere'],
      ['PUT', '/admin/v1/accounts/1'],
      ['GET', '/'],
      ['POST', '/healthz'],
      ['GET', '/metrics'],
      ['OPTIONS', '/admin/v1/accounts'],
      ['GET', '/admin/v1/accounts/not-an-id'],
    ];
    const seen = new Set<string>();
    for (const [method, path] of requests) {
      for (const auth of ['', 'Authorization: Bearer wrong\r\n']) {
        const r = await rawRequest(t.server.adminPort, `${method} ${path} HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: 0\r\n\r\n`);
        const headers = [...r.headers.entries()].filter(([k]) => k !== 'request-id' && k !== 'date').map(([k, v]) => `${k}: ${v.join(',')}`);
        seen.add(`${r.status} ${headers.join('; ')} ${r.body.toString().replace(/"request_id":"[^"]*"/, '')}`);
      }
    }
    expect([...seen]).toHaveLength(1);
    expect([...seen][0]).toMatch(/^401 /);
  });
});

describe('(h) an unknown key and a wrong secret take the same path', () => {
  const t = useServer({ config: { authFailuresPerMinute: 1_000 } });

  /** The table reads (table and found or not) one request makes, recorded by wrapping `get`. */
  async function readsOf(send: () => Promise<unknown>): Promise<string[]> {
    const reads: string[] = [];
    const tables = t.server.context.store.tables;
    const originals = new Map<'keys' | 'profiles' | 'wallets', (key: unknown) => unknown>();
    for (const name of ['keys', 'profiles', 'wallets'] as const) {
      const table = tables[name] as unknown as { get: (key: unknown) => unknown };
      const original = table.get;
      originals.set(name, original);
      table.get = function (this: unknown, key: unknown) {
        const value = original.call(this, key);
        reads.push(`${name}:${value === undefined ? 'absent' : 'found'}`);
        return value;
      };
    }
    try {
      await send();
    } finally {
      for (const [name, original] of originals) (tables[name] as unknown as { get: unknown }).get = original;
    }
    return reads;
  }

  it('the same table reads for an unknown key, a loaded key with a wrong secret, and a key not loaded with a wrong secret', async () => {
    const known = await t.createAccount('loaded', '10');
    const idle = await t.createAccount('not-loaded', '10');
    expect((await t.api('GET', '/api/v1/balance', known)).status).toBe(200);
    const wrongSecret = 'sec_' + 'w'.repeat(43);
    const unknown = await readsOf(() => t.api('GET', '/api/v1/balance', { ...known, key: 'key_' + '0'.repeat(32), secret: wrongSecret }));
    const wrong = await readsOf(() => t.api('GET', '/api/v1/balance', { ...known, secret: wrongSecret }));
    const wrongIdle = await readsOf(() => t.api('GET', '/api/v1/balance', { ...idle, secret: wrongSecret }));
    expect(unknown).toEqual(['keys:absent', 'profiles:found']);
    expect(wrong).toEqual(['keys:found', 'profiles:found']);
    expect(wrongIdle).toEqual(wrong);
    // Control: the valid request on a loaded account reads nothing, so the reads above are authentication's.
    expect(await readsOf(() => t.api('GET', '/api/v1/balance', known))).toEqual([]);
  });
});
