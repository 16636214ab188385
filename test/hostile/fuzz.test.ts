/**
 * Hostile fuzzing of the running server (real uWebSockets.js, real LMDB).
 *
 * Thousands of bad requests, over fetch (well-formed HTTP carrying bad
 * payloads, headers, methods, routes and queries) and over raw TCP (bytes
 * fetch refuses to send: broken request lines, duplicated and huge headers,
 * bad Content-Length, truncated bodies, invalid UTF-8, odd unicode in header
 * values). Every answer that comes back over HTTP must be a 4xx with an
 * `{ok:false, error, message}` body; raw malformed HTTP may instead be closed
 * or ignored by uWS. Afterwards the server must still be up and nothing may
 * have changed: credits, orders, accounts, services and the log length.
 *
 * Generated payloads use fast-check with a fixed seed; raw bytes use a seeded
 * PRNG, so every run sends the same requests.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, order, useServer, type Creds } from '../helpers/server.js';
import { http, pool, rawRequest, rejectionProblem, seededRandom, type RawResult } from './support.js';

const TARGET = 'https://instagram.com/p/abc';
const SERVICE_MAX = 1000;
const TARGET_MAX = 2048;
const NOT_JSON = Symbol('not JSON');

/** Lone surrogates, controls, bidi marks, separators, BOMs, non-characters, combining marks. */
const ODD_CHARS = [
  '\u0000', '\u0001', '\u0008', '\u001b', '\u001f', '\u007f', '\u0085', '\u009b', '\u00a0', '\u00ad',
  '\u200b', '\u200d', '\u200e', '\u200f', '\u202a', '\u202e', '\u2066', '\u2069', '\u2028', '\u2029',
  '\ufeff', '\ufffd', '\ufffe', '\uffff', '\u{10ffff}', '\u{1f600}', '\u0301',
  '\ud800', '\udbff', '\udc00', '\udfff',
  'é', 'ß', 'İ', 'ﷺ', '\\', '"', '/', '%', "'", '<', '>',
];

/** Numbers as raw JSON text: too large, non-integer, negative zero, not JSON at all. */
const RAW_NUMBERS = [
  '1e400', '-1e400', '1E400', '1e-400', '1.5', '-1.5', '0.5', '2.5e0', '9007199254740993', '9007199254740992',
  '-9007199254740993', '18446744073709551616', '1e16', '-0', '-0.0', '0', '0.0', '-1', '1001', '4.9e-324',
  '1.7976931348623157e308', '"10"', '"5"', '" 5"', '"1e3"', '"0x10"',
  'NaN', 'Infinity', '-Infinity', '0x10', '010', '+5', '.5', '5.', '1_000', '10n', '1e', '--1',
];

/** Invalid UTF-8 byte sequences: stray bytes, overlong, encoded surrogates, truncated, 5-byte. */
const BAD_UTF8: number[][] = [
  [0xff], [0xfe], [0x80], [0xbf], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82], [0xc3],
];

/** The server's contract, as a model: would this parsed body place an order? */
function wouldBeAccepted(value: unknown, service: number): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 3 || !['service', 'target', 'quantity'].every((k) => keys.includes(k))) return false;
  const v = value as Record<string, unknown>;
  if (v['service'] !== service) return false;
  const q = v['quantity'];
  if (typeof q !== 'number' || !Number.isInteger(q) || q < 1 || q > SERVICE_MAX) return false;
  const target = v['target'];
  return typeof target === 'string' && target.length <= TARGET_MAX && /^https?:\/\//i.test(target) && !/[\x00-\x20\x7f]/.test(target);
}

function parseOrNot(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

interface Snapshot {
  credits: number;
  otherCredits: number;
  pendingOrders: number;
  logLength: number;
  accounts: string;
  services: string;
}

/** A raw request and what may come back: a JSON 4xx, or anything a broken request may get. */
interface RawCase {
  label: string;
  bytes: Buffer[];
  /** 'answer': well-formed HTTP, must get a 4xx JSON error. 'any': 4xx if answered, closing or silence allowed. 'hangup': we close mid-request. */
  expect: 'answer' | 'any' | 'hangup';
}

describe('fuzz: thousands of bad requests are refused with a 4xx and change nothing', () => {
  let creds: Creds;
  let other: Creds;
  let service: number;
  let orderId: string;
  let before: Snapshot;

  const api = (path: string): string => `${t.url}${path}`;
  const adminUrl = (path: string): string => `${t.adminUrl}${path}`;
  const auth = (): Array<[string, string]> => [
    ['x-api-key', creds.key],
    ['x-api-secret', creds.secret],
  ];
  const json: [string, string] = ['content-type', 'application/json'];
  const validBody = (): string => JSON.stringify(order(service, 5));

  async function snapshot(): Promise<Snapshot> {
    const [account, otherAccount, orders, accounts, services] = await Promise.all([
      t.admin('GET', `/admin/v1/accounts/${creds.id}`),
      t.admin('GET', `/admin/v1/accounts/${other.id}`),
      t.admin('GET', '/admin/v1/orders?status=pending&limit=500'),
      t.admin('GET', '/admin/v1/accounts'),
      t.admin('GET', '/admin/v1/services'),
    ]);
    return {
      credits: account.body.account.credits,
      otherCredits: otherAccount.body.account.credits,
      pendingOrders: orders.body.orders.length,
      logLength: t.server.context.store.nextSeq,
      accounts: accounts.text,
      services: services.text,
    };
  }

  /** Sends one request over fetch and returns a violation description, or null. */
  async function refused(label: string, url: string, method: string, headers: Array<[string, string]>, body?: string | Uint8Array): Promise<string | null> {
    let r;
    try {
      r = await http(url, method, headers, body);
    } catch (error) {
      return `${label}: ${method} ${url.slice(0, 120)} failed over fetch: ${String(error)}`;
    }
    // A HEAD answer has no body (fetch drops whatever follows the headers), so only its status counts here.
    const problem = method === 'HEAD' ? rejectionProblem(r.status, null, '') : rejectionProblem(r.status, r.headers.get('content-type'), r.text);
    return problem === null ? null : `${label}: ${method} ${url.slice(0, 120)} → ${problem}: ${r.text.slice(0, 200)}`;
  }

  const t = useServer({ config: { defaultRateLimitPerMinute: 100_000_000, authFailuresPerMinute: 100_000_000 } }, async (t) => {
    service = await t.createService({ rate: '0.1', min: 1, max: SERVICE_MAX });
    creds = await t.createAccount('fuzz-target', '1000');
    other = await t.createAccount('bystander');
    // One real order, so that status look-ups and admin order routes have something to aim at.
    const placed = await t.api('POST', '/api/v1/order', creds, order(service, 5));
    expect(placed.status).toBe(201);
    orderId = placed.body.order;
    before = await snapshot();
    expect(before.pendingOrders).toBe(1);
  });

  it('generated order bodies (wrong types, huge and non-integer numbers, odd unicode, extra and missing fields, prototype keys) are refused', async () => {
    const oddString = fc.array(fc.oneof(fc.constantFrom(...ODD_CHARS), fc.string({ maxLength: 4 })), { maxLength: 10 }).map((p) => p.join(''));
    const badValue = fc.oneof(
      fc.constantFrom(...RAW_NUMBERS),
      fc.double().map((d) => JSON.stringify(d)),
      fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
      fc.integer().map(String),
      fc.string().map((s) => JSON.stringify(s)),
      oddString.map((s) => JSON.stringify(s)),
      fc.constantFrom('null', 'true', 'false', '[]', '{}', '[5]', '{"value":5}', '""', `"${service}"`),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    );
    const badTarget = fc.oneof(
      badValue,
      fc
        .constantFrom(
          'ftp://instagram.com/p/abc', 'javascript:alert(1)', 'file:///etc/passwd', '//instagram.com/p/abc', 'instagram.com/p/abc',
          'http:/x', 'httpx://x', 'data:text/html,<b>x</b>', ' https://x/', 'https://x/ a', 'https://x/\u0000', 'https://x/\t',
          'https://x/\n', 'https://x/\r', 'https://x/\u007f', 'https://x/\u001b[2J', '', 'https://', 'h',
        )
        .map((s) => JSON.stringify(s)),
      oddString.map((s) => JSON.stringify(s + TARGET)),
      oddString.map((s) => JSON.stringify(TARGET + s)),
      fc.integer({ min: TARGET_MAX - 20, max: 6000 }).map((n) => JSON.stringify('https://x/' + 'a'.repeat(n))),
    );
    const good: Record<string, string> = { service: String(service), target: JSON.stringify(TARGET), quantity: '5' };
    const field = (name: string) =>
      fc.oneof({ weight: 2, arbitrary: fc.constant(good[name]!) }, { weight: 3, arbitrary: name === 'target' ? badTarget : badValue });
    const extraKey = fc.oneof(
      fc.constantFrom('__proto__', 'constructor', 'prototype', 'price', 'charge', 'rate', 'balance', 'Service', 'QUANTITY', 'service ', 'toString', 'valueOf', '__defineGetter__', ''),
      fc.string(),
      oddString,
    );
    const body = fc
      .record({
        service: field('service'),
        target: field('target'),
        quantity: field('quantity'),
        drop: fc.subarray(['service', 'target', 'quantity']),
        extra: fc.array(fc.tuple(extraKey, fc.jsonValue({ maxDepth: 2 })), { maxLength: 3 }),
        extraFirst: fc.boolean(),
      })
      .map((r) => {
        const known = (['service', 'target', 'quantity'] as const).filter((n) => !r.drop.includes(n)).map((n) => `"${n}":${r[n]}`);
        const extra = r.extra.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
        return `{${(r.extraFirst ? [...extra, ...known] : [...known, ...extra]).join(',')}}`;
      });
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        fc.pre(!wouldBeAccepted(parseOrNot(text), service));
        const problem = await refused('generated body', api('/api/v1/order'), 'POST', [...auth(), json], text);
        if (problem !== null) throw new Error(`${problem}\nbody: ${text.slice(0, 300)}`);
      }),
      { seed: 42, numRuns: 900 },
    );
  });

  it('broken JSON (truncated, spliced, stray bytes) and non-object bodies are refused', async () => {
    const valid = validBody();
    const broken = fc
      .tuple(
        fc.nat(),
        fc.constantFrom('truncate', 'insert', 'delete', 'replace', 'duplicate'),
        fc.constantFrom(...'{}[],:"\\ \u0000\u00ffe+-.0n'.split(''), "'", '/*', '//', 'NaN', '\ud800', '\u2028', '{"a":', ']]', '}}'),
      )
      .map(([i, op, ch]) => {
        const at = i % valid.length;
        switch (op) {
          case 'truncate':
            return valid.slice(0, at);
          case 'insert':
            return valid.slice(0, at) + ch + valid.slice(at);
          case 'delete':
            return valid.slice(0, at) + valid.slice(at + 1);
          case 'replace':
            return valid.slice(0, at) + ch + valid.slice(at + 1);
          default:
            return valid + valid.slice(0, at);
        }
      });
    const nonObject = fc
      .jsonValue({ maxDepth: 3 })
      .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
      .map((v) => JSON.stringify(v));
    await fc.assert(
      fc.asyncProperty(fc.oneof(broken, nonObject), async (text) => {
        fc.pre(!wouldBeAccepted(parseOrNot(text), service));
        const problem = await refused('broken JSON', api('/api/v1/order'), 'POST', [...auth(), json], text);
        if (problem !== null) throw new Error(`${problem}\nbody: ${JSON.stringify(text).slice(0, 300)}`);
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it('a valid order under a wrong Content-Type, and bad Idempotency-Keys on valid orders, are refused', async () => {
    const contentType = fc.constantFrom(
      'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonp', 'application/json-patch+json',
      'application/*', 'json', 'application/xml', 'application/json, text/plain', 'text/json', '*/*', 'application /json', 'application/vnd.api+json',
    );
    await fc.assert(
      fc.asyncProperty(contentType, fc.boolean(), async (type, omit) => {
        // Omitted: a string body makes fetch send text/plain;charset=UTF-8; bytes send no Content-Type at all.
        const problem = omit
          ? await refused('no content type', api('/api/v1/order'), 'POST', auth(), new TextEncoder().encode(validBody()))
          : await refused(`content type ${type}`, api('/api/v1/order'), 'POST', [...auth(), ['content-type', type]], validBody());
        if (problem !== null) throw new Error(problem);
      }),
      { seed: 42, numRuns: 40 },
    );
    // Printable keys that are too long, and short keys with a tab or a bad quoting, each with a valid order.
    const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 256, maxLength: 3000 });
    const withTab = fc
      .tuple(fc.string({ unit: 'grapheme-ascii', maxLength: 100 }), fc.string({ unit: 'grapheme-ascii', maxLength: 100 }))
      .map(([a, b]) => `k${a.replace(/[\x00-\x1f\x7f]/g, '')}\t${b.replace(/[\x00-\x1f\x7f]/g, '')}k`);
    const badQuoting = fc.constantFrom('""', '"a"b"', '"a\\x"', '"\\"', '"abc\\"', `"${'k'.repeat(256)}"`, '"a\tb"', '"\\\\\\"');
    await fc.assert(
      fc.asyncProperty(fc.oneof(printable, withTab, badQuoting), async (key) => {
        const problem = await refused('idempotency key', api('/api/v1/order'), 'POST', [...auth(), json, ['idempotency-key', key]], validBody());
        if (problem !== null) throw new Error(`${problem}\nkey: ${JSON.stringify(key).slice(0, 100)}`);
      }),
      { seed: 42, numRuns: 120 },
    );
  });

  it('enumerated: numbers, deep nesting, unicode, invalid UTF-8, wrong methods on every route, unknown routes, bad queries, bad credentials, admin without a token', async () => {
    type Req = { label: string; url: string; method: string; headers: Array<[string, string]>; body?: string | Uint8Array };
    const reqs: Req[] = [];
    const post = (label: string, body: string | Uint8Array, headers: Array<[string, string]> = [...auth(), json]): void => {
      reqs.push({ label, url: api('/api/v1/order'), method: 'POST', headers, body });
    };

    // The numbers the contract calls out, in every numeric field.
    for (const n of RAW_NUMBERS) {
      post(`quantity ${n}`, `{"service":${service},"target":"${TARGET}","quantity":${n}}`);
      post(`service ${n}`, `{"service":${n},"target":"${TARGET}","quantity":5}`);
    }
    // Deep nesting, within and beyond the 16 KiB limit.
    const arrays = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
    const objects = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    post('8,000-deep arrays', arrays(8000));
    post('2,700-deep objects', objects(2700));
    post('service: 7,000-deep arrays', `{"service":${arrays(7000)},"target":"${TARGET}","quantity":5}`);
    post('quantity: 2,500-deep objects', `{"service":${service},"target":"${TARGET}","quantity":${objects(2500)}}`);
    post('target: 7,000-deep arrays', `{"service":${service},"target":${arrays(7000)},"quantity":5}`);
    post('extra field: 7,000-deep arrays', `{"service":${service},"target":"${TARGET}","quantity":5,"x":${arrays(7000)}}`);
    post('extra field first: 2,500-deep objects', `{"x":${objects(2500)},"service":${service},"target":"${TARGET}","quantity":5}`);
    post('50,000-deep arrays (over the limit)', arrays(50000));
    post('unterminated 8,000-deep arrays', '['.repeat(8000));
    post('unterminated 3,000-deep objects', '{"a":'.repeat(3000));
    // Prototype keys alongside a valid order, and as the whole order.
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      post(`${key} beside a valid order`, `{"service":${service},"target":"${TARGET}","quantity":5,"${key}":{"quantity":1}}`);
      post(`${key} holding the order`, `{"${key}":{"service":${service},"target":"${TARGET}","quantity":5}}`);
      post(`${key} polluting`, `{"${key}":{"service":${service},"prototype":{"quantity":5}},"target":"${TARGET}"}`);
    }
    for (const key of ['price', 'charge', 'rate', 'balance', 'status', 'order', 'account']) {
      post(`extra field ${key}`, `{"service":${service},"target":"${TARGET}","quantity":5,"${key}":0}`);
    }
    // Duplicate keys where the last one is bad (JSON.parse keeps the last).
    post('duplicate quantity, last bad', `{"service":${service},"target":"${TARGET}","quantity":5,"quantity":"5"}`);
    post('duplicate target, last bad', `{"service":${service},"target":"${TARGET}","quantity":5,"target":"ftp://x"}`);
    // Odd unicode: escaped lone surrogates, NUL, bidi marks, in places where they cannot make a valid order.
    for (const ch of ODD_CHARS) {
      const esc = JSON.stringify(ch).slice(1, -1);
      post(`unicode ${JSON.stringify(ch)} as quantity`, `{"service":${service},"target":"${TARGET}","quantity":"${esc}"}`);
      post(`unicode ${JSON.stringify(ch)} before the scheme`, `{"service":${service},"target":"${esc}${TARGET}","quantity":5}`);
      post(`unicode ${JSON.stringify(ch)} as a key`, `{"service":${service},"target":"${TARGET}","quantity":5,"${esc}":1}`);
      post(`unicode ${JSON.stringify(ch)} raw in the body`, `{"service":${service},"target":"${TARGET}","quantity":5${ch}}`);
    }
    post('escaped NUL in the target', `{"service":${service},"target":"${TARGET}\\u0000","quantity":5}`);
    post('raw NUL in the target', `{"service":${service},"target":"${TARGET}\u0000","quantity":5}`);
    // Invalid UTF-8 inside an otherwise valid order, and UTF-16.
    const enc = new TextEncoder();
    for (const bytes of BAD_UTF8) {
      const [head, tail] = validBody().split('/p/abc');
      post(`invalid UTF-8 ${Buffer.from(bytes).toString('hex')} in the target`, new Uint8Array([...enc.encode(head + '/p/'), ...bytes, ...enc.encode('abc' + tail)]));
      post(`invalid UTF-8 ${Buffer.from(bytes).toString('hex')} alone`, new Uint8Array(bytes));
    }
    post('UTF-16LE with BOM', new Uint8Array(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(validBody(), 'utf16le')])));
    post('UTF-16BE with BOM', new Uint8Array(Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(validBody(), 'utf16le').swap16()])));
    // Wrong whole-body types and empty bodies.
    for (const b of ['', ' ', '[]', '"order"', '5', 'null', 'true', `[${validBody()}]`, `{"order":${validBody()}}`]) post(`body ${b.slice(0, 30)}`, b);

    // Wrong methods on every customer route (with and without credentials, with a valid order body where allowed).
    const customer: Record<string, string> = {
      '/api/v1/balance': 'GET',
      '/api/v1/services': 'GET',
      '/api/v1/order': 'POST',
      ['/api/v1/status?order=' + 'A'.repeat(22)]: 'GET',
      '/api/v1/openapi.json': 'GET',
    };
    // uWS itself closes the connection on methods it does not know (PURGE, PROPFIND...): those go over raw TCP below.
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];
    for (const [path, allowed] of Object.entries(customer)) {
      for (const m of methods) {
        if (m === allowed) continue;
        const body = m === 'GET' || m === 'HEAD' ? undefined : validBody();
        reqs.push({ label: `${m} ${path}`, url: api(path), method: m, headers: [...auth(), json], body });
        reqs.push({ label: `${m} ${path} anonymous`, url: api(path), method: m, headers: [json], body });
      }
    }
    // Wrong methods on every admin route, with the token and without.
    const O = orderId;
    const admin: Record<string, string[]> = {
      '/admin/v1/accounts': ['POST', 'GET'],
      [`/admin/v1/accounts/${creds.id}`]: ['GET', 'PATCH'],
      [`/admin/v1/accounts/${creds.id}/credits`]: ['POST'],
      [`/admin/v1/accounts/${creds.id}/rotate-secret`]: ['POST'],
      [`/admin/v1/accounts/${creds.id}/orders`]: ['POST'],
      [`/admin/v1/accounts/${creds.id}/plan`]: ['POST'],
      [`/admin/v1/accounts/${creds.id}/forcejoin`]: ['POST'],
      '/admin/v1/services': ['POST', 'GET'],
      [`/admin/v1/services/${service}`]: ['PATCH'],
      '/admin/v1/orders': ['GET'],
      [`/admin/v1/orders/${O}`]: ['GET'],
      [`/admin/v1/orders/${O}/status`]: ['POST'],
      '/admin/v1/stats': ['GET'],
      '/healthz': ['GET'],
    };
    const bearer: [string, string] = ['authorization', `Bearer ${ADMIN_TOKEN}`];
    for (const [path, allowed] of Object.entries(admin)) {
      for (const m of methods) {
        if (allowed.includes(m)) continue;
        const body = m === 'GET' || m === 'HEAD' ? undefined : '{"name":"x","amount":"100","reason":"x","months":1,"status":"canceled"}';
        reqs.push({ label: `admin ${m} ${path}`, url: adminUrl(path), method: m, headers: [bearer, json], body });
        reqs.push({ label: `admin ${m} ${path} no token`, url: adminUrl(path), method: m, headers: [json], body });
      }
    }
    // Every admin route with its right method and a body that would change state, without a valid token.
    const adminWrites: Array<[string, string, string | undefined]> = [
      ['POST', '/admin/v1/accounts', '{"name":"intruder"}'],
      ['GET', '/admin/v1/accounts', undefined],
      ['GET', `/admin/v1/accounts/${creds.id}`, undefined],
      ['PATCH', `/admin/v1/accounts/${creds.id}`, '{"banned":true}'],
      ['POST', `/admin/v1/accounts/${creds.id}/credits`, '{"amount":"1000000","reason":"free money"}'],
      ['POST', `/admin/v1/accounts/${creds.id}/rotate-secret`, undefined],
      ['POST', `/admin/v1/accounts/${creds.id}/orders`, validBody()],
      ['POST', `/admin/v1/accounts/${creds.id}/plan`, '{"months":12}'],
      ['POST', `/admin/v1/accounts/${creds.id}/forcejoin`, '{"exempt":true}'],
      ['POST', '/admin/v1/services', '{"platform":"x","name":"y","rate":"0","min":1,"max":10}'],
      ['GET', '/admin/v1/services', undefined],
      ['PATCH', `/admin/v1/services/${service}`, '{"rate":"0"}'],
      ['GET', '/admin/v1/orders?status=pending', undefined],
      ['GET', `/admin/v1/orders/${O}`, undefined],
      ['POST', `/admin/v1/orders/${O}/status`, '{"status":"canceled"}'],
      ['GET', '/admin/v1/stats', undefined],
    ];
    const badTokens: Array<Array<[string, string]>> = [
      [],
      [['authorization', 'Bearer wrong']],
      [['authorization', `Bearer ${ADMIN_TOKEN}x`]],
      [['authorization', `Bearer ${ADMIN_TOKEN.slice(0, -1)}`]],
      [['authorization', ADMIN_TOKEN]],
      [['authorization', `Bearer${ADMIN_TOKEN}`]],
      [['authorization', `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`]],
      [['authorization', `Token ${ADMIN_TOKEN}`]],
      [['authorization', 'Bearer wrong'], ['authorization', `Bearer ${ADMIN_TOKEN}`]],
      [['authorization', '']],
      [['x-admin-token', ADMIN_TOKEN]],
      [['x-api-key', creds.key], ['x-api-secret', creds.secret]],
    ];
    for (const [m, path, body] of adminWrites) {
      for (const [i, headers] of badTokens.entries()) {
        reqs.push({ label: `admin ${m} ${path} bad token #${i}`, url: adminUrl(path), method: m, headers: [...headers, json], body });
      }
    }
    // Admin bodies that must be refused even with the token.
    for (const b of ['[]', 'null', '"x"', '{"name":1}', '{"name":""}', '{"name":"x","extra":1}', '{"__proto__":{"name":"x"}}', '{"name":', arrays(7000), objects(2500), '{"name":"x"}'.repeat(2)]) {
      reqs.push({ label: `admin create account body ${b.slice(0, 20)}`, url: adminUrl('/admin/v1/accounts'), method: 'POST', headers: [bearer, json], body: b });
    }
    for (const amount of ['0', '-0', '1.0000001', '1e400', '"abc"', 'null', 'true', '[]', '{}', '"1,5"', 'NaN', '"10"x']) {
      reqs.push({
        label: `admin credits amount ${amount}`,
        url: adminUrl(`/admin/v1/accounts/${creds.id}/credits`),
        method: 'POST',
        headers: [bearer, json],
        body: `{"amount":${amount},"reason":"fuzz"}`,
      });
    }
    reqs.push({ label: 'admin credits without reason', url: adminUrl(`/admin/v1/accounts/${creds.id}/credits`), method: 'POST', headers: [bearer, json], body: '{"amount":"5"}' });
    reqs.push({ label: 'admin credits text/plain', url: adminUrl(`/admin/v1/accounts/${creds.id}/credits`), method: 'POST', headers: [bearer, ['content-type', 'text/plain']], body: '{"amount":"5","reason":"x"}' });
    reqs.push({ label: 'admin credits invalid UTF-8', url: adminUrl(`/admin/v1/accounts/${creds.id}/credits`), method: 'POST', headers: [bearer, json], body: new Uint8Array([...enc.encode('{"amount":"5","reason":"'), 0xff, ...enc.encode('"}')]) });

    // Unknown routes, with valid credentials and a valid order body where a body is allowed.
    const unknown = [
      '/', '/api', '/api/v1', '/api/v1/', '/api/v2/balance', '/api/v1/balance/', '/api/v1/order/', '/api/v1/orders', '/API/V1/BALANCE',
      '/api/v1/Balance', '/api/v1/balance.json', '/api/v1/openapi.json/x', '/admin/v1/accounts', '/healthz/x', '/readyz/x', '/favicon.ico', '/.env',
      '/api/v1/balance%20', '/api/v1/order%00', '/api/v1/status/' + orderId, '/api/v1/' + 'x'.repeat(3000), '/api/v1/balance;jsessionid=1',
      '/api/v1/ord%65r', '/%61pi/v1/balance',
    ];
    for (const path of unknown) {
      reqs.push({ label: `unknown GET ${path.slice(0, 40)}`, url: api(path), method: 'GET', headers: auth() });
      reqs.push({ label: `unknown POST ${path.slice(0, 40)}`, url: api(path), method: 'POST', headers: [...auth(), json], body: validBody() });
    }
    for (const path of ['/', '/admin', '/admin/v1', '/admin/v2/stats', '/admin/v1/accounts/0', '/admin/v1/accounts/-1', '/admin/v1/accounts/01', '/admin/v1/accounts/x', '/admin/v1/orders/short', '/admin/v1/stats/']) {
      reqs.push({ label: `admin unknown ${path}`, url: adminUrl(path), method: 'GET', headers: [bearer] });
    }
    // Bad query strings on /status (with valid credentials).
    const queries = [
      '', '?', '?order', '?order=', '?order=%ZZ', '?order=%', '?order=%%', '?order=%E9', '?order=%00', '?order=%F0%9F%98%80', '?order=%ZZ&order=%ZZ',
      '?order=a&order=b', `?order=x&order=${orderId}`, `?order=${orderId}x`, `?order=x${orderId}`, `?order=${orderId}%00`, `?order=%20${orderId}`,
      `?order=${orderId.slice(1)}`, `?order=${'a'.repeat(4000)}`, `?order=${'A'.repeat(22)}`, `?order[]=${orderId}`, `?ORDER=${orderId}`, `?Order=${orderId}`,
      `?order=${encodeURIComponent('\u200f')}${orderId.slice(1)}`, `?order=${encodeURIComponent('\u202e' + orderId.slice(2))}`, `?order=${orderId.slice(0, 21)}%2F`,
      `?order=${orderId.slice(0, 21)}.`, `?order=${'A'.repeat(22)}&order=${orderId}`, '?order=../../admin', `?${'order=x&'.repeat(500)}`,
      `?x=${'y'.repeat(6000)}`, `?order=${orderId.replace(/./, '+')}`,
    ];
    for (const q of queries) reqs.push({ label: `status ${q.slice(0, 50)}`, url: api('/api/v1/status' + q), method: 'GET', headers: auth() });
    // Another account's order is NOT_FOUND, never revealed.
    reqs.push({ label: "another account's order", url: api(`/api/v1/status?order=${orderId}`), method: 'GET', headers: [['x-api-key', other.key], ['x-api-secret', other.secret]] });

    // Missing, wrong, swapped and duplicated credentials, on every authenticated endpoint.
    const credVariants: Array<[string, Array<[string, string]>]> = [
      ['none', []],
      ['key only', [['x-api-key', creds.key]]],
      ['secret only', [['x-api-secret', creds.secret]]],
      ['wrong secret', [['x-api-key', creds.key], ['x-api-secret', creds.secret.slice(0, -1) + (creds.secret.endsWith('A') ? 'B' : 'A')]]],
      ['unknown key', [['x-api-key', 'key_' + '0'.repeat(32)], ['x-api-secret', creds.secret]]],
      ['swapped', [['x-api-key', creds.secret], ['x-api-secret', creds.key]]],
      ["other's key", [['x-api-key', other.key], ['x-api-secret', creds.secret]]],
      ["other's secret", [['x-api-key', creds.key], ['x-api-secret', other.secret]]],
      ['key upper-cased', [['x-api-key', creds.key.toUpperCase()], ['x-api-secret', creds.secret]]],
      ['secret truncated', [['x-api-key', creds.key], ['x-api-secret', creds.secret.slice(0, -1)]]],
      ['secret extended', [['x-api-key', creds.key], ['x-api-secret', creds.secret + 'x']]],
      ['key extended', [['x-api-key', creds.key + 'x'], ['x-api-secret', creds.secret]]],
      ['empty key', [['x-api-key', ''], ['x-api-secret', creds.secret]]],
      ['empty secret', [['x-api-key', creds.key], ['x-api-secret', '']]],
      ['duplicated key (combined by fetch)', [['x-api-key', creds.key], ['x-api-key', creds.key], ['x-api-secret', creds.secret]]],
      ['duplicated secret (combined by fetch)', [['x-api-key', creds.key], ['x-api-secret', creds.secret], ['x-api-secret', 'junk']]],
      ['bearer secret', [['x-api-key', creds.key], ['x-api-secret', `Bearer ${creds.secret}`]]],
      ['authorization header instead', [['authorization', `Bearer ${creds.secret}`], ['x-api-key', creds.key]]],
      ['admin token', [['authorization', `Bearer ${ADMIN_TOKEN}`]]],
      ['long key', [['x-api-key', 'k'.repeat(6000)], ['x-api-secret', creds.secret]]],
    ];
    for (const [name, headers] of credVariants) {
      reqs.push({ label: `creds ${name} balance`, url: api('/api/v1/balance'), method: 'GET', headers });
      reqs.push({ label: `creds ${name} services`, url: api('/api/v1/services'), method: 'GET', headers });
      reqs.push({ label: `creds ${name} status`, url: api(`/api/v1/status?order=${orderId}`), method: 'GET', headers });
      reqs.push({ label: `creds ${name} order`, url: api('/api/v1/order'), method: 'POST', headers: [...headers, json], body: validBody() });
    }

    const problems = (await pool(reqs, 32, (r) => refused(r.label, r.url, r.method, r.headers, r.body))).filter((p) => p !== null);
    expect(problems).toEqual([]);
    expect(reqs.length).toBeGreaterThan(500);
  });

  it('raw TCP: broken request lines, duplicated and huge headers, bad Content-Length, truncated bodies, invalid UTF-8, odd unicode in header values', async () => {
    const cases: RawCase[] = [];
    const latin = (s: string): Buffer => Buffer.from(s, 'latin1');
    const A = `X-API-Key: ${creds.key}\r\nX-API-Secret: ${creds.secret}\r\n`;
    const H = 'Host: 127.0.0.1\r\n';
    const add = (label: string, expect: RawCase['expect'], ...parts: Array<Buffer | string>): void => {
      cases.push({ label, expect, bytes: parts.map((p) => (typeof p === 'string' ? latin(p) : p)) });
    };
    const postOrder = (headers: string, body: Buffer | string): Buffer[] => {
      const b = typeof body === 'string' ? Buffer.from(body) : body;
      return [latin(`POST /api/v1/order HTTP/1.1\r\n${H}${headers}Content-Length: ${b.length}\r\n\r\n`), b];
    };
    const valid = validBody();
    const invalidQty = `{"service":${service},"target":"${TARGET}","quantity":"10"}`;

    // --- well-formed HTTP: a JSON 4xx is required ---
    add('duplicated key, junk first', 'answer', `GET /api/v1/balance HTTP/1.1\r\n${H}X-API-Key: junk\r\n${A}\r\n`);
    add('duplicated secret, junk first', 'answer', `GET /api/v1/balance HTTP/1.1\r\n${H}X-API-Key: ${creds.key}\r\nX-API-Secret: junk\r\nX-API-Secret: ${creds.secret}\r\n\r\n`);
    add('duplicated key and secret, junk first, on an order', 'answer', ...postOrder(`X-API-Key: junk\r\nX-API-Secret: junk\r\n${A}Content-Type: application/json\r\n`, valid));
    add('duplicated Content-Type, text first', 'answer', ...postOrder(`${A}Content-Type: text/plain\r\nContent-Type: application/json\r\n`, valid));
    add('duplicated Idempotency-Key, too long first', 'answer', ...postOrder(`${A}Content-Type: application/json\r\nIdempotency-Key: ${'k'.repeat(300)}\r\nIdempotency-Key: ok-key\r\n`, valid));
    add('40 junk headers, no credentials', 'answer', `GET /api/v1/balance HTTP/1.1\r\n${H}${'X-Junk: a\r\n'.repeat(40)}\r\n`);
    add('65 KB header, no credentials', 'answer', `GET /api/v1/balance HTTP/1.1\r\n${H}X-Long: ${'a'.repeat(65_000)}\r\n\r\n`);
    add('65 KB cookie, no credentials', 'answer', `GET /api/v1/services HTTP/1.1\r\n${H}Cookie: ${'c=1; '.repeat(13_000)}\r\n\r\n`);
    add('20 KB key', 'answer', `GET /api/v1/balance HTTP/1.1\r\n${H}X-API-Key: ${'k'.repeat(20_000)}\r\nX-API-Secret: ${creds.secret}\r\n\r\n`);
    add('20 KB secret', 'answer', `GET /api/v1/balance HTTP/1.1\r\n${H}X-API-Key: ${creds.key}\r\nX-API-Secret: ${'s'.repeat(20_000)}\r\n\r\n`);
    add('20 KB Idempotency-Key', 'answer', ...postOrder(`${A}Content-Type: application/json\r\nIdempotency-Key: ${'k'.repeat(20_000)}\r\n`, valid));
    add('20 KB Content-Type', 'answer', ...postOrder(`${A}Content-Type: application/json${'x'.repeat(20_000)}\r\n`, valid));
    // Odd unicode (UTF-8 and stray bytes) inside header values.
    const oddBytes: Array<[string, Buffer]> = [
      ...['é', '\u200f', '\u202e', '\u2028', '\ufeff', '\u{1f600}', '\uffff', '\u0085'].map((c): [string, Buffer] => [JSON.stringify(c), Buffer.from(c, 'utf8')]),
      ...BAD_UTF8.map((b): [string, Buffer] => [Buffer.from(b).toString('hex'), Buffer.from(b)]),
    ];
    const kMid = creds.key.length >> 1;
    const sMid = creds.secret.length >> 1;
    for (const [name, bytes] of oddBytes) {
      add(`${name} inside the key`, 'answer', latin(`GET /api/v1/balance HTTP/1.1\r\n${H}X-API-Key: ${creds.key.slice(0, kMid)}`), bytes, `${creds.key.slice(kMid)}\r\nX-API-Secret: ${creds.secret}\r\n\r\n`);
      add(`${name} inside the secret`, 'answer', latin(`GET /api/v1/balance HTTP/1.1\r\n${H}X-API-Key: ${creds.key}\r\nX-API-Secret: ${creds.secret.slice(0, sMid)}`), bytes, `${creds.secret.slice(sMid)}\r\n\r\n`);
      const vb = Buffer.from(valid);
      add(`${name} inside the Idempotency-Key`, 'answer', latin(`POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nIdempotency-Key: ab`), bytes, `cd\r\nContent-Length: ${vb.length}\r\n\r\n`, vb);
      add(`${name} inside the Content-Type`, 'answer', latin(`POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/js`), bytes, `on\r\nContent-Length: ${vb.length}\r\n\r\n`, vb);
      add(`${name} in the query`, 'answer', latin(`GET /api/v1/status?order=${orderId.slice(0, 11)}`), bytes, `${orderId.slice(11)} HTTP/1.1\r\n${H}${A}\r\n`);
    }
    // Invalid UTF-8 in bodies.
    for (const bytes of BAD_UTF8) {
      const [head, tail] = valid.split('/p/abc');
      add(`invalid UTF-8 ${Buffer.from(bytes).toString('hex')} in the body`, 'answer', ...postOrder(`${A}Content-Type: application/json\r\n`, Buffer.concat([Buffer.from(head + '/p/'), Buffer.from(bytes), Buffer.from('abc' + tail)])));
    }
    // Methods fetch will not send (TRACE is answered by the app; uWS closes on methods it does not know).
    for (const path of ['/api/v1/balance', '/api/v1/order', `/api/v1/status?order=${orderId}`, '/api/v1/services', '/api/v1/openapi.json']) {
      add(`TRACE ${path}`, 'answer', `TRACE ${path} HTTP/1.1\r\n${H}${A}\r\n`);
      for (const m of ['TRACK', 'CONNECT', 'PURGE', 'FOO', 'M-SEARCH', 'PROPFIND', 'MKCOL', 'LINK', 'post', 'G\u00e9T']) {
        add(`${m} ${path}`, 'any', ...postOrder(`${A}Content-Type: application/json\r\n`, valid).map((b, i) => (i === 0 ? latin(b.toString('latin1').replace('POST /api/v1/order', `${m} ${path}`)) : b)));
      }
    }
    // Paths fetch would normalise.
    for (const path of [
      '/api/v1/../v1/balance', '/api/v1/./balance', '//api/v1/balance', '/api/v1//balance', '/api/v1/%2e%2e/v1/balance', '/api/v1/%62alance',
      '/api/v1/bal%2fance', '/api/v1/balance%00', '/api/v1/balance#x', '/api/v1/./order', '/./api/v1/order',
    ]) {
      add(`path ${path}`, 'answer', `GET ${path} HTTP/1.1\r\n${H}${A}\r\n`);
      add(`POST path ${path}`, 'answer', ...postOrder(`${A}Content-Type: application/json\r\n`, valid).map((b, i) => (i === 0 ? latin(b.toString('latin1').replace('/api/v1/order', path)) : b)));
    }
    // Content-Length the server can answer for.
    add('Content-Length 0 on an order', 'answer', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nContent-Length: 0\r\n\r\n`);
    add('Content-Length over the limit, no body sent', 'answer', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nContent-Length: 16385\r\n\r\n`);
    add('Content-Length of 20 digits', 'any', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nContent-Length: 99999999999999999999\r\n\r\n`);
    add('chunked body over the limit', 'answer', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`, ...Array.from({ length: 17 }, () => `400\r\n${' '.repeat(1024)}\r\n`), '0\r\n\r\n');
    add('chunked invalid order', 'answer', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${invalidQty.length.toString(16)}\r\n${invalidQty}\r\n0\r\n\r\n`);

    // --- malformed HTTP: a 4xx if answered; a closed or ignored connection is fine ---
    const broken = [
      'GARBAGE\r\n\r\n', '\r\n\r\n', 'GET\r\n\r\n', 'GET /api/v1/balance\r\n\r\n', `GET /api/v1/balance HTTP/9.9\r\n${H}${A}\r\n`,
      `GET /api/v1/balance HTTP/1.0\r\n${A}\r\n`, `GET /api/v1/balance HTTP/1.1\r\n${A}\r\n`, `get /api/v1/balance HTTP/1.1\r\n${H}\r\n`,
      `GET  /api/v1/balance  HTTP/1.1\r\n${H}\r\n`, `GET /api/v1/bal\u0000ance HTTP/1.1\r\n${H}\r\n`, `GET /api/v1/balance HTTP/1.1\n${H.trim()}\n\n`,
      `GET http://127.0.0.1/api/v1/balance HTTP/1.1\r\n${H}\r\n`, `OPTIONS * HTTP/1.1\r\n${H}\r\n`, `CONNECT 127.0.0.1:1 HTTP/1.1\r\n${H}\r\n`,
      'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', `GET /api/v1/balance HTTP/1.1\r\n${H}X-API-Key : ${creds.key}\r\n\r\n`,
      `GET /api/v1/balance HTTP/1.1\r\n${H}X-API-Key: ${creds.key}\r\n  folded\r\nX-API-Secret: ${creds.secret}\r\n\r\n`,
      `GET /api/v1/balance HTTP/1.1\r\n${H}no-colon-here\r\n\r\n`, `GET /api/v1/balance HTTP/1.1\r\n${H}: empty-name\r\n\r\n`,
      `GET /api/v1/balance HTTP/1.1\r\n${H}${'X-Many: a\r\n'.repeat(200)}\r\n`, `GET /api/v1/balance HTTP/1.1\r\n${H}X-API-Key: a\u0001b\r\n\r\n`,
      `GET /api/v1/balance HTTP/1.1\r\n${H}X-API-Key: a\u007fb\r\n\r\n`, `GET /api/v1/balance HTTP/1.1\r\n${H}X-API-Key: a\rb\r\n\r\n`,
      `GET /api/v1/balance HTTP/1.1\r\n${H}X-API\u00e9-Key: x\r\n\r\n`, `GET /api/v1/balance HTTP/1.1\r\n${H}X API Key: x\r\n\r\n`,
      `GET /api/v1/bal\u00e9nce HTTP/1.1\r\n${H}${A}\r\n`, `GET /api/v1/status?order=\u0001 HTTP/1.1\r\n${H}${A}\r\n`,
      `GET /api/v1/status?order=a b HTTP/1.1\r\n${H}${A}\r\n`, `\u0000\u0000\u0000\u0000\r\n\r\n`, `${' '.repeat(100)}\r\n\r\n`,
      `GET ${'/x'.repeat(40_000)} HTTP/1.1\r\n${H}\r\n`,
    ];
    for (const [i, b] of broken.entries()) add(`broken #${i} ${JSON.stringify(b.slice(0, 40))}`, 'any', b);
    add('TLS ClientHello', 'any', Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03, ...new Array(32).fill(7), 13, 10, 13, 10]));
    // Bad Content-Length and framing, each on an order that is invalid anyway.
    for (const cl of ['abc', '-1', '1e3', '0x10', '+5', ' 5 5', '5, 5', '5.0', '']) {
      add(`Content-Length ${JSON.stringify(cl)}`, 'any', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nContent-Length: ${cl}\r\n\r\n${invalidQty}`);
    }
    add('two Content-Lengths, invalid body', 'any', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nContent-Length: ${invalidQty.length}\r\nContent-Length: 3\r\n\r\n${invalidQty}`);
    add('Content-Length and chunked', 'any', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`);
    add('Transfer-Encoding gzip', 'any', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n${invalidQty}`);
    add('Transfer-Encoding chunked, identity', 'any', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n`);
    add('chunk size not hex', 'any', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n${invalidQty}\r\n0\r\n\r\n`);
    add('chunk size overflow', 'any', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n${invalidQty}\r\n0\r\n\r\n`);
    add('chunk shorter than its size', 'any', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n100\r\n${invalidQty}\r\n0\r\n\r\n`);
    // Seeded random bytes, and seeded mutations of requests that are invalid whatever one byte does.
    const random = seededRandom(42);
    const byte = (): number => Math.floor(random() * 256);
    for (let i = 0; i < 80; i++) {
      const length = 1 + Math.floor(random() * 300);
      add(`random bytes #${i}`, 'any', Buffer.concat([Buffer.from(Array.from({ length }, byte)), latin('\r\n\r\n')]));
    }
    const bases = [
      Buffer.concat(postOrder(`${A}Content-Type: application/json\r\n`, invalidQty)),
      latin(`GET /api/v1/status?order=not-an-order HTTP/1.1\r\n${H}${A}\r\n`),
      Buffer.concat(postOrder(`${A}Content-Type: application/json\r\nIdempotency-Key: ${'k'.repeat(300)}\r\n`, valid)),
      latin(`POST /admin/v1/accounts/${creds.id}/credits HTTP/1.1\r\n${H}Authorization: Bearer wrong\r\nContent-Type: application/json\r\nContent-Length: 36\r\n\r\n{"amount":"1000","reason":"mutated"}`),
    ];
    for (let i = 0; i < 280; i++) {
      const base = bases[i % bases.length]!;
      const mutated = Buffer.from(base);
      const edits = 1 + Math.floor(random() * 3);
      for (let e = 0; e < edits; e++) mutated[Math.floor(random() * mutated.length)] = byte();
      cases.push({ label: `mutation #${i} of base ${i % bases.length}`, bytes: [mutated], expect: 'any' });
    }
    // Truncated requests: we close the connection mid-headers or mid-body.
    const full = Buffer.concat(postOrder(`${A}Content-Type: application/json\r\n`, valid));
    const headEnd = full.indexOf('\r\n\r\n') + 4;
    for (let i = 0; i < 60; i++) {
      const cut = headEnd + Math.floor(random() * (full.length - headEnd));
      add(`valid order cut after ${cut - headEnd} body bytes`, 'hangup', full.subarray(0, cut));
    }
    for (let i = 0; i < 30; i++) add(`headers cut at ${i}`, 'hangup', full.subarray(0, 1 + Math.floor(random() * (headEnd - 1))));
    add('valid order, Content-Length 10 bytes too long', 'hangup', latin(`POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nContent-Length: ${valid.length + 10}\r\n\r\n${valid}`));
    add('chunked valid order without the last chunk', 'hangup', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${valid.length.toString(16)}\r\n${valid}\r\n`);
    add('chunked valid order cut inside a chunk', 'hangup', `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${valid.length.toString(16)}\r\n${valid.slice(0, 20)}`);

    const timeouts = { answer: 3_000, any: 400, hangup: 600 };
    const results = await pool(cases, 48, (c) => rawRequest(t.server.port, c.bytes, { timeoutMs: timeouts[c.expect], hangUp: c.expect === 'hangup' }));
    const problems: string[] = [];
    results.forEach((r: RawResult, i) => {
      const c = cases[i]!;
      if (c.expect === 'answer' && r.status === null) {
        problems.push(`${c.label}: no answer (closed ${r.closed}, timed out ${r.timedOut})`);
        return;
      }
      if (r.status === null) return;
      const problem = rejectionProblem(r.status, r.headers.get('content-type')?.[0] ?? null, r.body.toString('utf8'));
      if (problem !== null) problems.push(`${c.label}: ${problem}: ${r.body.toString('utf8').slice(0, 200)}`);
      else if (c.expect === 'answer' && !r.headers.get('content-type')?.[0]?.includes('json')) problems.push(`${c.label}: ${r.status} without a JSON error body`);
    });
    expect(problems).toEqual([]);
    expect(cases.length).toBeGreaterThan(600);
  });

  it('after the barrage: the server is up, nothing changed, and a valid order still succeeds', async () => {
    const health = await http(adminUrl('/healthz'), 'GET');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.text)).toEqual({ ok: true });
    expect(await snapshot()).toEqual(before);
    // The account's own secret still works (no rotation slipped through) and the order goes in.
    const placed = await t.api('POST', '/api/v1/order', creds, order(service, 7));
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({ ok: true, status: 'pending', charge: 0.7, balance: Math.round((before.credits - 0.7) * 1e6) / 1e6 });
    const after = await snapshot();
    expect(after.pendingOrders).toBe(before.pendingOrders + 1);
    expect(after.logLength).toBeGreaterThan(before.logLength);
  });
});

/**
 * Edge cases the fuzzing finds, each pinned here as a regression test of
 * src/http. One remains in uWebSockets.js itself (it trims
 * non-ASCII bytes at the edges of header values before the application
 * sees them), pinned by two tests marked `it.fails`, one per header: each
 * starts failing when a uWS release fixes it. The requests run in beforeAll, so a crash or a network error
 * fails the suite.
 */
describe('edge cases found by fuzzing', () => {
  let creds: Creds;
  let service: number;
  const seen: Record<string, RawResult> = {};
  let ordersBefore = 0;
  let ordersAfterDuplicateLength = 0;
  let ordersAfterEmptyKey = 0;
  let loneSurrogate: { status: number; stored: string | null };

  const pending = async (): Promise<number> => (await t.admin('GET', '/admin/v1/orders?status=pending&limit=500')).body.orders.length;

  const t = useServer({ config: { defaultRateLimitPerMinute: 100_000_000, authFailuresPerMinute: 100_000_000 } }, async (t) => {
    service = await t.createService({ rate: '0.1', min: 1, max: SERVICE_MAX });
    creds = await t.createAccount('bugs', '1000');
    const p = t.server.port;
    const A = `X-API-Key: ${creds.key}\r\nX-API-Secret: ${creds.secret}\r\n`;
    const H = 'Host: 127.0.0.1\r\n';
    const body = JSON.stringify(order(service, 5));
    const first = await t.api('POST', '/api/v1/order', creds, order(service, 5), { 'idempotency-key': 'k1' });
    expect(first.status).toBe(201);
    ordersBefore = await pending();

    seen['duplicate key, first valid'] = await rawRequest(p, `GET /api/v1/balance HTTP/1.1\r\n${H}${A}X-API-Key: junk\r\n\r\n`);
    seen['duplicate secret, first valid'] = await rawRequest(p, `GET /api/v1/balance HTTP/1.1\r\n${H}${A}X-API-Secret: junk\r\n\r\n`);
    seen['repeated order param, first real'] = await rawRequest(p, `GET /api/v1/status?order=${first.body.order}&order=junk HTTP/1.1\r\n${H}${A}\r\n`);

    seen['two different Content-Lengths'] = await rawRequest(
      p,
      `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: 3\r\n\r\n${body}`,
    );
    ordersAfterDuplicateLength = await pending();

    seen['empty Idempotency-Key'] = await rawRequest(
      p,
      `POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nIdempotency-Key:\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    ordersAfterEmptyKey = await pending();

    const keyThenByte = Buffer.concat([
      Buffer.from(`POST /api/v1/order HTTP/1.1\r\n${H}${A}Content-Type: application/json\r\nIdempotency-Key: k1`, 'latin1'),
      Buffer.from([0xe9]),
      Buffer.from(`\r\nContent-Length: ${body.length}\r\n\r\n${body}`, 'latin1'),
    ]);
    seen['Idempotency-Key k1 + 0xE9'] = await rawRequest(p, keyThenByte);
    seen['X-API-Key + U+200F'] = await rawRequest(
      p,
      Buffer.from(`GET /api/v1/balance HTTP/1.1\r\n${H}X-API-Key: ${creds.key}\u200f\r\nX-API-Secret: ${creds.secret}\r\n\r\n`, 'utf8'),
    );

    const lone = await t.api('POST', '/api/v1/order', creds, `{"service":${service},"target":"https://instagram.com/p/\\ud800","quantity":5}`);
    loneSurrogate = {
      status: lone.status,
      stored: lone.status === 201 ? (await t.admin('GET', `/admin/v1/orders/${lone.body.order}`)).body.order.target : null,
    };

    // HEAD: the raw bytes after the headers of a HEAD answer (there must be none).
    seen['HEAD'] = await rawRequest(p, `HEAD /api/v1/balance HTTP/1.1\r\n${H}${A}\r\n`, { timeoutMs: 500 });
  });

  it('a duplicated X-API-Key or X-API-Secret header is refused', () => {
    expect(seen['duplicate key, first valid']!.status).toBe(401);
    expect(seen['duplicate secret, first valid']!.status).toBe(401);
  });

  it('a repeated order query parameter is refused', () => {
    expect(seen['repeated order param, first real']!.status).toBe(400);
  });

  it('two different Content-Length headers are refused and place no order', () => {
    expect(seen['two different Content-Lengths']!.status).toBe(400);
    expect(ordersAfterDuplicateLength).toBe(ordersBefore);
  });

  it('an empty Idempotency-Key is VALIDATION', () => {
    expect(seen['empty Idempotency-Key']!.status).toBe(400);
    expect(ordersAfterEmptyKey).toBe(ordersAfterDuplicateLength);
  });

  // Each uWS bug holds one expectation, so that each starts failing on its own when a release fixes it.
  it.fails('BUG (uWS): a non-ASCII byte at the end of an Idempotency-Key is refused (today uWS strips it: "k1\\xE9" replays key k1)', () => {
    expect(seen['Idempotency-Key k1 + 0xE9']!.status).toBe(400);
  });

  it.fails('BUG (uWS): a non-ASCII character at the end of an X-API-Key is refused (today uWS strips it: "<key>\\u200F" authenticates)', () => {
    expect(seen['X-API-Key + U+200F']!.status).toBe(401);
  });

  it('a target holding a lone surrogate is VALIDATION', () => {
    expect(loneSurrogate.status).toBe(400);
  });

  it('a HEAD answer carries no body', () => {
    const head = seen['HEAD']!;
    expect(head.status).toBe(405);
    expect(head.body.length).toBe(0);
  });
});
