/**
 * The load generator for `bench:http`, run as its own process so that its
 * CPU is separate from the server's (and measurable on its own). It reads
 * its configuration from the JSON file named by its only argument, then
 * runs autocannon against POST /api/v1/order whenever the orchestrator asks
 * over IPC, spreading the requests over the accounts (see RunnerConfig.mode),
 * and sends the figures back. It stays alive between runs so that its JIT
 * stays warm and its ready-made requests are built only once.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FromRunner, LatencySummary, LoadResult, RunnerConfig, ToRunner } from './protocol.js';

interface RequestData {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** The finished HTTP/1.1 request, as autocannon's request builder would make it. */
  requestBuffer?: Buffer;
}

interface Client {
  setRequests(requests: RequestData[]): void;
  /** autocannon 9 internals, used to hand a connection its ready-made requests without rebuilding them. */
  requestIterator?: { requests?: unknown; currentRequestIndex?: number; currentRequest?: unknown };
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
  on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): void;
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

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as RunnerConfig;
const accounts = config.accounts;
if (accounts.length === 0) throw new Error('runner: no accounts in the configuration');
// Everything that does not change per request is built once.
const bodyPrefix = `{"service":${config.serviceId},"target":"https://example.com/p/`;
const bodySuffix = `","quantity":${config.quantity}}`;
let sequence = 0;

function setupRequest(req: RequestData): RequestData {
  const n = sequence++;
  const account = accounts[n % accounts.length]!;
  req.headers['X-API-Key'] = account.key;
  req.headers['X-API-Secret'] = account.secret;
  req.body = bodyPrefix + n + bodySuffix;
  return req;
}

const host = new URL(config.baseUrl).host;

/**
 * Connection c gets accounts c, c + connections, c + 2 × connections, …, as
 * finished requests (built once, here, so that starting a run costs the
 * load generator nothing: building 10,000 requests while the first
 * responses arrive would add ~100 ms to their measured latency).
 */
function prebuiltFor(connection: number): RequestData[] {
  const requests: RequestData[] = [];
  for (let i = connection % accounts.length; i < accounts.length; i += config.connections) {
    const account = accounts[i]!;
    const body = bodyPrefix + i + bodySuffix;
    const headers = { 'Content-Type': 'application/json', 'X-API-Key': account.key, 'X-API-Secret': account.secret };
    const head =
      `POST /api/v1/order HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n` +
      `Content-Type: application/json\r\nX-API-Key: ${account.key}\r\nX-API-Secret: ${account.secret}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    requests.push({ method: 'POST', path: '/api/v1/order', headers, body, requestBuffer: Buffer.from(head + body) });
  }
  return requests;
}

const prebuilt = config.mode === 'prebuilt' ? Array.from({ length: config.connections }, (_, c) => prebuiltFor(c)) : [];

/** Gives a new autocannon client its share of the ready-made requests. */
function handOver(client: Client, requests: RequestData[]): void {
  const iterator = client.requestIterator;
  if (iterator !== undefined && Array.isArray(iterator.requests) && typeof iterator.currentRequestIndex === 'number') {
    iterator.requests = requests;
    iterator.currentRequestIndex = 0;
    iterator.currentRequest = requests[0];
  } else {
    // Another autocannon version: let it build the buffers itself.
    client.setRequests(requests.map(({ method, path, headers, body }) => ({ method, path, headers, body })));
  }
}

function monoUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

function reply(message: FromRunner): void {
  process.send!(message);
}

function run(durationS: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const histogram = new Histogram();
    const startMonoUs = monoUs();
    let nextConnection = 0;
    const options: AutocannonOptions = {
      url: config.baseUrl + '/api/v1/order',
      connections: config.connections,
      duration: durationS,
      timeout: 10,
      headers: { 'Content-Type': 'application/json' },
      requests: [{ method: 'POST', path: '/api/v1/order', headers: {}, setupRequest }],
    };
    if (config.mode === 'prebuilt') {
      const first = prebuilt[0]![0]!;
      options.requests = [{ method: first.method, path: first.path, headers: first.headers, body: first.body! }];
      options.setupClient = (client) => handOver(client, prebuilt[nextConnection++ % prebuilt.length]!);
    }
    const instance = autocannon(
      options,
      (error, result) => {
        const finishMonoUs = monoUs();
        if (error !== null) return reject(error);
        const statusCodes: Record<string, number> = {};
        for (const [code, stat] of Object.entries(result.statusCodeStats)) statusCodes[code] = stat.count;
        const completed = Object.values(statusCodes).reduce((a, b) => a + b, 0);
        resolve({
          durationS: (result.finish.getTime() - result.start.getTime()) / 1000,
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
          perSecond: {
            mean: result.requests.average,
            stddev: result.requests.stddev,
            min: result.requests.min,
            max: result.requests.max,
          },
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
      if (statusCode >= 200 && statusCode < 300) histogram.record(responseTimeMs);
    });
  });
}

if (process.send === undefined) {
  process.stderr.write('runner: start me from bench/http/order.js (I need an IPC channel)\n');
  process.exit(2);
}

process.on('message', (message: ToRunner) => {
  if (message.cmd === 'exit') process.exit(0);
  run(message.durationS).then(
    (result) => reply({ type: 'result', label: message.label, result }),
    (error: unknown) => reply({ type: 'error', message: (error as Error).message }),
  );
});
reply({ type: 'ready' });
