/**
 * The test fixture for a running server: the real server (real
 * uWebSockets.js on ephemeral ports, real LMDB in a temporary directory) in
 * this process, started and closed around the tests that use it (`useServer`,
 * `withServer`), with the services and accounts a test needs made through
 * the admin API, and typed HTTP helpers for the customer APIs (v1 JSON, v2
 * forms) and the admin API.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { loadConfig, type Config } from '../../src/app/config.js';
import { createLogger } from '../../src/platform/log.js';
import { startServer, type Server, type ServerOptions } from '../../src/app/server.js';
import { assertMatchesOpenApi } from './openapi-check.js';

export const ADMIN_TOKEN = 'test-admin-token';

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface TestServer {
  /** The running server; a property read before `start` or after `close` throws. */
  readonly server: Server;
  readonly dir: string;
  readonly url: string;
  readonly adminUrl: string;
  readonly clock: ManualClock;
  /** A request to the admin API with the operator's token. */
  admin(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  /**
   * A request to the customer API v1 with an account's key and secret (`null`: no credentials);
   * the response is held to the OpenAPI document (see openapi-check.ts), and one that departs from it throws.
   */
  api(method: string, path: string, creds: Creds | null, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  /** A form-encoded POST to the customer API v2, as reseller panels send it. */
  v2(fields: Record<string, string | number>, headers?: Record<string, string>): Promise<Reply>;
  /** A new account, topped up with `credits` when given. */
  createAccount(name?: string, credits?: string): Promise<Creds>;
  /** A new enabled service: instagram Followers at 0.1 a unit, 1 to 1,000, unless `fields` say otherwise. */
  createService(fields?: Partial<{ platform: string; name: string; rate: number | string; min: number; max: number; enabled: boolean } & Record<string, unknown>>): Promise<number>;
  /** Issues the account's API v2 key and returns it. */
  issueV2Key(account: number): Promise<string>;
  /** Closes the server and starts it again on the same directory and clock. */
  restart(overrides?: Partial<Config>): Promise<void>;
  /** Closes the server and removes its directory. */
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

/** What a test may set on the server it starts: the clock, the configuration, the server's own options. */
export interface StartOptions {
  /** The data directory (default: a fresh temporary one, removed by `close`). */
  dir?: string;
  /** The clock (default: a fresh `ManualClock`); tests move it, never sleep for it. */
  clock?: ManualClock;
  config?: Partial<Config>;
  server?: ServerOptions;
}

/** The test configuration: loopback, ephemeral ports, quiet, no demo seed, and room for any rate a test sends. */
function testConfig(dir: string, overrides: Partial<Config>): Config {
  return {
    ...loadConfig([], {}),
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
    ...overrides,
  };
}

/** A test server with the step that starts it. */
export type StartableServer = TestServer & { start(): Promise<void> };

/**
 * A test server that is not running yet: `start` starts it (again after a
 * `close`, on a fresh directory and clock unless the options name them), and
 * every property reads the server that runs now. `useServer` starts and
 * closes it around a describe block's tests. Options given as a function are
 * read at each start: for options known only then, such as the address of a
 * fake service an earlier hook started.
 */
export function testServer(options: StartOptions | (() => StartOptions) = {}): StartableServer {
  let running: { server: Server; dir: string; clock: ManualClock; options: StartOptions } | null = null;
  const now = () => {
    if (running === null) throw new Error('the test server is not running: start it first (useServer starts it before each test)');
    return running;
  };
  const start = async (o: StartOptions, dir: string, clock: ManualClock, overrides: Partial<Config> = {}) => ({
    // The sweeps run when a test says so: their timers are wall time, the clock is not.
    server: await startServer(testConfig(dir, { ...o.config, ...overrides }), { clock, log: createLogger('silent'), onFatal: () => {}, sweepEveryMs: null, leaseSweepEveryMs: null, subscriptionSweepEveryMs: null, ...o.server }),
    dir,
    clock,
    options: o,
  });
  const t: StartableServer = {
    get server() {
      return now().server;
    },
    get dir() {
      return now().dir;
    },
    get clock() {
      return now().clock;
    },
    get url() {
      return `http://127.0.0.1:${now().server.port}`;
    },
    get adminUrl() {
      return `http://127.0.0.1:${now().server.adminPort}`;
    },
    async start() {
      const o = typeof options === 'function' ? options() : options;
      running = await start(o, o.dir ?? tempDir(), o.clock ?? new ManualClock());
    },
    admin(method, path, body, headers = {}) {
      return request(`${t.adminUrl}${path}`, method, body, { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers });
    },
    async api(method, path, creds, body, headers = {}) {
      const auth: Record<string, string> = creds === null ? {} : { 'x-api-key': creds.key, 'x-api-secret': creds.secret };
      const reply = await request(`${t.url}${path}`, method, body, { ...auth, ...headers });
      assertMatchesOpenApi(method, path, reply.status, reply.headers, reply.text);
      return reply;
    },
    v2(fields, headers = {}) {
      const form = new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, String(v)])).toString();
      return request(`${t.url}/api/v2`, 'POST', form, { 'content-type': 'application/x-www-form-urlencoded', ...headers });
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
    async issueV2Key(account) {
      const issued = await t.admin('POST', `/admin/v1/accounts/${account}/v2-key`);
      if (issued.status !== 200) throw new Error(`v2 key issue failed: ${issued.text}`);
      return issued.body.v2_key;
    },
    async restart(overrides) {
      const { server, dir, clock, options: o } = now();
      await server.close();
      running = await start(o, dir, clock, overrides);
    },
    async close() {
      if (running === null) return;
      const { server, dir } = running;
      running = null;
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return t;
}

/** Starts a test server now; the caller closes it. */
export async function startTestServer(options: StartOptions = {}): Promise<TestServer> {
  const t = testServer(options);
  await t.start();
  return t;
}

/** The fields of a service `createService` makes. */
export type ServiceFields = Parameters<TestServer['createService']>[0];

/**
 * The services and funded accounts a block of tests shares, by the names the
 * tests read them under: `{ services: { main: { rate: '0.1' } }, accounts:
 * { alice: '100' } }` makes the service `t.services.main` and the account
 * named alice, topped up with 100 credits, `t.accounts.alice`. The services
 * are made first, then the accounts, each in the order written.
 */
export interface Customers<S extends string = never, A extends string = never> {
  services?: Record<S, ServiceFields>;
  /** Each account's name, and the credits it is topped up with. */
  accounts?: Record<A, string>;
}

/** A test server with the services and accounts its options named, made after it started. */
export interface CustomerServer<S extends string = never, A extends string = never> extends TestServer {
  readonly services: Readonly<Record<S, number>>;
  readonly accounts: Readonly<Record<A, Creds>>;
}

async function makeCustomers<S extends string, A extends string>(t: TestServer, customers: Customers<S, A>) {
  const services = {} as Record<S, number>;
  for (const [name, fields] of Object.entries(customers.services ?? {}) as [S, ServiceFields][]) services[name] = await t.createService(fields);
  const accounts = {} as Record<A, Creds>;
  for (const [name, credits] of Object.entries(customers.accounts ?? {}) as [A, string][]) accounts[name] = await t.createAccount(name, credits);
  return { services, accounts };
}

/** `t` with `services` and `accounts` that read what `made` returns at the time. */
function withCustomers<S extends string, A extends string>(
  t: TestServer,
  made: () => { services: Record<S, number>; accounts: Record<A, Creds> },
): CustomerServer<S, A> {
  return Object.defineProperties(t, {
    services: { get: () => made().services },
    accounts: { get: () => made().accounts },
  }) as CustomerServer<S, A>;
}

/** How `useServer` runs its server: what to start it with, and for how long. */
export interface FixtureOptions<S extends string = never, A extends string = never> extends StartOptions, Customers<S, A> {
  /** A fresh server for every test rather than one for the whole block. */
  perTest?: boolean;
  /**
   * Options read at each start, over the others: for what is known only
   * then, such as the address of a fake service an earlier hook started, or
   * a clock at the wall time of the test.
   */
  late?: () => StartOptions;
}

/**
 * One test server for the enclosing describe block (or file): started before
 * its first test, then the services and accounts the options name are made,
 * then `setup` makes anything else the block needs through the admin API;
 * closed after its last test. With `perTest`, a fresh server (directory,
 * clock, services, accounts, setup) for every test instead. The returned
 * object is the server, usable inside the tests and hooks.
 */
export function useServer<S extends string = never, A extends string = never>(
  options: FixtureOptions<S, A> = {},
  setup?: (t: CustomerServer<S, A>) => Promise<void>,
): CustomerServer<S, A> {
  const { perTest, late, services, accounts, ...start } = options;
  const server = testServer(late === undefined ? start : () => ({ ...start, ...late() }));
  let made: Awaited<ReturnType<typeof makeCustomers<S, A>>> | null = null;
  const t = withCustomers(server, () => {
    if (made === null) throw new Error('the services and accounts are made when the server starts: read them inside a test');
    return made;
  });
  const [before, after] = perTest === true ? [beforeEach, afterEach] : [beforeAll, afterAll];
  before(async () => {
    made = null;
    await server.start();
    made = await makeCustomers(server, { services, accounts });
    await setup?.(t);
  });
  after(() => server.close());
  return t;
}

/**
 * Runs `test` against a server of its own, with the services and accounts
 * the options name, and closes the server whatever happens.
 */
export async function withServer<S extends string = never, A extends string = never>(
  options: StartOptions & Customers<S, A>,
  test: (t: CustomerServer<S, A>) => Promise<void>,
): Promise<void> {
  const { services, accounts, ...start } = options;
  const t = await startTestServer(start);
  try {
    const made = await makeCustomers(t, { services, accounts });
    await test(withCustomers(t, () => made));
  } finally {
    await t.close();
  }
}

/**
 * Temporary directories for the enclosing describe block's tests (snapshot
 * targets, copies of a store), removed after its last test: the returned
 * function makes one.
 */
export function useScratchDirs(): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = tempDir();
    dirs.push(dir);
    return dir;
  };
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
