/**
 * The load generator for the HTTP benchmarks, run as its own process so
 * that its CPU is separate from the server's (and measurable on its own).
 * It reads its configuration from the JSON file named by its only argument,
 * then runs autocannon whenever the orchestrator asks over IPC, spreading
 * the requests over the accounts (see RunnerConfig.mode and .scenario), and
 * sends the figures back, overall and per endpoint. It stays alive between
 * runs so that its JIT stays warm and its ready-made requests are built
 * only once per connection count.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FromRunner, KindResult, LatencySummary, LoadResult, RequestKind, RunnerConfig, ToRunner } from './protocol.js';

interface RequestData {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** The finished HTTP/1.1 request, as autocannon's request builder would make it. */
  requestBuffer?: Buffer;
  /** Ours: the endpoint, for the per-kind figures. autocannon copies unknown fields along. */
  kind?: RequestKind;
  /** Ours (idempotent scenario): where the 12-digit counter of the Idempotency-Key sits in requestBuffer. */
  keyOffset?: number;
}

interface Client {
  setRequests(requests: RequestData[]): void;
  /** autocannon 9 internals, used to hand a connection its ready-made requests without rebuilding them. */
  requestIterator?: { requests?: unknown; currentRequestIndex?: number; currentRequest?: RequestData };
  /** autocannon 9 internal: what the client writes for the current request; replaced for the idempotent scenario. */
  getRequestBuffer?: () => Buffer;
  /** autocannon 9 internal: writes the next request (called on connect and after each response); wrapped to pace a fixed rate. */
  _doRequest?: () => void;
  destroyed?: boolean;
  /** autocannon 9 internals: the request timeout, which only a write restarts (a held-back connection restarts it too). */
  timeoutTicker?: { reschedule(ms: number): void };
  timeout?: number;
}

interface AutocannonOptions {
  url: string;
  setupClient?: (client: Client) => void;
  connections: number;
  duration: number;
  timeout?: number;
  headers?: Record<string, string>;
  requests: (RequestData & { setupRequest?: (req: RequestData) => RequestData })[];
}

interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  p99_9: number;
  max: number;
  average: number;
  mean: number;
  stddev: number;
  min: number;
  total: number;
}

interface AutocannonResult {
  start: Date;
  finish: Date;
  errors: number;
  timeouts: number;
  resets: number;
  non2xx: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
  latency: Percentiles;
  requests: Percentiles & { sent: number };
}

interface Instance {
  on(event: 'response', listener: (client: Client, statusCode: number, resBytes: number, responseTimeMs: number) => void): void;
  on(event: 'done', listener: (result: AutocannonResult) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
}

type Autocannon = (options: AutocannonOptions, done: (error: Error | null, result: AutocannonResult) => void) => Instance;

const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as Autocannon;

/** 10 µs buckets up to 2 s; slower responses go in an overflow list. */
const BUCKET_US = 10;
const BUCKETS = 200_000;

class Histogram {
  private readonly counts = new Uint32Array(BUCKETS);
  private readonly overflow: number[] = [];
  private count = 0;
  private sumMs = 0;
  private maxMs = 0;

  record(ms: number): void {
    const bucket = Math.floor((ms * 1000) / BUCKET_US);
    if (bucket < BUCKETS) this.counts[bucket]!++;
    else this.overflow.push(ms);
    this.count++;
    this.sumMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  /** The upper edge of the bucket holding the q-quantile, in ms. */
  quantile(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.ceil(q * this.count);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return ((i + 1) * BUCKET_US) / 1000;
    }
    const sorted = [...this.overflow].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, rank - seen - 1)] ?? this.maxMs;
  }

  summary(): LatencySummary {
    return {
      p50: this.quantile(0.5),
      p90: this.quantile(0.9),
      p99: this.quantile(0.99),
      p999: this.quantile(0.999),
      max: this.maxMs,
      mean: this.count === 0 ? 0 : this.sumMs / this.count,
      count: this.count,
    };
  }
}

class KindStats {
  readonly histogram = new Histogram();
  readonly statusCodes: Record<string, number> = {};
  completed = 0;
  ok2xx = 0;

  record(statusCode: number, ms: number): void {
    this.completed++;
    this.statusCodes[statusCode] = (this.statusCodes[statusCode] ?? 0) + 1;
    if (statusCode >= 200 && statusCode < 300) {
      this.ok2xx++;
      this.histogram.record(ms);
    }
  }

  result(): KindResult {
    return { completed: this.completed, ok2xx: this.ok2xx, statusCodes: this.statusCodes, latency: this.histogram.summary() };
  }
}

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as RunnerConfig;
const accounts = config.accounts;
const scenario = config.scenario ?? 'order';
if (accounts.length === 0) throw new Error('runner: no accounts in the configuration');
if (scenario === 'mixed' && config.mode !== 'prebuilt') throw new Error('runner: the mixed scenario needs --mode prebuilt');
if (scenario === 'mixed' && accounts.some((a) => a.orderId === undefined)) throw new Error('runner: the mixed scenario needs an order id per account');
if (scenario === 'v2' && config.mode !== 'prebuilt') throw new Error('runner: the v2 scenario needs --mode prebuilt');
if (scenario === 'v2' && accounts.some((a) => a.v2Key === undefined)) throw new Error('runner: the v2 scenario needs a v2 key per account');
// Everything that does not change per request is built once.
const bodyPrefix = `{"service":${config.serviceId},"target":"https://example.com/p/`;
const bodySuffix = `","quantity":${config.quantity}}`;
/** Idempotency keys: "b-<this runner>-<connections>-<slot>-<counter>", unique per runner process. */
const RUNNER_TAG = randomBytes(4).toString('hex');
const KEY_DIGITS = 12;
let sequence = 0;

function uniqueKey(): string {
  return `b-${RUNNER_TAG}-r-${(sequence++).toString().padStart(KEY_DIGITS, '0')}`;
}

function setupRequest(req: RequestData): RequestData {
  const n = sequence++;
  const account = accounts[n % accounts.length]!;
  req.headers['X-API-Key'] = account.key;
  req.headers['X-API-Secret'] = account.secret;
  if (scenario === 'idempotent') req.headers['Idempotency-Key'] = uniqueKey();
  req.body = bodyPrefix + n + bodySuffix;
  return req;
}

const host = new URL(config.baseUrl).host;

/** A connection slot's ready-made requests and its Idempotency-Key counter. */
interface Slot {
  requests: RequestData[];
  counter: number;
}

function orderRequest(i: number, idempotencyPrefix: string | null): RequestData {
  const account = accounts[i]!;
  const body = bodyPrefix + i + bodySuffix;
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-API-Key': account.key, 'X-API-Secret': account.secret };
  let head =
    `POST /api/v1/order HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n` +
    `Content-Type: application/json\r\nX-API-Key: ${account.key}\r\nX-API-Secret: ${account.secret}\r\n`;
  let keyOffset: number | undefined;
  if (idempotencyPrefix !== null) {
    head += `Idempotency-Key: ${idempotencyPrefix}`;
    keyOffset = head.length; // ASCII only: characters = bytes
    head += `${'0'.repeat(KEY_DIGITS)}\r\n`;
    headers['Idempotency-Key'] = `${idempotencyPrefix}${'0'.repeat(KEY_DIGITS)}`;
  }
  head += `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const request: RequestData = { method: 'POST', path: '/api/v1/order', headers, body, requestBuffer: Buffer.from(head + body), kind: 'order' };
  if (keyOffset !== undefined) request.keyOffset = keyOffset;
  return request;
}

/** API v2's add, form-encoded as PHP's curl sends it; answered 200 {"order": N}. */
function v2OrderRequest(i: number): RequestData {
  const account = accounts[i]!;
  const body = `key=${account.v2Key!}&action=add&service=${config.serviceId}&link=https%3A%2F%2Fexample.com%2Fp%2F${i}&quantity=${config.quantity}`;
  const headers = { 'Content-Type': 'application/x-www-form-urlencoded' };
  const head =
    `POST /api/v2 HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n` +
    `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  return { method: 'POST', path: '/api/v2', headers, body, requestBuffer: Buffer.from(head + body), kind: 'order' };
}

function getRequest(i: number, kind: 'status' | 'balance'): RequestData {
  const account = accounts[i]!;
  const path = kind === 'status' ? `/api/v1/status?order=${account.orderId!}` : '/api/v1/balance';
  const headers = { 'X-API-Key': account.key, 'X-API-Secret': account.secret };
  const head =
    `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n` +
    `X-API-Key: ${account.key}\r\nX-API-Secret: ${account.secret}\r\n\r\n`;
  return { method: 'GET', path, headers, requestBuffer: Buffer.from(head), kind };
}

/**
 * Connection c of n gets accounts c, c + n, c + 2n, …, as finished requests
 * (built once, here, so that starting a run costs the load generator
 * nothing: building 10,000 requests while the first responses arrive would
 * add ~100 ms to their measured latency).
 */
function slotFor(connection: number, connections: number): Slot {
  const requests: RequestData[] = [];
  const idempotencyPrefix = scenario === 'idempotent' ? `b-${RUNNER_TAG}-${connections}-${connection}-` : null;
  for (let i = connection % accounts.length; i < accounts.length; i += connections) {
    requests.push(scenario === 'v2' ? v2OrderRequest(i) : orderRequest(i, idempotencyPrefix));
    if (scenario === 'mixed') {
      requests.push(getRequest(i, 'status'), getRequest(i, 'status'), getRequest(i, 'balance'), getRequest(i, 'status'));
    }
  }
  return { requests, counter: 0 };
}

const slotsByConnections = new Map<number, Slot[]>();

function slots(connections: number): Slot[] {
  let s = slotsByConnections.get(connections);
  if (s === undefined) {
    s = Array.from({ length: connections }, (_, c) => slotFor(c, connections));
    slotsByConnections.set(connections, s);
  }
  return s;
}

/** Writes n as KEY_DIGITS decimal digits into buffer at offset. */
function writeCounter(buffer: Buffer, offset: number, n: number): void {
  for (let i = offset + KEY_DIGITS - 1; i >= offset; i--) {
    buffer[i] = 48 + (n % 10);
    n = Math.floor(n / 10);
  }
}

/** Gives a new autocannon client its share of the ready-made requests. */
function handOver(client: Client, slot: Slot): void {
  const { requests } = slot;
  const iterator = client.requestIterator;
  if (iterator !== undefined && Array.isArray(iterator.requests) && typeof iterator.currentRequestIndex === 'number') {
    iterator.requests = requests;
    iterator.currentRequestIndex = 0;
    iterator.currentRequest = requests[0];
  } else if (scenario === 'order') {
    // Another autocannon version: let it build the buffers itself.
    client.setRequests(requests.map(({ method, path, headers, body }) => ({ method, path, headers, body })));
    return;
  } else {
    throw new Error('runner: this autocannon version has no requestIterator; the mixed and idempotent scenarios need it');
  }
  if (scenario === 'idempotent') {
    // The request buffer is patched in place just before it is written: a
    // connection has one request in flight, so a buffer is never rewritten
    // while the socket may still be sending it.
    client.getRequestBuffer = function (this: Client): Buffer {
      const request = this.requestIterator!.currentRequest!;
      if (request.keyOffset !== undefined) writeCounter(request.requestBuffer!, request.keyOffset, slot.counter++);
      return request.requestBuffer!;
    };
  }
}

/**
 * A fixed offered load, spread evenly in time. autocannon's own rate
 * (overallRate) is a quota per second: every connection sends as fast as
 * it can until its quota is used, then waits for the next second, so the
 * server sees bursts at full speed and idle gaps rather than the load.
 * Here each connection earns perConnection requests a second in 5 ms ticks,
 * starting at a random phase, and writes its next request only when it has
 * earned one (one in flight per connection, as without a rate).
 */
class Pacer {
  private readonly clients: { client: Client; send: () => void; credit: number; waiting: boolean }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private last = performance.now();

  constructor(private readonly perConnection: number) {}

  add(client: Client): void {
    const send = client._doRequest;
    if (send === undefined) throw new Error('runner: this autocannon version has no _doRequest; --rate needs it');
    // Started with the first client, so that a run autocannon refuses to start leaves no timer behind.
    if (this.timer === null) {
      this.last = performance.now();
      this.timer = setInterval(() => this.tick(), 5);
      this.timer.unref();
    }
    const paced = { client, send: send.bind(client), credit: Math.random(), waiting: false };
    client._doRequest = () => {
      if (paced.credit >= 1) {
        paced.credit -= 1;
        paced.send();
      } else {
        paced.waiting = true;
        // Waiting for its turn is not a request timing out: at a low rate per connection the wait can pass autocannon's timeout.
        if (client.timeout !== undefined) client.timeoutTicker?.reschedule(client.timeout);
      }
    };
    this.clients.push(paced);
  }

  private tick(): void {
    const now = performance.now();
    const earned = (this.perConnection * (now - this.last)) / 1000;
    this.last = now;
    for (const paced of this.clients) {
      // At most two earned: a connection held up by a slow response catches up by one, not in a burst.
      paced.credit = Math.min(paced.credit + earned, 2);
      if (paced.waiting && paced.credit >= 1 && paced.client.destroyed !== true) {
        paced.waiting = false;
        paced.credit -= 1;
        paced.send();
      }
    }
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
  }
}

function monoUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

function reply(message: FromRunner): void {
  process.send!(message);
}

function run(durationS: number, connections: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const histogram = new Histogram();
    const kinds = new Map<RequestKind, KindStats>();
    const kindStats = (kind: RequestKind): KindStats => {
      let k = kinds.get(kind);
      if (k === undefined) {
        k = new KindStats();
        kinds.set(kind, k);
      }
      return k;
    };
    const startMonoUs = monoUs();
    let nextConnection = 0;
    const options: AutocannonOptions = {
      url: config.baseUrl + '/api/v1/order',
      connections,
      duration: durationS,
      timeout: 10,
      headers: { 'Content-Type': 'application/json' },
      requests: [{ method: 'POST', path: '/api/v1/order', headers: {}, setupRequest, kind: 'order' }],
    };
    if (config.mode === 'prebuilt') {
      const all = slots(connections);
      // Never sent (setupClient hands every client its own requests before it
      // connects), but built by autocannon: give it a harmless unique request.
      options.requests = [{ method: 'POST', path: '/api/v1/order', headers: { 'Content-Type': 'application/json' }, setupRequest, kind: 'order' }];
      options.setupClient = (client) => handOver(client, all[nextConnection++ % all.length]!);
    }
    const pacer = config.rate == null ? null : new Pacer(config.rate / connections);
    if (pacer !== null) {
      const setup = options.setupClient;
      options.setupClient = (client) => {
        setup?.(client);
        pacer.add(client);
      };
    }
    const instance = autocannon(options, (error, result) => {
      pacer?.stop();
      const finishMonoUs = monoUs();
      if (error !== null) return reject(error);
      const statusCodes: Record<string, number> = {};
      for (const [code, stat] of Object.entries(result.statusCodeStats)) statusCodes[code] = stat.count;
      const completed = Object.values(statusCodes).reduce((a, b) => a + b, 0);
      const byKind: LoadResult['byKind'] = {};
      for (const [kind, stats] of kinds) byKind[kind] = stats.result();
      resolve({
        durationS: (result.finish.getTime() - result.start.getTime()) / 1000,
        connections,
        startMonoUs,
        finishMonoUs,
        sent: result.requests.sent,
        completed,
        ok2xx: result['2xx'],
        non2xx: result.non2xx,
        statusCodes,
        errors: result.errors,
        timeouts: result.timeouts,
        resets: result.resets,
        autocannonLatencyMs: {
          p50: result.latency.p50,
          p90: result.latency.p90,
          p99: result.latency.p99,
          p999: result.latency.p99_9,
          max: result.latency.max,
          mean: result.latency.average,
        },
        latency: histogram.summary(),
        byKind,
        perSecond: {
          mean: result.requests.average,
          stddev: result.requests.stddev,
          min: result.requests.min,
          max: result.requests.max,
        },
      });
    });
    // autocannon emits 'response' synchronously from the client, before the
    // client moves on to its next request: the current request is the one
    // this response answers.
    instance.on('response', (client, statusCode, _bytes, responseTimeMs) => {
      if (statusCode >= 200 && statusCode < 300) histogram.record(responseTimeMs);
      kindStats(client.requestIterator?.currentRequest?.kind ?? 'order').record(statusCode, responseTimeMs);
    });
  });
}

if (process.send === undefined) {
  process.stderr.write('runner: start me from a bench/http orchestrator (I need an IPC channel)\n');
  process.exit(2);
}

process.on('message', (message: ToRunner) => {
  if (message.cmd === 'exit') process.exit(0);
  run(message.durationS, message.connections ?? config.connections).then(
    (result) => reply({ type: 'result', label: message.label, result }),
    (error: unknown) => reply({ type: 'error', message: (error as Error).message }),
  );
});
reply({ type: 'ready' });
