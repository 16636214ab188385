/**
 * Starts the real server (real uWebSockets.js on ephemeral ports, real LMDB
 * in a temporary directory) in this process and talks HTTP to it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, type Clock } from '../../src/platform/clock.js';
import { loadConfig, type Config } from '../../src/app/config.js';
import { createLogger } from '../../src/platform/log.js';
import { startServer, type Server, type ServerOptions } from '../../src/app/server.js';

export const ADMIN_TOKEN = 'test-admin-token';

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface TestServer {
  server: Server;
  dir: string;
  url: string;
  adminUrl: string;
  clock: Clock;
  admin(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  api(method: string, path: string, creds: Creds | null, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  createAccount(name?: string, credits?: string): Promise<Creds>;
  createService(fields?: Partial<{ platform: string; name: string; rate: number | string; min: number; max: number; enabled: boolean } & Record<string, unknown>>): Promise<number>;
  restart(overrides?: Partial<Config>): Promise<void>;
  close(): Promise<void>;
}

export interface Creds {
  id: number;
  key: string;
  secret: string;
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'credit-order-api-test-'));
}

async function request(url: string, method: string, body: unknown, headers: Record<string, string>): Promise<Reply> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

export async function startTestServer(
  options: { dir?: string; clock?: Clock; config?: Partial<Config>; server?: ServerOptions } = {},
): Promise<TestServer> {
  const dir = options.dir ?? tempDir();
  const clock = options.clock ?? new ManualClock();
  const base = loadConfig([], {});
  const configFor = (overrides: Partial<Config> = {}): Config => ({
    ...base,
    host: '127.0.0.1',
    port: 0,
    adminHost: '127.0.0.1',
    adminPort: 0,
    dataDir: dir,
    adminToken: ADMIN_TOKEN,
    logLevel: 'silent',
    seedDemo: false,
    defaultRateLimitPerMinute: 1_000_000,
    // The reserve works as in production, but one MiB each instead of 64:
    // hundreds of test servers start.
    walPreallocateMb: 1,
    ...options.config,
    ...overrides,
  });
  const start = (overrides?: Partial<Config>) =>
    // The sweep runs when a test says so: its timer is wall time, the clock is not.
    startServer(configFor(overrides), { clock, log: createLogger('silent'), onFatal: () => {}, sweepEveryMs: null, ...options.server });
  let server = await start();
  const t: TestServer = {
    server,
    dir,
    clock,
    get url() {
      return `http://127.0.0.1:${server.port}`;
    },
    get adminUrl() {
      return `http://127.0.0.1:${server.adminPort}`;
    },
    admin(method, path, body, headers = {}) {
      return request(`http://127.0.0.1:${server.adminPort}${path}`, method, body, { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers });
    },
    api(method, path, creds, body, headers = {}) {
      const auth: Record<string, string> = creds === null ? {} : { 'x-api-key': creds.key, 'x-api-secret': creds.secret };
      return request(`http://127.0.0.1:${server.port}${path}`, method, body, { ...auth, ...headers });
    },
    async createAccount(name = 'reseller', credits) {
      const created = await t.admin('POST', '/admin/v1/accounts', { name });
      if (created.status !== 201) throw new Error(`account create failed: ${created.text}`);
      const creds = { id: created.body.account.id, key: created.body.api_key, secret: created.body.api_secret };
      if (credits !== undefined) {
        const topped = await t.admin('POST', `/admin/v1/accounts/${creds.id}/credits`, { amount: credits, reason: 'test top-up' });
        if (topped.status !== 200) throw new Error(`top-up failed: ${topped.text}`);
      }
      return creds;
    },
    async createService(fields = {}) {
      const created = await t.admin('POST', '/admin/v1/services', { platform: 'instagram', name: 'Followers', rate: '0.1', min: 1, max: 1000, ...fields });
      if (created.status !== 201) throw new Error(`service create failed: ${created.text}`);
      return created.body.service.id;
    },
    async restart(overrides) {
      await server.close();
      server = await start(overrides);
      t.server = server;
    },
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return t;
}

/**
 * Two round trips to the in-process test server on a route that waits for
 * nothing (the public OpenAPI document; admin replies may wait for a held
 * sync). The server shares this process's event loop, so by their end the
 * loop has read every request written before them and delivered every reply
 * written meanwhile: a test that asserts a request has NOT been answered
 * waits for this rather than for a fixed time.
 */
export async function roundTrips(t: Pick<TestServer, 'api'>): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const r = await t.api('GET', '/api/v1/openapi.json', null);
    if (r.status !== 200) throw new Error(`the round trip got ${r.status}`);
  }
}

export function order(service: number, quantity: number, target = 'https://instagram.com/p/abc'): { service: number; target: string; quantity: number } {
  return { service, target, quantity };
}
