/**
 * `npm run bench`: every benchmark in one go, then bench/RESULTS.md and
 * bench/throughput.svg regenerated from the figures.
 *
 *  1. micro-benchmarks (node dist/bench/micro/run.js; its markdown is kept);
 *  2. the order path (10,000 accounts, 64 connections) with the load
 *     generator's ceiling measured right before and right after every run:
 *     the same runner, requests and connections against a bare
 *     uWebSockets.js server answering a fixed JSON body (http/stub.ts);
 *  3. the mixed (1 order : 3 status : 1 balance) and idempotent (a new
 *     Idempotency-Key per order) scenarios;
 *  4. the conventional peer (bench/peers/fastify-postgres), when present;
 *  5. connections 16 / 64 / 128 / 256 on one server: durable orders/s, p99
 *     and entries per group commit (the chart);
 *  6. scaling with the data set: 1,000 / 100,000 (/ 1,000,000 with --full)
 *     accounts seeded directly into LMDB, and accounts with already-placed
 *     orders stored (100,000 with 1,000,000; --full: 1,000,000 with 1 and
 *     10 million): start time, memory per wallet, a short order run, verify,
 *     restart time against the data size, and issue 5's target (orders/s at
 *     1,000,000 accounts and 10,000,000 orders ≥ 0.8 × at 1,000 and none).
 *
 * Everything outside the hand-written analysis markers of RESULTS.md is
 * regenerated; the analysis section (and the bench:http block inside it)
 * is kept as it is. --help lists the options.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { throughputSvg, type ChartPoint } from './chart.js';
import { describeCeiling, startCeiling, type Ceiling, type CeilingReport } from './http/ceiling.js';
import { describeRun, failures, msPerCommit, type RunReport } from './http/measure.js';
import { cpuModel } from './http/procstat.js';
import type { Scenario } from './http/protocol.js';
import { perWallet, pointList, pointName, runScaling, type ScalingPoint, type ScalingResult, type ScalingStep } from './http/scaling.js';
import { openSession, type Session } from './http/scenario.js';
import { diskOf, f0, f1, f2, filesystemOf, intList, log, MiB, positiveInt, REPO_ROOT, setLogPrefix, shellArgs, sourceVersion, QUIET_OPTION_SPECS, quietOptions, type QuietOptions } from './http/util.js';
import { describeSyncLatency, measureSyncLatency } from './http/sync-latency.js';

const HELP = `Usage: npm run bench -- [options]

  --quick               about 3 minutes: one run of each figure, short runs, scaling to 100,000
                        accounts (default: two runs of each, 10 s runs, and 100,000 accounts with 1,000,000 stored
                        orders; about 7 minutes)
  --full                add 1,000,000 accounts, and 1,000,000 accounts with 1,000,000 and with 10,000,000
                        stored orders, to the scaling (about 5 minutes more: seeding 10,000,000 orders takes about a minute)
  --runs N              measured runs of each figure (default 2; --quick 1)
  --duration S          seconds per measured run of the ceiling, order path, scenarios, peer (default 10; --quick 5)
  --warmup S            seconds of unmeasured load before them (default 3; --quick 2)
  --accounts N          accounts for the scenarios, the peer and the connection sweep (default 10000)
  --connections N       connections for the ceiling, scenarios and peer (default 64)
  --sweep LIST          connection counts for the chart (default 16,64,128,256)
  --sweep-duration S    seconds per connection count (default 8; --quick 4)
  --sizes LIST          scaling sizes: accounts with no stored orders (default 1000,100000; --full adds 1000000)
  --steps LIST          scaling steps with stored orders, accounts:orders, run after the sizes
                        (default 100000:1000000; --full 1000000:1000000,1000000:10000000; --quick none)
  --scaling-duration S  seconds of load per scaling size (default 5; --quick 4)
  --load-accounts N     most accounts the scaling load spreads over (default 100000)
  --touch-accounts N    accounts loaded with a balance request for the memory-per-wallet figure
                        (default 100000: fewer, and V8's step-wise heap growth swamps the figure)
  --quiet-wait S        before each measured run wait up to S s for other processes to go quiet (default 0)
  --quiet-below PCT     "quiet": the machine below PCT percent busy (default 10)
  --skip LIST           leave out some of: micro,order,mixed,idempotent,peer,sweep,scaling
  --no-write            do not touch bench/RESULTS.md and bench/throughput.svg
  --json FILE           also write every figure as JSON
  --from-json FILE      measure nothing: regenerate RESULTS.md and the chart from a --json file
`;

const SECTIONS = ['micro', 'order', 'mixed', 'idempotent', 'peer', 'sweep', 'scaling'] as const;
type Section = (typeof SECTIONS)[number];

const here = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url));
const RESULTS_MD = join(REPO_ROOT, 'bench', 'RESULTS.md');
const CHART_SVG = join(REPO_ROOT, 'bench', 'throughput.svg');
const MICRO = here('./micro/run.js');
const PEER = here('./peers/fastify-postgres/run.js');
const TARGET_ORDERS = 25_000;
const TARGET_P99 = 10;
/** Issue 5: orders/s at TARGET_SCALED ≥ TARGET_SCALED_RATIO × at TARGET_SCALED_BASE. */
const TARGET_SCALED: ScalingPoint = { accounts: 1_000_000, orders: 10_000_000 };
const TARGET_SCALED_BASE: ScalingPoint = { accounts: 1000, orders: 0 };
const TARGET_SCALED_RATIO = 0.8;
const QUANTITY = 1000;

interface Options extends QuietOptions {
  quick: boolean;
  full: boolean;
  runs: number;
  duration: number;
  warmup: number;
  accounts: number;
  connections: number;
  sweep: number[];
  sweepDuration: number;
  sizes: number[];
  steps: ScalingPoint[];
  scalingDuration: number;
  loadAccounts: number;
  touchAccounts: number;
  skip: Set<Section>;
  write: boolean;
  json: string | null;
  fromJson: string | null;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      quick: { type: 'boolean', default: false },
      full: { type: 'boolean', default: false },
      runs: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      accounts: { type: 'string', default: '10000' },
      connections: { type: 'string', default: '64' },
      sweep: { type: 'string', default: '16,64,128,256' },
      'sweep-duration': { type: 'string' },
      sizes: { type: 'string' },
      steps: { type: 'string' },
      'scaling-duration': { type: 'string' },
      'load-accounts': { type: 'string', default: '100000' },
      'touch-accounts': { type: 'string' },
      ...QUIET_OPTION_SPECS,
      skip: { type: 'string', default: '' },
      'no-write': { type: 'boolean', default: false },
      json: { type: 'string' },
      'from-json': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const quick = values.quick;
  const skip = new Set<Section>();
  for (const name of values.skip.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    if (!(SECTIONS as readonly string[]).includes(name)) throw new Error(`--skip: unknown section ${JSON.stringify(name)} (known: ${SECTIONS.join(', ')})`);
    skip.add(name as Section);
  }
  const sizes = values.sizes !== undefined ? intList('sizes', values.sizes) : [1000, 100_000, ...(values.full ? [1_000_000] : [])];
  const defaultSteps = values.full ? '1000000:1000000,1000000:10000000' : quick ? '' : '100000:1000000';
  const stepsText = values.steps ?? defaultSteps;
  const steps = stepsText === '' ? [] : pointList('steps', stepsText);
  return {
    quick,
    full: values.full,
    runs: positiveInt('runs', values.runs ?? (quick ? '1' : '2')),
    duration: positiveInt('duration', values.duration ?? (quick ? '5' : '10')),
    warmup: positiveInt('warmup', values.warmup ?? (quick ? '2' : '3'), 0),
    accounts: positiveInt('accounts', values.accounts),
    connections: positiveInt('connections', values.connections),
    sweep: intList('sweep', values.sweep),
    sweepDuration: positiveInt('sweep-duration', values['sweep-duration'] ?? (quick ? '4' : '8')),
    sizes,
    steps,
    scalingDuration: positiveInt('scaling-duration', values['scaling-duration'] ?? (quick ? '4' : '5')),
    loadAccounts: positiveInt('load-accounts', values['load-accounts']),
    touchAccounts: positiveInt('touch-accounts', values['touch-accounts'] ?? '100000', 0),
    ...quietOptions(values),
    skip,
    write: !values['no-write'],
    json: values.json ?? null,
    fromJson: values['from-json'] ?? null,
  };
}

// ---------------------------------------------------------------- figures

type Outcome<T> = { ok: true; value: T; seconds: number } | { ok: false; error: string; seconds: number } | { ok: null; reason: string };

interface OrderPathRun {
  ceilingBefore: CeilingReport;
  order: RunReport;
  ceilingAfter: CeilingReport;
  /** Order path req/s ÷ mean of the two ceilings. */
  fraction: number;
}

interface OrderPath {
  seedS: number;
  readyMs: number;
  runs: OrderPathRun[];
  stopCode: number | null;
}

interface ScenarioFigures {
  scenario: Scenario;
  seedS: number;
  primeS: number;
  loadAccounts: number;
  runs: RunReport[];
  stopCode: number | null;
}

interface PeerFigures {
  /** What the peer module returned (its own result object). */
  result: unknown;
  markdown: string;
  runs: { label: string; requestsPerS: number; durableOrdersPerS: number; p99: number }[];
}

interface Environment {
  date: string;
  command: string;
  /** The arguments given to run-all.js. */
  args?: string[];
  source: string;
  node: string;
  cpu: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  dataDir: string;
  /** The disk's measured sync latency, as a sentence (http/sync-latency.ts); absent in results older than the probe. */
  syncLatency?: string;
  versions: Record<string, string>;
}

interface Results {
  env: Environment;
  options: Omit<Options, 'skip'> & { skip: Section[] };
  totalS: number;
  micro: Outcome<string>;
  orderPath: Outcome<OrderPath>;
  mixed: Outcome<ScenarioFigures>;
  idempotent: Outcome<ScenarioFigures>;
  peer: Outcome<PeerFigures>;
  sweep: Outcome<RunReport[]>;
  scaling: Outcome<ScalingResult>;
}

async function section<T>(name: Section, options: Options, run: () => Promise<T>): Promise<Outcome<T>> {
  if (options.skip.has(name)) return { ok: null, reason: 'skipped (--skip)' };
  log(`---- ${name}`);
  const started = performance.now();
  try {
    const value = await run();
    return { ok: true, value, seconds: (performance.now() - started) / 1000 };
  } catch (error) {
    const message = (error as Error).message ?? String(error);
    log(`${name} FAILED: ${(error as Error).stack ?? message}`);
    return { ok: false, error: message, seconds: (performance.now() - started) / 1000 };
  }
}

function runMicro(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MICRO], { stdio: ['ignore', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => {
      chunks.push(c);
      process.stdout.write(c);
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve(Buffer.concat(chunks).toString('utf8').trim());
      else reject(new Error(`node dist/bench/micro/run.js exited with code ${code}`));
    });
  });
}

function sessionFor(scenario: Scenario, options: Options): Promise<Session> {
  return openSession({ scenario, accounts: options.accounts, connections: options.connections, mode: 'prebuilt', quantity: QUANTITY, seed: 'direct' });
}

async function orderPath(options: Options): Promise<OrderPath> {
  const session = await sessionFor('order', options);
  let ceiling: Ceiling | null = null;
  try {
    // The same accounts (so the same request sizes) against the stub.
    const accounts = Array.from({ length: session.loadAccounts }, (_, i) => session.seeded.account(i));
    ceiling = await startCeiling(accounts, { connections: options.connections, mode: 'prebuilt', quantity: QUANTITY });
    await ceiling.runner.run('warm-up', Math.max(1, options.warmup));
    if (options.warmup > 0) await session.warmup(options.warmup);
    const runs: OrderPathRun[] = [];
    for (let i = 1; i <= options.runs; i++) {
      const ceilingBefore = await ceiling.measure(`run ${i} ceiling before`, options.duration, options);
      process.stdout.write(`${describeCeiling(ceilingBefore, 'prebuilt')}\n`);
      const order = await session.measure(`run ${i}`, options.duration, options);
      process.stdout.write(`${describeRun(order)}\n`);
      const ceilingAfter = await ceiling.measure(`run ${i} ceiling after`, options.duration, options);
      process.stdout.write(`${describeCeiling(ceilingAfter, 'prebuilt')}\n`);
      const fraction = order.requestsPerS / ((ceilingBefore.requestsPerS + ceilingAfter.requestsPerS) / 2);
      process.stdout.write(`run ${i}: the order path does ${f0(order.requestsPerS)} req/s = ${(100 * fraction).toFixed(0)}% of the bare uWebSockets.js ceiling\n\n`);
      runs.push({ ceilingBefore, order, ceilingAfter, fraction });
    }
    await ceiling.close();
    ceiling = null;
    const stop = await session.stop();
    return { seedS: session.seeded.seconds, readyMs: session.server.readyMs, runs, stopCode: stop.code };
  } finally {
    if (ceiling !== null) await ceiling.close().catch(() => {});
    await session.dispose();
  }
}

async function scenario(name: Scenario, options: Options): Promise<ScenarioFigures> {
  const session = await sessionFor(name, options);
  try {
    if (options.warmup > 0) await session.warmup(options.warmup);
    const runs: RunReport[] = [];
    for (let i = 1; i <= options.runs; i++) {
      const report = await session.measure(`run ${i}`, options.duration, options);
      process.stdout.write(`${describeRun(report)}\n\n`);
      runs.push(report);
    }
    const stop = await session.stop();
    return { scenario: name, seedS: session.seeded.seconds, primeS: session.primeS, loadAccounts: session.loadAccounts, runs, stopCode: stop.code };
  } finally {
    await session.dispose();
  }
}

async function sweep(options: Options): Promise<RunReport[]> {
  const session = await sessionFor('order', options);
  try {
    const reports: RunReport[] = [];
    const ascending = [...options.sweep].sort((a, b) => a - b);
    for (let pass = 1; pass <= options.runs; pass++) {
      // Alternate the order so that the slow drift as the orders table grows
      // does not always favour the same end.
      const order = pass % 2 === 1 ? ascending : [...ascending].reverse();
      for (const connections of order) {
        await session.warmup(options.quick ? 1 : 2, connections);
        const report = await session.measure(`${connections} connections, pass ${pass}`, options.sweepDuration, options, { connections });
        process.stdout.write(`${describeRun(report)}\n\n`);
        reports.push(report);
      }
    }
    await session.stop();
    return reports;
  } finally {
    await session.dispose();
  }
}

interface PeerModule {
  runFastifyPostgresPeer?: (options: Record<string, unknown>) => Promise<unknown>;
  peerMarkdown?: (result: unknown, command: string) => string;
}

/**
 * The conventional peer, if bench/peers/fastify-postgres is there (it is
 * written separately). Returns null with a reason when it is not run.
 */
async function peer(options: Options): Promise<PeerFigures | { notRun: string }> {
  if (!existsSync(PEER)) return { notRun: 'bench/peers/fastify-postgres is not built (dist/bench/peers/fastify-postgres/run.js missing)' };
  const mod = (await import(pathToFileURL(PEER).href)) as PeerModule;
  if (typeof mod.runFastifyPostgresPeer !== 'function') return { notRun: 'bench/peers/fastify-postgres/run.js exports no runFastifyPostgresPeer()' };
  const peerOptions = {
    accounts: options.accounts,
    connections: options.connections,
    duration: options.duration,
    warmup: options.warmup,
    runs: options.runs,
    quantity: QUANTITY,
    quietWait: options.quietWait,
    quietBelow: options.quietBelow,
  };
  const result = (await mod.runFastifyPostgresPeer(peerOptions)) as {
    skipped?: boolean;
    reason?: string;
    runs?: { label: string; requestsPerS: number; durableOrdersPerS: number; latency: { p99: number } }[];
  };
  if (result.skipped === true) return { notRun: result.reason ?? 'the peer skipped itself' };
  const command =
    `node dist/bench/peers/fastify-postgres/run.js --accounts ${options.accounts} --connections ${options.connections} ` +
    `--duration ${options.duration} --warmup ${options.warmup} --runs ${options.runs}` +
    (options.quietWait > 0 ? ` --quiet-wait ${options.quietWait} --quiet-below ${options.quietBelow}` : '');
  const markdown = typeof mod.peerMarkdown === 'function' ? mod.peerMarkdown(result, command) : '```\n' + JSON.stringify(result, null, 2) + '\n```';
  process.stdout.write(`${markdown}\n\n`);
  return {
    result,
    markdown,
    runs: (result.runs ?? []).map((r) => ({ label: r.label, requestsPerS: r.requestsPerS, durableOrdersPerS: r.durableOrdersPerS, p99: r.latency.p99 })),
  };
}

// ---------------------------------------------------------------- report

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

/** " --full …", the arguments of the run (older JSON: taken from the command line). */
function runAllArgs(env: Environment): string {
  const args = env.args !== undefined ? shellArgs(env.args) : env.command.replace(/^npm run bench(?: -- )?|^node dist\/bench\/run-all\.js ?/, '');
  return args === '' ? '' : ` ${args}`;
}

function commandLine(argv: string[]): string {
  const args = shellArgs(argv);
  if (process.env['npm_lifecycle_event'] === 'bench') return `npm run bench${args === '' ? '' : ` -- ${args}`}`;
  return `node dist/bench/run-all.js${args === '' ? '' : ` ${args}`}`;
}

const mib = (m: { rssMiB: number; anonMiB: number } | null): string => (m === null ? 'n/a' : `${f0(m.rssMiB)} (${f0(m.anonMiB)})`);
const pct = (c: { pct: number } | null): string => (c === null ? 'n/a' : `${f0(c.pct)}%`);
/** Other processes' CPU during a run, flagged when it was high enough to matter on 2 cores. */
const NOISY_PCT = 25;
const other = (pctOfCore: number): string => `${f0(pctOfCore)}%${pctOfCore > NOISY_PCT ? ' ⚠' : ''}`;
const msc = (r: RunReport): string => {
  const ms = msPerCommit(r);
  return ms === null ? 'n/a' : f2(ms);
};

function failed(title: string, outcome: Outcome<unknown>): string[] | null {
  if (outcome.ok === true) return null;
  if (outcome.ok === null) return [`${title}: ${outcome.reason}.`];
  return [`**${title} failed** after ${f1(outcome.seconds)} s: ${outcome.error.split('\n')[0]}`];
}

function scenarioRows(name: string, runs: RunReport[]): string[] {
  return runs.map((r) => {
    const o = r.orderLatency;
    return (
      `| ${name} | ${r.label} | ${f0(r.requestsPerS)} | ${f0(r.durableOrdersPerS)} | ${f2(o.p50)} | ${f2(o.p90)} | ${f2(o.p99)} | ${f2(o.p999)} | ` +
      `${f2(r.load.latency.p99)} | ${f1(r.batch.perCommit)} | ${msc(r)} | ${pct(r.serverCpu)} | ${pct(r.loadgenCpu)} | ${other(r.otherPct)} | ${mib(r.serverMemory)} | ` +
      `${f0(r.load.byKind.order?.ok2xx ?? 0)} / ${r.ledger === null ? 'n/a' : f0(r.ledger.durableOrders)} | ${failures(r)} |`
    );
  });
}

function meanOf(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

function chartPoints(sweepRuns: RunReport[]): ChartPoint[] {
  return sweepRuns.map((r) => ({ connections: r.connections, ordersPerS: r.durableOrdersPerS, p99Ms: r.orderLatency.p99 }));
}

function render(results: Results): string {
  const { env, options } = results;
  const out: string[] = [];
  const quick = options.quick ? ' (quick)' : options.full ? ' (full)' : '';
  out.push(
    `Run of ${env.date}${quick}: \`${env.command}\`, ${f0(results.totalS / 60)} min in all.`,
    '',
    '### Machine and versions',
    '',
    '| | |',
    '|---|---|',
    `| CPU | ${env.cpu}, ${env.cores} cores |`,
    `| memory | ${f0(env.memoryGiB)} GiB |`,
    `| kernel | Linux ${env.kernel} |`,
    `| data directories | ${env.dataDir} |`,
    // Older JSON results (--from-json) predate the probe.
    `| disk sync | ${env.syncLatency ?? 'not measured'} |`,
    `| Node | ${env.node} |`,
    `| source | ${env.source} |`,
    `| packages | ${Object.entries(env.versions)
      .map(([name, version]) => `${name} ${version}`)
      .join(', ')} |`,
    '',
    `This is a shared 2-core machine: "other CPU" is what other processes used during each run, in percent of one core; ⚠ marks runs where it was over ${NOISY_PCT}%.`,
    `Runs waited for the machine to be below ${options.quietBelow}% busy for up to ${options.quietWait} s first.`,
    '',
    '### Commands',
    '',
    `- everything: \`${env.command}\` (= \`npm run build --silent && node dist/bench/run-all.js${runAllArgs(env)}\`)`,
    `- micro-benchmarks: \`node dist/bench/micro/run.js\``,
    `- one scenario alone: \`node dist/bench/http/order.js --scenario order|mixed|idempotent --seed direct --accounts ${options.accounts} --connections ${options.connections} --duration ${options.duration} --warmup ${options.warmup} --runs ${options.runs}\``,
    `- the ceiling alone (fake accounts): \`node dist/bench/http/ceiling.js --connections ${options.connections} --duration ${options.duration}\``,
    `- scaling alone: \`node dist/bench/http/scaling.js --sizes ${options.sizes.join(',')}${stepsArg(options.steps)} --duration ${options.scalingDuration} --load-accounts ${options.loadAccounts} --touch-accounts ${options.touchAccounts}\``,
    `- the peer alone: \`node dist/bench/peers/fastify-postgres/run.js --duration ${options.duration} --runs ${options.runs}\``,
    '- the full run: `npm run bench -- --full --quiet-wait 120 --quiet-below 15` (two runs of everything, a million accounts, and a million accounts with 1 and 10 million stored orders: ' +
      'about 11 minutes here plus the waits for a quiet machine); the quick one: `npm run bench -- --quick` (about 3 minutes, no stored orders); ' +
      'without either, the same as full without the million accounts but with 100,000 accounts and 1,000,000 stored orders.',
    '',
    'Every HTTP figure: the real server (`dist/src/main.js`, `WAL_SYNC_MODE` default `commit`: fsync inside every group commit) as a child process on a fresh ' +
      `temp data directory, accounts seeded directly into LMDB (\`bench/http/seed.ts\`: the records of the admin API, verified by \`GET /admin/v1/verify\` in the scaling runs), ` +
      'autocannon 9 in its own process (`bench/http/runner.ts`) with prebuilt requests, each connection cycling through its own share of the accounts, ' +
      `quantity ${QUANTITY} × rate 0.001. Durable orders/s counts 201 responses (each sent after its commit is synced); after every run the wallets' ` +
      'durable balances are read back and the orders debited must cover every 201. Latencies are 10 µs-bucket percentiles of 2xx responses. ' +
      '"Entries per commit" is the growth of `wal.entries` ÷ `wal.batches` in `GET /admin/v1/stats` over the run; "run time ÷ commits" is the time one commit ' +
      '(write + fsync) takes when the WAL is the bottleneck (it commits one batch at a time and is then never idle), and more when it waits for work.',
  );

  // Ceiling and order path.
  out.push('', `### The order path against the load generator's ceiling (${f0(options.accounts)} accounts, ${options.connections} connections)`, '');
  const op = results.orderPath;
  const opFailed = failed('The order path', op);
  if (opFailed !== null) out.push(...opFailed);
  else if (op.ok === true) {
    out.push(
      `The ceiling is the same load generator, requests and connections against a bare uWebSockets.js server (\`bench/http/stub.ts\`, through \`src/http/uws.ts\`) ` +
        'that answers every POST at once with a fixed JSON body; it is measured right before and right after each order-path run.',
      '',
      '| run | ceiling before req/s | order path req/s | ceiling after req/s | order path ÷ ceiling | order p99 ms | ceiling p99 ms (before / after) | loadgen CPU: ceiling / order | stub CPU | other CPU: before / order / after |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...op.value.runs.map(
        (r) =>
          `| ${r.order.label} | ${f0(r.ceilingBefore.requestsPerS)} | ${f0(r.order.requestsPerS)} | ${f0(r.ceilingAfter.requestsPerS)} | **${(100 * r.fraction).toFixed(0)}%** | ` +
          `${f2(r.order.orderLatency.p99)} | ${f2(r.ceilingBefore.load.latency.p99)} / ${f2(r.ceilingAfter.load.latency.p99)} | ` +
          `${pct(r.ceilingBefore.loadgenCpu)} / ${pct(r.order.loadgenCpu)} | ${pct(r.ceilingBefore.stubCpu)} | ` +
          `${other(r.ceilingBefore.otherPct)} / ${other(r.order.otherPct)} / ${other(r.ceilingAfter.otherPct)} |`,
      ),
    );
  }

  // Scenarios.
  out.push('', `### Scenarios (${f0(options.accounts)} accounts, ${options.connections} connections, ${options.duration} s runs after a ${options.warmup} s warm-up)`, '');
  const rows: string[] = [];
  const notes: string[] = [];
  if (op.ok === true) rows.push(...scenarioRows('order', op.value.runs.map((r) => r.order)));
  for (const [name, outcome] of [
    ['mixed', results.mixed],
    ['idempotent', results.idempotent],
  ] as const) {
    const f = failed(`The ${name} scenario`, outcome);
    if (f !== null) notes.push(...f);
    else if (outcome.ok === true) rows.push(...scenarioRows(name, outcome.value.runs));
  }
  if (rows.length > 0) {
    out.push(
      '| scenario | run | req/s | durable orders/s | order p50 ms | order p90 ms | order p99 ms | order p99.9 ms | all requests p99 ms | entries per commit | run time ÷ commits, ms | server CPU | loadgen CPU | other CPU | server RSS MiB (private) | 201s / ledger orders | non-2xx / errors / timeouts |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
    );
  }
  out.push(
    '',
    '- **order**: `POST /api/v1/order` only.',
    '- **mixed**: per account, in this order: order, status, status, balance, status (1 order : 3 status : 1 balance). Before the run one order per account is placed ' +
      'and its id collected; the status polls ask for it (a real order of the same account).',
    '- **idempotent**: every order carries a new `Idempotency-Key` (patched into the prebuilt request just before it is written), so every order also writes its idempotency record; ' +
      'the ledger check would catch a replayed key (a 201 without a debit).',
  );
  if (notes.length > 0) out.push('', ...notes);
  if (results.mixed.ok === true) {
    out.push('', 'Mixed scenario by endpoint:', '', '| run | endpoint | req/s | p50 ms | p90 ms | p99 ms | p99.9 ms | non-2xx |', '|---|---|---:|---:|---:|---:|---:|---:|');
    for (const r of results.mixed.value.runs) {
      for (const [kind, k] of Object.entries(r.load.byKind)) {
        const non2xx = k.completed - k.ok2xx;
        out.push(`| ${r.label} | ${kind} | ${f0(k.completed / r.load.durationS)} | ${f2(k.latency.p50)} | ${f2(k.latency.p90)} | ${f2(k.latency.p99)} | ${f2(k.latency.p999)} | ${f0(non2xx)} |`);
      }
    }
  }

  // Peer.
  out.push('', '### Conventional peer: Fastify + PostgreSQL (bench/peers/fastify-postgres)', '');
  const p = results.peer;
  if (p.ok === true) out.push(p.value.markdown);
  else if (p.ok === null) out.push(`peer: not run (${p.reason}).`);
  else out.push(`**The peer failed** after ${f1(p.seconds)} s: ${p.error.split('\n')[0]}`);

  // Sweep.
  out.push('', `### Connections (${f0(options.accounts)} accounts, ${options.sweepDuration} s per step, one server)`, '');
  const sw = results.sweep;
  const swFailed = failed('The connection sweep', sw);
  if (swFailed !== null) out.push(...swFailed);
  else if (sw.ok === true) {
    out.push(
      '![durable orders/s and p99 against connections](throughput.svg)',
      '',
      '| connections | pass | durable orders/s | p50 ms | p99 ms | p99.9 ms | entries per commit | run time ÷ commits, ms | server CPU | loadgen CPU | other CPU |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...[...sw.value]
        .sort((a, b) => a.connections - b.connections)
        .map(
          (r) =>
            `| ${r.connections} | ${r.label.replace(/.*pass /, '')} | ${f0(r.durableOrdersPerS)} | ${f2(r.orderLatency.p50)} | ${f2(r.orderLatency.p99)} | ${f2(r.orderLatency.p999)} | ` +
            `${f1(r.batch.perCommit)} | ${msc(r)} | ${pct(r.serverCpu)} | ${pct(r.loadgenCpu)} | ${other(r.otherPct)} |`,
        ),
      '',
      'Passes alternate ascending and descending connection counts, so the slow drift as the orders table grows does not always favour the same end.',
    );
  }

  // Scaling.
  out.push('', `### Scaling with the data set (${options.scalingDuration} s of order load per size, ${options.connections} connections)`, '');
  const sc = results.scaling;
  const scFailed = failed('Scaling', sc);
  if (scFailed !== null) out.push(...scFailed);
  else if (sc.ok === true) out.push(...renderScaling(sc.value));

  // Micro.
  out.push('', '### Micro-benchmarks (`node dist/bench/micro/run.js`)', '');
  const mi = results.micro;
  const miFailed = failed('The micro-benchmarks', mi);
  if (miFailed !== null) out.push(...miFailed);
  else if (mi.ok === true) out.push(mi.value.replace(/^## /gm, '#### '));
  return out.join('\n');
}

/** The measured runs of a scaling step (JSON from before --runs had one `run`). */
function runsOf(step: ScalingStep): RunReport[] {
  const old = step as ScalingStep & { run?: RunReport | null };
  return step.runs ?? (old.run === undefined || old.run === null ? [] : [old.run]);
}

/** " --steps 1000000:10000000,…", or nothing when there are no steps (older JSON has none). */
function stepsArg(steps: ScalingPoint[] | undefined): string {
  return steps === undefined || steps.length === 0 ? '' : ` --steps ${steps.map((p) => `${p.accounts}:${p.orders}`).join(',')}`;
}

/** Stored orders of a step (JSON from before stored orders: 0). */
const ordersOf = (st: ScalingStep): number => st.orders ?? 0;

/** Mean durable orders/s of the step at `point`, or null when no such step ran (with runs). */
function scaledOrdersPerS(s: ScalingResult, point: ScalingPoint): number | null {
  const runs = s.steps.filter((st) => st.accounts === point.accounts && ordersOf(st) === point.orders).flatMap(runsOf);
  return runs.length === 0 ? null : meanOf(runs.map((r) => r.durableOrdersPerS));
}

/** "1,000 accounts and no stored orders". */
const storedName = (p: ScalingPoint): string => `${f0(p.accounts)} accounts and ${p.orders === 0 ? 'no' : f0(p.orders)} stored orders`;

/** Issue 5's target as one sentence: the ratio, met or NOT met, or why it is not there. */
function scaledTarget(s: ScalingResult): string {
  const what = `durable orders/s at ${storedName(TARGET_SCALED)} ÷ at ${storedName(TARGET_SCALED_BASE)}`;
  const at = scaledOrdersPerS(s, TARGET_SCALED);
  const base = scaledOrdersPerS(s, TARGET_SCALED_BASE);
  const missing = [at === null ? pointName(TARGET_SCALED) : null, base === null ? pointName(TARGET_SCALED_BASE) : null].filter((m) => m !== null);
  if (at === null || base === null) {
    return `**Target (issue 5)**: ${what} ≥ ${TARGET_SCALED_RATIO}: not measured, the ${missing.join(' and the ')} step did not run (--full runs both).`;
  }
  const ratio = at / base;
  return `**Target (issue 5)**: ${what} = ${f0(at)} ÷ ${f0(base)} = **${f2(ratio)}** (target ≥ ${TARGET_SCALED_RATIO}): ${ratio >= TARGET_SCALED_RATIO ? 'met' : '**NOT met**'}.`;
}

function renderScaling(s: ScalingResult): string[] {
  const all: ScalingStep[] = [s.baseline, ...s.steps];
  const bytes = (n: number): string => `${f0(n)} B`;
  const base = scaledOrdersPerS(s, TARGET_SCALED_BASE);
  const out = [
    `Each size: a fresh data directory seeded directly into LMDB (the accounts, then the stored orders: already placed, round-robin over the accounts, ` +
      'written as the order path writes them), the server started on it (spawn → admin `/healthz` 200), ' +
      `idle memory read ${s.options.settleS} s later, ` +
      `then one \`GET /api/v1/balance\` for each of up to ${f0(s.options.touchAccountsMax)} accounts (spread evenly; loads them, writes nothing) in two halves, memory read after each, ` +
      `a ${s.options.warmupS} s warm-up and ${s.options.runs ?? 1} run(s) of ${s.options.durationS} s of orders over up to ${f0(s.options.loadAccountsMax)} accounts spread evenly over all of them, ` +
      '`GET /admin/v1/verify` (full replay), SIGTERM, and a restart on the now larger directory. Page cache warm throughout (the files were just written).',
    '',
    '| accounts | stored orders | seed s | data dir MiB | start → ready ms | idle RSS MiB (private) | idle RSS after loading K wallets, MiB (private) | verify (full replay) | data dir after the runs MiB | restart → ready ms |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...all.map(
      (st) =>
        `| ${f0(st.accounts)} | ${f0(ordersOf(st))} | ${f1(st.seedS)} | ${f1(MiB(st.start.dataBytes))} | ${f0(st.start.readyMs)} | ${mib(st.idleMemory)} | ` +
        `${st.touched === 0 ? 'n/a' : `${mib(st.touchedMemory)} with K = ${f0(st.touched)}`} | ` +
        `${st.verify === null ? 'n/a' : `${st.verify.ok ? 'ok' : 'FAILED'} in ${f0(st.verify.ms)} ms`} | ${st.restart === null ? 'n/a' : f1(MiB(st.restart.dataBytes))} | ${st.restart === null ? 'n/a' : f0(st.restart.readyMs)} |`,
    ),
    '',
    `Order load at each size (${s.options.connections} connections; the last column: the run's durable orders/s ÷ the mean at ${storedName(TARGET_SCALED_BASE)}):`,
    '',
    `| accounts | stored orders | run | durable orders/s | p50 ms | p99 ms | p99.9 ms | entries per commit | run time ÷ commits, ms | server CPU | loadgen CPU | other CPU | ÷ ${f0(TARGET_SCALED_BASE.accounts)} accounts, no orders |`,
    '|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...s.steps.flatMap((st) =>
      runsOf(st).map(
        (r) =>
          `| ${f0(st.accounts)} | ${f0(ordersOf(st))} | ${r.label.replace(/.*, /, '')} | ${f0(r.durableOrdersPerS)} | ${f2(r.orderLatency.p50)} | ${f2(r.orderLatency.p99)} | ${f2(r.orderLatency.p999)} | ` +
          `${f1(r.batch.perCommit)} | ${msc(r)} | ${pct(r.serverCpu)} | ${pct(r.loadgenCpu)} | ${other(r.otherPct)} | ${base === null ? 'n/a' : f2(r.durableOrdersPerS / base)} |`,
      ),
    ),
    '',
    scaledTarget(s),
    '',
    'Memory per wallet (bytes; RSS is VmRSS, private is RssAnon, both from /proc/PID/status; with stored orders, "never used" is still measured against the baseline ' +
      'of 0 accounts and 0 orders, so it also holds the share of the order data the idle server keeps in memory):',
    '',
    '| accounts | stored orders | never used since start: (idle RSS with N − with 0) ÷ N | loaded by one request, now idle: (RSS after loading K − after loading K/2) ÷ K/2 |',
    '|---:|---:|---:|---:|',
    ...s.steps.map((st) => {
      const per = perWallet(st, s.baseline);
      // A few MiB come and go with garbage collection: below that the difference says nothing.
      const text = (x: { rssBytes: number; privateBytes: number } | null, n: number): string =>
        x === null ? 'n/a' : `${bytes(x.rssBytes)} (${bytes(x.privateBytes)} private)${Math.abs(x.rssBytes * n) < 4 * 2 ** 20 ? ', within noise: under 4 MiB in all' : ''}`;
      const cold = text(per.cold, st.accounts) + (per.storedOrders > 0 && per.cold !== null ? ', includes order data' : '');
      return `| ${f0(st.accounts)} | ${f0(ordersOf(st))} | ${cold} | ${text(per.loaded, st.touched - (st.halfTouched ?? 0))} |`;
    }),
    '',
    'Start time against the size of the data directory (every start above, smallest first):',
    '',
    '| data dir MiB | accounts | stored orders | start → ready ms |',
    '|---:|---:|---:|---:|',
    ...all
      .flatMap((st) => [
        { mib: MiB(st.start.dataBytes), st, ms: st.start.readyMs, what: 'first start' },
        ...(st.restart === null ? [] : [{ mib: MiB(st.restart.dataBytes), st, ms: st.restart.readyMs, what: 'restart after the run' }]),
      ])
      .sort((a, b) => a.mib - b.mib)
      .map((x) => `| ${f1(x.mib)} | ${f0(x.st.accounts)} (${x.what}) | ${f0(ordersOf(x.st))} | ${f0(x.ms)} |`),
  ];
  return out;
}

// ---------------------------------------------------------------- RESULTS.md

const GENERATED_BEGIN = '<!-- bench:generated:begin (written by npm run bench, bench/run-all.ts: edits between these markers are overwritten) -->';
const GENERATED_END = '<!-- bench:generated:end -->';
const ANALYSIS_BEGIN = '<!-- bench:analysis:begin (hand-written: npm run bench keeps everything between these markers as it is) -->';
const ANALYSIS_END = '<!-- bench:analysis:end -->';

/** The analysis section of the current file (markers included), or the whole old text wrapped as one. */
function keptAnalysis(text: string): string {
  const begin = text.indexOf(ANALYSIS_BEGIN.slice(0, ANALYSIS_BEGIN.indexOf(' (')));
  const end = text.indexOf(ANALYSIS_END);
  if (begin >= 0 && end > begin) return text.slice(begin, end + ANALYSIS_END.length);
  // No markers yet: keep everything that is not the generated block, so nothing hand-written is lost.
  let rest = text;
  const g0 = rest.indexOf(GENERATED_BEGIN.slice(0, GENERATED_BEGIN.indexOf(' (')));
  const g1 = rest.indexOf(GENERATED_END);
  if (g0 >= 0 && g1 > g0) rest = rest.slice(0, g0) + rest.slice(g1 + GENERATED_END.length);
  rest = rest.replace(/^# Benchmark results\s*/, '').trim();
  return `${ANALYSIS_BEGIN}\n\n${rest === '' ? '## Analysis\n\n(to be written)' : rest}\n\n${ANALYSIS_END}`;
}

function writeResults(generated: string): void {
  let old = '';
  try {
    old = readFileSync(RESULTS_MD, 'utf8');
  } catch {
    // First run.
  }
  const text = [
    '# Benchmark results',
    '',
    'Generated figures first (`npm run bench`; regenerate them rather than editing), then the hand-written analysis.',
    '',
    GENERATED_BEGIN,
    '',
    '## Latest `npm run bench`',
    '',
    generated,
    '',
    GENERATED_END,
    '',
    keptAnalysis(old),
    '',
  ].join('\n');
  writeFileSync(RESULTS_MD, text);
  log(`wrote ${RESULTS_MD}`);
}

/** Prints the generated markdown and (when write) regenerates RESULTS.md and the chart. */
function publish(results: Results, write: boolean): void {
  const generated = render(results);
  process.stdout.write(`\n${generated}\n`);
  if (!write) return;
  writeResults(generated);
  const { env, options } = results;
  if (results.sweep.ok === true) {
    const points = chartPoints(results.sweep.value);
    const ordersAt = (c: number): string => f0(meanOf(points.filter((p) => p.connections === c).map((p) => p.ordersPerS)));
    writeFileSync(
      CHART_SVG,
      throughputSvg(points, {
        title: 'credit-order-api: durable orders/s and p99 against connections',
        subtitle:
          `${env.date.slice(0, 10)}, ${env.cpu.replace(/\(R\)/g, '')}, ${env.cores} cores, ${f0(options.accounts)} accounts, ` +
          `${options.sweepDuration} s per step, ${options.runs} pass(es)` +
          (points.some((p) => p.connections === 64) ? `; at 64 connections ${ordersAt(64)}/s` : ''),
        targetOrdersPerS: TARGET_ORDERS,
        targetP99Ms: TARGET_P99,
      }),
    );
    log(`wrote ${CHART_SVG}`);
  } else log(`the connection sweep did not run; ${CHART_SVG} left as it was`);
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  setLogPrefix('bench');
  const argv = process.argv.slice(2);
  let options: Options;
  try {
    options = parseOptions(argv);
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n${HELP}`);
    process.exit(2);
  }
  if (options.fromJson !== null) {
    publish(JSON.parse(readFileSync(options.fromJson, 'utf8')) as Results, options.write);
    return;
  }
  const started = performance.now();
  const env: Environment = {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    command: commandLine(argv),
    args: argv,
    source: sourceVersion(),
    node: process.version,
    cpu: cpuModel(),
    cores: cpus().length,
    memoryGiB: totalmem() / 2 ** 30,
    kernel: release(),
    dataDir: `${tmpdir()} on ${filesystemOf(tmpdir())}, ${diskOf(tmpdir())}`,
    syncLatency: describeSyncLatency(measureSyncLatency(tmpdir())),
    versions: Object.fromEntries(
      ['lmdb', '@trufflesuite/uws-js-unofficial', 'autocannon', 'tinybench', 'typescript', 'fastify', 'pg'].map((name) => [name, packageVersion(name)]),
    ),
  };
  log(`${env.command} | ${env.source} | Node ${env.node} | ${env.cpu} × ${env.cores} | data in ${env.dataDir} | ${env.syncLatency}`);

  const micro = await section('micro', options, runMicro);
  const order = await section('order', options, () => orderPath(options));
  const mixed = await section('mixed', options, () => scenario('mixed', options));
  const idempotent = await section('idempotent', options, () => scenario('idempotent', options));
  let peerOutcome: Outcome<PeerFigures>;
  {
    const raw = await section('peer', options, () => peer(options));
    if (raw.ok === true && 'notRun' in raw.value) {
      process.stdout.write(`peer: not run (${raw.value.notRun})\n`);
      peerOutcome = { ok: null, reason: raw.value.notRun };
    } else peerOutcome = raw as Outcome<PeerFigures>;
  }
  const sweepOutcome = await section('sweep', options, () => sweep(options));
  const scaling = await section('scaling', options, () =>
    runScaling({
      sizes: options.sizes,
      steps: options.steps,
      runs: options.runs,
      durationS: options.scalingDuration,
      warmupS: options.quick ? 1 : 2,
      connections: options.connections,
      loadAccountsMax: options.loadAccounts,
      quantity: QUANTITY,
      ledgerMaxAccounts: 200_000,
      settleS: 2,
      touchAccountsMax: options.touchAccounts,
      quietWait: options.quietWait,
      quietBelow: options.quietBelow,
    }),
  );
  if (scaling.ok === true) log(scaledTarget(scaling.value).replaceAll('**', ''));

  const results: Results = {
    env,
    options: { ...options, skip: [...options.skip] },
    totalS: (performance.now() - started) / 1000,
    micro,
    orderPath: order,
    mixed,
    idempotent,
    peer: peerOutcome,
    sweep: sweepOutcome,
    scaling,
  };
  publish(results, options.write);
  if (options.json !== null) {
    writeFileSync(options.json, JSON.stringify(results, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n');
    log(`wrote ${options.json}`);
  }
  const failures = Object.entries({ micro, order, mixed, idempotent, peer: peerOutcome, sweep: sweepOutcome, scaling }).filter(([, o]) => o.ok === false);
  const badStops = [order, mixed, idempotent].filter((o) => o.ok === true && o.value.stopCode !== 0).length;
  if (failures.length > 0 || badStops > 0) {
    log(`done in ${f0(results.totalS)} s with failures: ${failures.map(([n]) => n).join(', ')}${badStops > 0 ? ` (and ${badStops} server(s) exited non-zero on SIGTERM)` : ''}`);
    process.exitCode = 1;
  } else log(`done in ${f0(results.totalS)} s`);
}

main().catch((error: unknown) => {
  log(`failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});
