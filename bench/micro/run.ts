/**
 * Micro-benchmarks of the order path's parts (tinybench), each with a
 * baseline in the same run: the decision function, money arithmetic, the
 * token bucket, response serialisation, a WAL batch, the recording of an
 * answered request (metrics and the access log), what queueing one
 * order's writes costs the event loop, checking a key and secret, a new
 * order id, reading an order's JSON body, and the whole order path in
 * process (order-path.ts).
 *
 *   npm run bench:micro            # prints a table per group
 *   node dist/bench/micro/run.js requestRecord   # only the groups named
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { decide, initialState, takeToken, withServiceDefaults, type Command, type WalletRecord } from '../../src/ledger/index.js';
import { formatMicro, multiplyMicro, parseMicro } from '../../src/money/index.js';
import { renderOrderPlaced } from '../../src/wire/index.js';
import { LmdbGroupCommit, openStore, orderIndexKey, type WalEntry } from '../../src/wal/index.js';
import { WriteValues } from '../../src/wal/write-values.js';
import { asBinary, type Database, type Key } from 'lmdb';
import { pino } from 'pino';
import { Metrics } from '../../src/ops/index.js';
import { createLogger } from '../../src/platform/index.js';
import { LogWriter } from '../../src/platform/log-writer.js';
import { requestObserver } from '../../src/http/transport/request-observer.js';
import type { Exchange } from '../../src/http/transport/reply.js';
import { authenticate } from './authenticate.js';
import { jsonRequest } from './json-request.js';
import { orderIds } from './order-ids.js';
import { orderPath } from './order-path.js';

const TIME_MS = 300;

function print(bench: Bench): void {
  process.stdout.write(`\n## ${bench.name}\n\n| task | ops/s | mean ns | p99 ns |\n|---|---:|---:|---:|\n`);
  for (const task of bench.tasks) {
    const r = task.result as { throughput?: { mean: number }; latency?: { mean: number; p99?: number } } | undefined;
    const ops = r?.throughput?.mean ?? 0;
    const mean = (r?.latency?.mean ?? 0) * 1e6;
    const p99 = (r?.latency?.p99 ?? 0) * 1e6;
    process.stdout.write(`| ${task.name} | ${Math.round(ops).toLocaleString('en')} | ${Math.round(mean)} | ${Math.round(p99)} |\n`);
  }
}

const service = withServiceDefaults({ id: 1, platform: 'p', name: 'n', rate: 100_000, min: 1, max: 1_000_000, enabled: true });
const wallet = { id: 1, credits: 1_000_000_000_000_000, banned: false, rateLimitPerMinute: 100_000_000, unlimitedExpiresMs: null };
let seq = 0;
let mono = 0;
const order = (): Command => ({
  kind: 'order',
  requestId: 'req_1',
  orderId: 'AAAAAAAAAAAAAAAAAAAAAA',
  seq: seq++,
  channel: 'api',
  number: seq,
  request: { ok: true, payload: { serviceId: 1, target: 'https://example.com/p/1', quantity: 1000 }, service, idempotency: null, forceJoin: null },
  prior: null,
});

async function decision(): Promise<void> {
  const bench = new Bench({ name: 'decision function', time: TIME_MS });
  let state = initialState(wallet, 0);
  bench
    .add('baseline: object spread of the wallet', () => {
      state = { wallet: { ...state.wallet }, bucket: state.bucket };
    })
    .add('decide(order), accepted', () => {
      state = decide(state, order(), { monotonicMs: mono++, wallMs: 1 }).state;
    })
    .add('decide(balance)', () => {
      state = decide(state, { kind: 'balance' }, { monotonicMs: mono++, wallMs: 1 }).state;
    });
  await bench.run();
  print(bench);
}

async function money(): Promise<void> {
  const bench = new Bench({ name: 'money arithmetic', time: TIME_MS });
  let sink = 0;
  bench
    .add('baseline: float multiply (not used: inexact)', () => {
      sink += 1000 * 0.1;
    })
    .add('multiplyMicro (BigInt, exact)', () => {
      sink += multiplyMicro(1000, 100_000)!;
    })
    .add('formatMicro', () => {
      sink += formatMicro(123_456_789).length;
    })
    .add('parseMicro', () => {
      sink += parseMicro('1234.56789')!;
    });
  await bench.run();
  print(bench);
  if (sink === 42) process.stdout.write('');
}

async function bucket(): Promise<void> {
  const bench = new Bench({ name: 'token bucket', time: TIME_MS });
  let b = { tokens: 60 * 60_000, atMs: 0 };
  let t = 0;
  bench.add('takeToken', () => {
    b = takeToken(b, 100_000_000, t++).bucket;
  });
  await bench.run();
  print(bench);
}

async function serialisation(): Promise<void> {
  const bench = new Bench({ name: 'response serialisation', time: TIME_MS });
  let sink = 0;
  bench
    .add('baseline: JSON.stringify (floats: 0.30000000000000004 risk)', () => {
      sink += JSON.stringify({ ok: true, order: 'AAAAAAAAAAAAAAAAAAAAAA', charge: 100, status: 'pending', balance: 999_900 }).length;
    })
    .add('renderOrderPlaced (exact decimals)', () => {
      sink += renderOrderPlaced({ id: 'AAAAAAAAAAAAAAAAAAAAAA', number: 1_234_567, charge: 100_000_000 }, 999_900_000_000).length;
    });
  await bench.run();
  print(bench);
  if (sink === 42) process.stdout.write('');
}

async function walBatch(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'coa-bench-wal-'));
  const store = openStore(dir);
  const wal = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; } });
  const entry = (i: number): WalEntry => ({
    events: [{ type: 'credits.adjusted', atMs: 1, account: 1, amount: 1, reason: 'bench', balance: i }],
    puts: [{ table: 'wallets', key: 1, value: { ...wallet, credits: i } }],
  });
  const bench = new Bench({ name: 'WAL group commit (LMDB, fsync per batch)', time: 1000, iterations: 20 });
  for (const size of [1, 64, 512]) {
    bench.add(`batch of ${size} entries (one commit + sync)`, async () => {
      let last: Promise<void> = Promise.resolve();
      for (let i = 0; i < size; i++) last = wal.append(entry(i));
      await last;
    });
  }
  await bench.run();
  print(bench);
  process.stdout.write('\n(entries per second = ops/s × batch size)\n');
  await wal.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

/**
 * What recording an answered request costs (src/http/transport/request-observer.ts):
 * the prom-client counter and histogram alone (LOG_LEVEL=warn), and with the
 * access-log line written to a file through the server's buffered log
 * output (platform/log-writer.ts), as standard output under a service
 * manager is.
 */
async function requestRecord(): Promise<void> {
  const bench = new Bench({ name: 'recording an answered request', time: TIME_MS });
  const dir = mkdtempSync(join(tmpdir(), 'credit-order-micro-log-'));
  const routes = ['/api/v1/order', '/api/v1/status'];
  const quiet = requestObserver(new Metrics({ routes }), createLogger('warn', pino.destination({ dest: join(dir, 'warn.log'), sync: true })));
  const infoFd = openSync(join(dir, 'info.log'), 'w');
  const output = new LogWriter(infoFd);
  const logging = requestObserver(new Metrics({ routes }), createLogger('info', output));
  const exchange = { route: '/api/v1/order', method: 'post', startedMs: performance.now(), requestId: 'req_m3FHkFiOoZ8BHTrC', accountId: 12 } as unknown as Exchange;
  bench
    .add('baseline: performance.now()', () => {
      exchange.startedMs = performance.now();
    })
    .add('metrics (prom-client children), no access log', () => {
      quiet.answered(exchange, 201, null);
    })
    .add('metrics and an access-log line (buffered write to a file)', () => {
      logging.answered(exchange, 201, null);
    });
  await bench.run();
  print(bench);
  // CPU time (user and system, every thread) tells less of the machine's other load than the wall clock.
  const calls = 200_000;
  process.stdout.write('\n| task | ns CPU per call |\n|---|---:|\n');
  for (const [name, observer] of [['metrics, no access log', quiet], ['metrics and an access-log line', logging]] as const) {
    const before = process.cpuUsage();
    for (let i = 0; i < calls; i++) observer.answered(exchange, 201, null);
    const used = process.cpuUsage(before);
    process.stdout.write(`| ${name} | ${Math.round(((used.user + used.system) * 1000) / calls)} |\n`);
  }
  output.flush();
  closeSync(infoFd);
  rmSync(dir, { recursive: true, force: true });
}

/** Nanoseconds of CPU this process's main thread has run (Linux schedstat: the event loop's own time, not lmdb-js's write thread). */
function mainThreadNs(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
}

/**
 * What queueing one order's writes costs the event loop: the wallet row,
 * the order row, its status-index and number rows and its order.placed
 * event, as the wallet actor hands them over (built by `decide`), turned
 * into values and put into one lmdb-js write block per 64 orders, as the
 * group commit does. Baseline: every value encoded by its table's encoder
 * before the block (five encodes). Measured: the group commit's
 * WriteValues, which encodes the row once for the orders table and the
 * log (src/wal/placement-record.ts) and leaves the status index's number
 * and the order id to lmdb-js's put. Main-thread CPU per order (Linux
 * schedstat), the two alternated, each line one round.
 */
async function orderWrites(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'coa-bench-order-writes-'));
  const store = openStore(dir);
  let current: WalletRecord = wallet;
  let n = 0;
  const placement = (): WalEntry => {
    n++;
    const command = Object.assign(order(), { orderId: `order-${n}`, number: n });
    const decision = decide(initialState(current, 0), command, { monotonicMs: 0, wallMs: 1_700_000_000_000 + n });
    current = decision.state.wallet;
    const row = decision.order!;
    return {
      events: decision.events,
      puts: [
        { table: 'wallets', key: 1, value: current },
        { table: 'orders', key: row.id, value: row },
        { table: 'orderIndex', key: orderIndexKey(row), value: row.account },
        { table: 'numbers', key: n, value: row.id },
      ],
    };
  };
  let seq = 0;
  type ValueOf = (db: Database<any, any>, value: unknown) => unknown;
  const eachEncoded: (entries: WalEntry[]) => ValueOf = () => (db, value) => asBinary((db as unknown as { encoder: { encode(v: unknown): Uint8Array } }).encoder.encode(value));
  const once: (entries: WalEntry[]) => ValueOf = (entries) => {
    const values = new WriteValues(store, entries);
    return (db, value) => values.of(db, value);
  };
  // The blocks of a round are queued back to back and awaited after the
  // timed part: schedstat's clock moves in scheduler ticks, so the timed
  // part must last many of them.
  const run = async (valuesFor: (entries: WalEntry[]) => ValueOf, blocks: number): Promise<number> => {
    const rounds: WalEntry[][] = [];
    for (let b = 0; b < blocks; b++) rounds.push(Array.from({ length: 64 }, placement));
    const written: Promise<unknown>[] = [];
    const before = mainThreadNs();
    for (const entries of rounds) {
      const of = valuesFor(entries);
      const writes: [Database<any, any>, Key, unknown][] = [];
      for (const entry of entries) {
        for (const event of entry.events) writes.push([store.log, ++seq, of(store.log, event)]);
        for (const put of entry.puts) writes.push([store.tables[put.table], put.key as Key, of(store.tables[put.table], put.value)]);
      }
      written.push(
        store.root.batch(() => {
          for (const [db, key, value] of writes) db.put(key, value);
        }),
      );
    }
    const used = mainThreadNs() - before;
    await Promise.all(written);
    return used / (64 * blocks);
  };
  await run(eachEncoded, 50);
  await run(once, 50);
  process.stdout.write("\n## queueing one order's writes (main-thread ns of CPU per order, blocks of 64)\n\n| round | each value encoded by its table (five encodes) | WriteValues (the row encoded once) |\n|---|---:|---:|\n");
  for (let round = 1; round <= 6; round++) {
    const each = await run(eachEncoded, 150);
    const one = await run(once, 150);
    process.stdout.write(`| ${round} | ${Math.round(each)} | ${Math.round(one)} |\n`);
  }
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

const GROUPS: Record<string, () => Promise<void>> = { decision, money, bucket, serialisation, walBatch, requestRecord, orderWrites, authenticate, orderIds, jsonRequest: () => jsonRequest(print), orderPath };
const chosen = process.argv.slice(2);
for (const name of chosen) if (!(name in GROUPS)) throw new Error(`unknown group ${name}; the groups are ${Object.keys(GROUPS).join(', ')}`);
for (const [name, run] of Object.entries(GROUPS)) if (chosen.length === 0 || chosen.includes(name)) await run();
