/**
 * `npm run bench:http`: the HTTP load benchmark of one scenario (default:
 * the order path).
 *
 * Starts the real server (dist/src/main.js) as a child process on a fresh
 * temp data directory and free ports, seeds funded accounts and one service
 * (through the admin API, or directly into LMDB with --seed direct), warms
 * up, then drives the customer API with autocannon in a separate process
 * (runner.js) spreading the requests over the accounts:
 *   order       POST /api/v1/order
 *   mixed       1 order : 3 status polls : 1 balance per account (status
 *               polls ask for an order placed before the run)
 *   idempotent  POST /api/v1/order, each with a new Idempotency-Key
 * After each measured run it checks the ledger through the admin API: the
 * total debited across all wallets divided by the charge of one order is
 * the number of durable orders, which must cover every 201 the clients saw.
 * Reports requests/s, durable orders/s, latency percentiles (per endpoint
 * too), errors, entries per group commit (GET /admin/v1/stats before and
 * after), CPU per process and thread (server, load generator, everything
 * else on the machine), and the server's memory; stops the server with
 * SIGTERM and checks it exits 0. Builds nothing: it runs from dist/.
 *
 * See --help for the options; bench/RESULTS.md for figures and analysis;
 * ceiling.ts for the load generator's own limit on this machine; run-all.ts
 * for everything at once (`npm run bench`).
 */
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { failures, describeMemory, describeRun, msPerCommit, type RunReport } from './measure.js';
import { cpuModel } from './procstat.js';
import { formatProfile, summarizeProfile, type ProfileSummary } from './profile.js';
import type { Scenario } from './protocol.js';
import { openSession, type Session } from './scenario.js';
import { RATE } from './seed.js';
import { startSideTraffic, type SideTraffic } from './side-traffic.js';
import { startSink, type SinkKind } from './webhook-sink.js';
import { SERVER_MAIN } from './server-process.js';
import { describeSyncLatency, measureSyncLatency } from './sync-latency.js';
import { f0, f1, f2, filesystemOf, log, positiveInt, shellArgs, sourceVersion, writeMarkedBlock, QUIET_OPTION_SPECS, quietOptions } from './util.js';

const HELP = `Usage: npm run bench:http -- [options]

  --scenario S         order (default), mixed (1 order : 3 status : 1 balance), idempotent, or v2 (orders through API v2's add, form-encoded)
                       (every order with a new Idempotency-Key)
  --webhooks           every load account registers a webhook endpoint (order.updated) at a local receiver, so each order is also a signed delivery
  --webhook-accounts N with --webhooks: only N load accounts (spread evenly) register one (default: all)
  --sink node|uws      with --webhooks: the receiver's HTTP server, node:http (default) or uWebSockets.js (about half
                       the CPU per delivery, taken from the same two cores)
  --side-traffic N     also run N signed webhook posts a second between two processes of their own (neither the
                       server), as the dispatcher makes them: a reference beside a webhooks-off server for what the
                       same HTTP traffic costs this machine's order path without the server's part in it
  --webhooks-disabled  with --webhooks: register the endpoints disabled, so no message is written (the control for
                       webhooks on: the same set-up, the same admin requests, no webhooks)
  --accounts N         funded accounts to seed and rotate through (default 10000)
  --seed HOW           admin (default: through the admin API) or direct (written into LMDB
                       before the server starts; same records; for big data sets)
  --connections N      concurrent HTTP connections (default 64)
  --rate N             offer N requests a second in all, spread evenly in time, instead of as many as the
                       connections can make: a fixed load below saturation (default: none). Latency counts from each
                       request's write, not its turn; req/s shows what was sent (less than N if the connections cannot keep up)
  --duration S         seconds per measured run (default 10)
  --warmup S           seconds of unmeasured load first (default 3; 0 skips)
  --runs N             measured runs against the same server (default 1)
  --mode M             prebuilt (default): each connection cycles through its own share of
                       the accounts as ready-made requests; rotate: every request is built
                       afresh round-robin over all accounts (costs the load generator more CPU;
                       not for mixed)
  --quantity Q         quantity per order; the service rate is 0.001 (default 1000)
  --seed-concurrency N admin requests in flight while seeding (default 64)
  --sync-mode M        WAL_SYNC_MODE for the server: commit or overlapping (default: server's)
  --cpu-prof           run the server under node --cpu-prof and summarise the measured runs
  --write-results      write the figures into bench/RESULTS.md (between the bench:http markers)
  --json FILE          also write every figure as JSON
  --keep-data          keep the temp data directory (and profiles) afterwards
  --quiet-wait S       before each run, wait up to S seconds for the machine to be idle
                       (other processes below --quiet-below percent of all cores; default 0: don't wait)
  --quiet-below PCT    idle threshold for --quiet-wait (default 10)
  --server-entry PATH  the server script to run (default dist/src/main.js), e.g. an instrumented copy
  --sink-nice=N        with --webhooks: run the receiver (this process's main thread, set once the server and
                       the load generator have started, so neither inherits it) at this nice value: at 19 it takes
                       only the cores' idle time, as a receiver on another machine would take none of them
  --loadgen-nice=N     run the load generator at this nice value (-20..19; below 0 needs root).
                       A diagnostic, not the benchmark of record: with -10 the load generator is
                       no longer kept waiting behind the server's threads on the shared cores, as
                       remote clients would not be (default: the same priority as the server)
  --target-orders N    durable orders/s to compare against (default 25000)
  --target-p99 MS      p99 latency to compare against (default 10)
  --note TEXT          a remark to print with the figures (e.g. what was measured)
`;

const here = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url));
const RESULTS_MD = here('../../../bench/RESULTS.md');
const BENCH_TMP = here('../../../.bench-tmp');

interface Options {
  scenario: Scenario;
  accounts: number;
  seed: 'admin' | 'direct';
  connections: number;
  duration: number;
  warmup: number;
  runs: number;
  quantity: number;
  mode: 'prebuilt' | 'rotate';
  seedConcurrency: number;
  syncMode: string | null;
  cpuProf: boolean;
  writeResults: boolean;
  json: string | null;
  keepData: boolean;
  note: string | null;
  targetOrders: number;
  targetP99: number;
  serverEntry: string;
  quietWait: number;
  quietBelow: number;
  loadgenNice: number | null;
  sinkNice: number | null;
  /** Each load account registers a webhook endpoint at a local receiver (order.updated): every order is a delivery. */
  webhooks: boolean;
  /** With --webhooks: only this many load accounts (spread evenly) register one; null: all. */
  webhookAccounts: number | null;
  /** With --webhooks: the endpoints are registered disabled (no message is written). */
  webhooksDisabled: boolean;
  /** With --webhooks: the receiver's HTTP server. */
  sink: SinkKind;
  /** Posts a second between two other processes during the warm-up and the runs (a reference); null: none. */
  sideTraffic: number | null;
  /** Requests a second offered in all (a fixed load); null: as many as the connections can make. */
  rate: number | null;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      scenario: { type: 'string', default: 'order' },
      accounts: { type: 'string', default: '10000' },
      seed: { type: 'string', default: 'admin' },
      connections: { type: 'string', default: '64' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '3' },
      runs: { type: 'string', default: '1' },
      quantity: { type: 'string', default: '1000' },
      mode: { type: 'string', default: 'prebuilt' },
      'seed-concurrency': { type: 'string', default: '64' },
      'sync-mode': { type: 'string' },
      'cpu-prof': { type: 'boolean', default: false },
      'write-results': { type: 'boolean', default: false },
      json: { type: 'string' },
      'keep-data': { type: 'boolean', default: false },
      note: { type: 'string' },
      'target-orders': { type: 'string', default: '25000' },
      'target-p99': { type: 'string', default: '10' },
      'server-entry': { type: 'string' },
      ...QUIET_OPTION_SPECS,
      'loadgen-nice': { type: 'string' },
      'sink-nice': { type: 'string' },
      webhooks: { type: 'boolean', default: false },
      'webhook-accounts': { type: 'string' },
      'webhooks-disabled': { type: 'boolean', default: false },
      sink: { type: 'string', default: 'node' },
      'side-traffic': { type: 'string' },
      rate: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const scenario = values.scenario;
  if (scenario !== 'order' && scenario !== 'mixed' && scenario !== 'idempotent' && scenario !== 'v2') {
    throw new Error(`--scenario must be order, mixed, idempotent or v2; got ${JSON.stringify(scenario)}`);
  }
  const mode = values.mode;
  if (mode !== 'prebuilt' && mode !== 'rotate') throw new Error(`--mode must be prebuilt or rotate; got ${JSON.stringify(mode)}`);
  if (mode === 'rotate' && (scenario === 'mixed' || scenario === 'v2')) throw new Error(`--scenario ${scenario} needs --mode prebuilt`);
  const seed = values.seed;
  if (seed !== 'admin' && seed !== 'direct') throw new Error(`--seed must be admin or direct; got ${JSON.stringify(seed)}`);
  const syncMode = values['sync-mode'] ?? null;
  if (syncMode !== null && syncMode !== 'commit' && syncMode !== 'overlapping' && syncMode !== 'log') {
    throw new Error(`--sync-mode must be commit, overlapping or log; got ${JSON.stringify(syncMode)}`);
  }
  return {
    scenario,
    accounts: positiveInt('accounts', values.accounts),
    seed,
    connections: positiveInt('connections', values.connections),
    duration: positiveInt('duration', values.duration),
    warmup: positiveInt('warmup', values.warmup, 0),
    runs: positiveInt('runs', values.runs),
    quantity: positiveInt('quantity', values.quantity),
    mode,
    seedConcurrency: positiveInt('seed-concurrency', values['seed-concurrency']),
    syncMode,
    cpuProf: values['cpu-prof'],
    writeResults: values['write-results'],
    json: values.json ?? null,
    keepData: values['keep-data'],
    note: values.note ?? null,
    targetOrders: positiveInt('target-orders', values['target-orders']),
    targetP99: positiveInt('target-p99', values['target-p99']),
    serverEntry: values['server-entry'] ?? SERVER_MAIN,
    ...quietOptions(values),
    loadgenNice: values['loadgen-nice'] === undefined ? null : niceValue('loadgen-nice', values['loadgen-nice']),
    sinkNice: values['sink-nice'] === undefined ? null : niceValue('sink-nice', values['sink-nice']),
    webhooks: values.webhooks,
    webhookAccounts: values['webhook-accounts'] === undefined ? null : positiveInt('webhook-accounts', values['webhook-accounts']),
    webhooksDisabled: values['webhooks-disabled'],
    sink: sinkKind(values.sink),
    sideTraffic: values['side-traffic'] === undefined ? null : positiveInt('side-traffic', values['side-traffic']),
    rate: values.rate === undefined ? null : positiveInt('rate', values.rate),
  };
}

function sinkKind(raw: string | undefined): SinkKind {
  if (raw === 'node' || raw === 'uws') return raw;
  throw new Error(`--sink is node or uws, not ${String(raw)}`);
}

function niceValue(name: string, raw: string): number {
  if (!/^-?\d+$/.test(raw) || Number(raw) < -20 || Number(raw) > 19) throw new Error(`--${name} must be an integer from -20 to 19; got ${JSON.stringify(raw)}`);
  return Number(raw);
}

function verdict(r: RunReport, options: Options): string {
  const orders = r.durableOrdersPerS >= options.targetOrders;
  const p99 = r.orderLatency.p99 <= options.targetP99;
  return (
    `target ≥ ${f0(options.targetOrders)} durable orders/s with p99 ≤ ${options.targetP99} ms: ` +
    (orders && p99 ? 'met' : `NOT met (${f0(r.durableOrdersPerS)}/s = ${f0((100 * r.durableOrdersPerS) / options.targetOrders)}% of target, order p99 ${f2(r.orderLatency.p99)} ms)`) +
    (options.loadgenNice === null ? '' : ` [diagnostic run, load generator at nice ${options.loadgenNice}: not the benchmark of record]`)
  );
}

function commandLine(argv: string[]): string {
  const args = shellArgs(argv);
  if (process.env['npm_lifecycle_event'] === 'bench:http') return `npm run bench:http${args === '' ? '' : ` -- ${args}`}`;
  return `node dist/bench/http/order.js${args === '' ? '' : ` ${args}`}`;
}

interface Environment {
  date: string;
  command: string;
  node: string;
  cpu: string;
  cores: number;
  dataFs: string;
  syncMode: string;
  /** The commit the server was built from, and whether src/ had uncommitted changes. */
  source: string;
  /** The disk's measured sync latency, as a sentence (sync-latency.ts). */
  syncLatency: string;
}

function markdown(env: Environment, options: Options, session: Session, runs: RunReport[], stop: { code: number | null; ms: number }): string {
  const rows = runs.map((r) => {
    const l = r.load;
    const o = r.orderLatency;
    const cpu = (c: RunReport['serverCpu']): string => (c === null ? 'n/a' : `${f0(c.pct)}%`);
    return (
      `| ${r.label} | ${f0(r.requestsPerS)} | ${f0(r.durableOrdersPerS)} | ${f0(l.byKind.order?.ok2xx ?? 0)} / ${r.ledger === null ? 'n/a' : f0(r.ledger.durableOrders)} | ` +
      `${f2(o.p50)} | ${f2(o.p90)} | ${f2(o.p99)} | ${f2(o.p999)} | ${f2(o.max)} | ${failures(r)} | ${f1(r.batch.perCommit)} | ${msPerCommit(r) === null ? 'n/a' : f2(msPerCommit(r)!)} | ` +
      `${cpu(r.serverCpu)} | ${cpu(r.loadgenCpu)} | ${f0(r.otherPct)}% | ` +
      `${r.serverMemory === null ? 'n/a' : `${f0(r.serverMemory.rssMiB)} (${f0(r.serverMemory.anonMiB)} private)`} |`
    );
  });
  const scenarioText =
    options.scenario === 'order'
      ? ''
      : options.scenario === 'mixed'
        ? 'scenario mixed (1 order : 3 status : 1 balance), '
        : options.scenario === 'v2'
          ? 'scenario v2 (orders through POST /api/v2 action=add, form-encoded), '
          : 'scenario idempotent (a new Idempotency-Key per order), ';
  return [
    `Run of ${env.date}: \`${env.command}\``,
    '',
    ...(options.note === null ? [] : [`Note: ${options.note}`, '']),
    ...(options.serverEntry === SERVER_MAIN ? [] : [`Server entry: ${options.serverEntry}`, '']),
    ...(options.loadgenNice === null ? [] : [`Load generator at nice ${options.loadgenNice} (a diagnostic: see --help).`, '']),
    ...(options.sideTraffic === null ? [] : [`Side traffic: ${options.sideTraffic} signed posts a second between two other processes (a reference: see --help).`, '']),
    `Server ${env.source}. Node ${env.node}; ${env.cpu}, ${env.cores} cores; data directory on ${env.dataFs}; ${env.syncLatency}; WAL sync mode ${env.syncMode}; ${scenarioText}` +
      `${f0(options.accounts)} accounts (seeded ${session.seeded.how === 'admin' ? 'through the admin API' : 'directly into LMDB'} in ${f1(session.seeded.seconds)} s), ${options.connections} connections (${options.mode} requests${options.rate === null ? '' : `, ${f0(options.rate)} offered a second`}), ` +
      `${options.warmup} s warm-up, ${options.duration} s per run, quantity ${options.quantity} × rate ${RATE} = charge ${options.quantity * Number(RATE)} credits. ` +
      `SIGTERM: exit code ${stop.code} after ${stop.ms} ms.`,
    '',
    '| run | req/s | durable orders/s | 201s / ledger orders | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | non-2xx / errors / timeouts | entries per commit | run time ÷ commits, ms | server CPU | loadgen CPU | other CPU | server RSS MiB (private) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    ...runs.map((r) => `${r.label}: ${verdict(r, options)}.`),
    '',
    'Latencies are of the order requests (2xx). CPU is percent of one core over the run (this machine has ' +
      `${env.cores} cores; "other" is whatever else ran on the machine meanwhile). Durable orders/s counts 201 responses; the ledger column is the total debited across all wallets ` +
      '(admin API, durable state only) divided by the charge of one order. Entries per commit: wal.entries / wal.batches growth in GET /admin/v1/stats over the run; run time ÷ commits: the time one commit takes when the WAL is the bottleneck (it commits one batch at a time).',
  ].join('\n');
}

const BEGIN = '<!-- bench:http:begin (written by npm run bench:http -- --write-results) -->';
const END = '<!-- bench:http:end -->';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let options: Options;
  try {
    options = parseOptions(argv);
  } catch (error) {
    process.stderr.write(`bench:http: ${(error as Error).message}\n${HELP}`);
    process.exit(2);
  }
  if (options.cpuProf) mkdirSync(BENCH_TMP, { recursive: true });
  const profDir = options.cpuProf ? mkdtempSync(join(BENCH_TMP, 'cpuprof-')) : null;
  const env: Environment = {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    command: commandLine(argv),
    node: process.version,
    cpu: cpuModel(),
    cores: cpus().length,
    dataFs: `${filesystemOf(tmpdir())} (${tmpdir()})`,
    syncMode: options.syncMode ?? 'server default (commit)',
    source: sourceVersion(),
    // Measured before the server starts, on the file system its data goes to.
    syncLatency: describeSyncLatency(measureSyncLatency(tmpdir())),
  };
  log(`${env.command} | ${env.source} | Node ${env.node} | ${env.cpu} × ${env.cores} | data on ${env.dataFs} | ${env.syncLatency}`);

  const sink = options.webhooks ? await startSink(options.sink) : null;
  if (sink !== null) {
    // The server (which inherits this environment) may post to the loopback receiver over http.
    process.env['WEBHOOKS_ALLOW_HTTP'] = 'true';
    process.env['WEBHOOKS_ALLOW_PRIVATE'] = 'true';
  }
  const session = await openSession({
    webhooks: sink?.url ?? null,
    webhookAccounts: options.webhookAccounts,
    webhooksDisabled: options.webhooksDisabled,
    scenario: options.scenario,
    accounts: options.accounts,
    connections: options.connections,
    rate: options.rate,
    mode: options.mode,
    quantity: options.quantity,
    seed: options.seed,
    seedConcurrency: options.seedConcurrency,
    syncMode: options.syncMode,
    serverEntry: options.serverEntry,
    profDir,
    keepData: options.keepData,
  });
  let side: SideTraffic | null = null;
  try {
    log(`load generator pid ${session.runner.pid}`);
    if (options.loadgenNice !== null) setPriority(session.runner.pid, options.loadgenNice);
    // Linux's nice is per thread: this sets the main thread's, where the receiver runs.
    if (options.sinkNice !== null && sink !== null) setPriority(options.sinkNice);
    if (options.sideTraffic !== null) side = await startSideTraffic(options.sideTraffic);
    if (options.warmup > 0) await session.warmup(options.warmup);
    const reports: RunReport[] = [];
    for (let i = 1; i <= options.runs; i++) {
      const receivedBefore = sink?.received() ?? 0;
      const report = await session.measure(`run ${i}`, options.duration, options);
      reports.push(report);
      process.stdout.write(`${describeRun(report)}\n  ${verdict(report, options)}\n\n`);
      if (sink !== null) {
        const connections = sink.connections();
        const during = sink.received() - receivedBefore;
        log(
          `webhook deliveries received from the run's start to its report: ${f0(during)} (${f0(during / options.duration)} per second of the run); so far: ${f0(sink.received())}` +
            `${connections === null ? '' : ` over ${f0(connections)} connections`} (${options.sink} receiver)`,
        );
      }
      if (side !== null) log(`side traffic answered so far: ${f0(await side.answered())}`);
    }
    await side?.close();
    side = null;
    const stop = await session.stop();
    process.stdout.write(
      `server memory after the runs: ${describeMemory(stop.finalMemory)}; ` +
        `SIGTERM → exit code ${stop.code}${stop.signal === null ? '' : ` (signal ${stop.signal})`} after ${stop.ms} ms\n`,
    );

    let profile: ProfileSummary | null = null;
    let profileFile: string | null = null;
    if (profDir !== null) {
      const file = readdirSync(profDir).find((name) => name.endsWith('.cpuprofile'));
      if (file === undefined) log('no .cpuprofile was written');
      else {
        profileFile = join(profDir, file);
        const first = reports[0]!.load;
        const last = reports[reports.length - 1]!.load;
        profile = summarizeProfile(profileFile, { fromUs: first.startMonoUs, toUs: last.finishMonoUs }, 30);
        process.stdout.write(`\n${formatProfile(profile)}\n(profile: ${profileFile})\n\n`);
      }
    }

    const block = markdown(env, options, session, reports, stop);
    process.stdout.write(`${block}\n`);
    if (options.writeResults) writeMarkedBlock(RESULTS_MD, BEGIN, END, 'Order path (bench:http)', block);
    if (options.json !== null) {
      writeFileSync(
        options.json,
        JSON.stringify({ env, options, seedS: session.seeded.seconds, runs: reports, stop, profile, profileFile }, null, 2) + '\n',
      );
      log(`wrote ${options.json}`);
    }
    if (stop.code !== 0) {
      log(`the server exited with code ${stop.code} on SIGTERM (expected 0)`);
      process.exitCode = 1;
    }
  } finally {
    await side?.close();
    await session.dispose();
    await sink?.close();
    if (profDir !== null) log(`profiles in ${profDir}`);
  }
}

main().catch((error: unknown) => {
  log(`failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});
