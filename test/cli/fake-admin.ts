import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { runCli } from '../../src/cli/index.js';

/*
 * A small fake of the admin API on a loopback port, for driving the CLI
 * in-process: it records each request and answers with contract-shaped
 * bodies (src/http/admin.ts, src/http/admin-orders.ts). Tests override the
 * answer with `fake.reply`.
 */

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status: number;
  /** A string is sent verbatim (for non-JSON and exact-text cases); anything else is JSON-encoded. */
  body: unknown;
}

export const ACCOUNT = {
  id: 1,
  name: 'alice',
  credits: 12.5,
  banned: false,
  rate_limit_per_minute: 60,
  unlimited: false,
  unlimited_expires: null,
  created_at: '2025-01-01T00:00:00.000Z',
};
/** Two accounts, numbered as the admin API numbers them; the fake pages through them with the cursor "1" (the last id of a page of one). */
export const ACCOUNTS = [
  ACCOUNT,
  { ...ACCOUNT, id: 22, name: 'bob', credits: 1000000000.123456, banned: true, rate_limit_per_minute: 100000000, unlimited: true, unlimited_expires: '2026-02-01T00:00:00.000Z' },
];
export const SERVICE = { id: 3, platform: 'telegram', name: 'Members', rate: 0.5, rate_per_1000: 500, min: 10, max: 1000, enabled: true };

/** Order ids are 22 base64url characters. */
export const ORDER_ID = 'AbCdEfGhIjKlMnOpQrSt_1';
export const ORDER = {
  id: ORDER_ID,
  number: 41,
  account: 7,
  service: 3,
  target: 'https://t.me/somechannel',
  quantity: 100,
  type: 'Default',
  runs: null,
  rate: 0.5,
  charge: 50,
  debit: 50,
  status: 'pending',
  remains: null,
  remains_shown: 100,
  channel: 'api',
  unlimited: false,
  created_at: '2025-01-02T03:04:05.000Z',
};
/** Three pending orders; the fake pages through them with cursors "c1", "c2". */
export const ORDERS = [
  ORDER,
  { ...ORDER, id: 'AbCdEfGhIjKlMnOpQrSt_2', account: 12, quantity: 10, remains_shown: 10, charge: 5, debit: 0, channel: 'panel', unlimited: true },
  { ...ORDER, id: 'AbCdEfGhIjKlMnOpQrSt_3', charge: 1000000000.123456, debit: 1000000000.123456 },
];

export const REPORT = {
  ok: true,
  first_broken: null,
  broken: [],
  counts: { events: 42, accounts: 2, orders: 3, idempotency_keys: 1 },
  totals: { credited: 1000.5, debited: 55, refunded: 0.25 },
};

export const STATS = {
  ok: true,
  accounts: 2,
  services: 1,
  orders: { pending: 3, processing: 0, in_progress: 1, completed: 4, partial: 0, canceled: 2 },
  deepest_mailbox: 5,
  wal: { batches: 10, commits: 9, entries: 12, events: 12, lastBatchEntries: 1, lastSyncMs: 0.25, pendingEntries: 0 },
};

function ordersPage(url: URL): Reply {
  const limit = Number(url.searchParams.get('limit') ?? '100');
  const cursor = url.searchParams.get('cursor');
  const start = cursor === null ? 0 : Number(cursor.slice(1));
  const page = ORDERS.slice(start, start + limit);
  const end = start + page.length;
  return { status: 200, body: { ok: true, orders: page, next_cursor: end < ORDERS.length ? `c${end}` : null } };
}

function accountsPage(url: URL): Reply {
  const limit = Number(url.searchParams.get('limit') ?? '100');
  const cursor = url.searchParams.get('cursor');
  const start = cursor === null ? 0 : ACCOUNTS.findIndex((a) => String(a.id) === cursor) + 1;
  const page = ACCOUNTS.slice(start, start + limit);
  const more = start + page.length < ACCOUNTS.length;
  return { status: 200, body: { ok: true, accounts: page, next_cursor: more ? String(page[page.length - 1]!.id) : null } };
}

/** The contract's happy path; individual tests override with `fake.reply`. */
export function contractReply(req: Recorded): Reply {
  const url = new URL(req.url, 'http://fake');
  const route = `${req.method} ${url.pathname}`;
  const json = req.body ? (JSON.parse(req.body) as Record<string, unknown>) : {};
  if (route === 'GET /healthz') return { status: 200, body: { ok: true } };
  if (route === 'POST /admin/v1/accounts') {
    return { status: 201, body: { ok: true, account: { ...ACCOUNT, name: json.name }, api_key: 'ak_123', api_secret: 'sk_secret' } };
  }
  if (route === 'GET /admin/v1/accounts') return accountsPage(url);
  if (route === 'GET /admin/v1/accounts/1') return { status: 200, body: { ok: true, account: ACCOUNT } };
  if (route === 'POST /admin/v1/accounts/1/credits') return { status: 200, body: { ok: true, credits: 12.8 } };
  if (route === 'PATCH /admin/v1/accounts/1') {
    const { reason: _reason, ...fields } = json;
    return { status: 200, body: { ok: true, account: { ...ACCOUNT, ...fields } } };
  }
  if (route === 'POST /admin/v1/accounts/1/rotate-secret') {
    return { status: 200, body: { ok: true, api_key: 'ak_123', api_secret: 'sk_new' } };
  }
  if (route === 'POST /admin/v1/accounts/1/v2-key') return { status: 200, body: { ok: true, account: 1, v2_key: '0123456789abcdef0123456789abcdef' } };
  if (route === 'DELETE /admin/v1/accounts/1/v2-key') return { status: 200, body: { ok: true, account: 1 } };
  if (route === 'POST /admin/v1/accounts/1/plan') {
    return {
      status: 200,
      body: { ok: true, account: { ...ACCOUNT, unlimited: true, unlimited_expires: '2025-03-01T00:00:00.000Z' }, price_inr: 19998 },
    };
  }
  if (route === 'POST /admin/v1/accounts/1/forcejoin') {
    return {
      status: 200,
      body: {
        ok: true,
        account: {
          ...ACCOUNT,
          telegram_user_id: json.telegram_user_id ?? null,
          forcejoin_verified: json.verified ?? false,
          forcejoin_exempt: json.exempt ?? false,
        },
      },
    };
  }
  if (route === 'POST /admin/v1/accounts/1/orders') {
    return { status: 201, body: { ok: true, order: ORDER_ID, number: 41, charge: 50, status: 'pending', balance: 7.5 } };
  }
  if (route === 'POST /admin/v1/services') {
    const { reason: _reason, ...fields } = json;
    return { status: 201, body: { ok: true, service: { ...SERVICE, ...fields } } };
  }
  if (route === 'PATCH /admin/v1/services/3') {
    const { reason: _reason, ...fields } = json;
    return { status: 200, body: { ok: true, service: { ...SERVICE, ...fields } } };
  }
  if (route === 'GET /admin/v1/services') {
    return { status: 200, body: { ok: true, services: [SERVICE, { ...SERVICE, id: 12, name: 'Views', rate: 0.001, rate_per_1000: 1, min: 100, max: 100000, enabled: false }] } };
  }
  if (route === 'GET /admin/v1/orders') return ordersPage(url);
  if (route === `GET /admin/v1/orders/${ORDER_ID}`) return { status: 200, body: { ok: true, order: ORDER } };
  if (route === `POST /admin/v1/orders/${ORDER_ID}/status`) {
    const remains = json.remains ?? null;
    return { status: 200, body: { ok: true, order: { ...ORDER, status: json.status, remains }, refund: remains === null ? 50 : 2, credits: 62.5 } };
  }
  if (route === 'POST /admin/v1/snapshot') {
    return { status: 200, body: { ok: true, snapshot: { path: json.out, bytes: 1_572_864, events: 42, verify: REPORT } } };
  }
  if (route === 'GET /admin/v1/verify') return { status: 200, body: { ok: true, report: REPORT } };
  if (route === 'GET /admin/v1/stats') return { status: 200, body: STATS };
  return { status: 404, body: { ok: false, error: 'NOT_FOUND', message: 'No such route.' } };
}

export interface FakeAdmin {
  baseUrl: string;
  /** Requests received during the current test. */
  requests: Recorded[];
  /** How the fake answers; reset to `contractReply` after each test. */
  reply: (req: Recorded) => Reply;
}

/** Starts the fake for the calling test file, resetting recorded requests and replies after each test. */
export function useFakeAdmin(): FakeAdmin {
  let server: Server;
  const fake: FakeAdmin = { baseUrl: '', requests: [], reply: contractReply };
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        fake.requests.push(recorded);
        const { status, body } = fake.reply(recorded);
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  afterEach(() => {
    fake.requests = [];
    fake.reply = contractReply;
  });
  return fake;
}

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** Runs the CLI against the fake, with ADMIN_URL and ADMIN_TOKEN set unless `env` says otherwise. */
export async function runAgainst(fake: FakeAdmin, args: string[], env?: NodeJS.ProcessEnv): Promise<CliRun> {
  let out = '';
  let err = '';
  const code = await runCli(args, {
    stdout: (s) => (out += s),
    stderr: (s) => (err += s),
    env: env ?? { ADMIN_URL: fake.baseUrl, ADMIN_TOKEN: 'tok-env' },
  });
  return { code, out, err };
}

/** The one request the test made. */
export function onlyRequest(fake: FakeAdmin): Recorded {
  expect(fake.requests).toHaveLength(1);
  return fake.requests[0]!;
}
