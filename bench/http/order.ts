/**
 * `npm run bench:http`: the HTTP load benchmark of the order path.
 *
 * Starts the real server (dist/src/main.js) as a child process on a fresh
 * temp data directory and free ports, seeds funded accounts and one service
 * through the admin API, warms up, then drives POST /api/v1/order with
 * autocannon in a separate process (runner.js) spreading the requests over
 * all the accounts. After each measured run it checks the ledger through the
 * admin API: the total debited across all wallets divided by the charge of
 * one order is the number of durable orders, which must cover every 201 the
 * clients saw. Reports requests/s, durable orders/s, latency percentiles,
 * errors, CPU per process and thread (server, load generator, everything
 * else on the machine), and the server's memory; stops the server with
 * SIGTERM and checks it exits 0. Builds nothing: it runs from dist/.
 *
 * See --help for the options; bench/RESULTS.md for figures and analysis;
 * ceiling.ts for the load generator's own limit on this machine.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { formatProfile, summarizeProfile, type ProfileSummary } from './profile.js';
import {
  cpuModel,
  cpuUse,
  machineTimes,
  machineUse,
  memory,
  processTimes,
  type CpuUse,
  type Memory,
} from './procstat.js';
import { freePort, startRunner, type Runner } from './loadgen.js';
import type { LoadResult, RunnerConfig } from './protocol.js';

const HELP = `Usage: npm run bench:http -- [options]

  --accounts N         funded accounts to seed and rotate through (default 10000)
  --connections N      concurrent HTTP connections (default 64)
  --duration S         seconds per measured run (default 10)
  --warmup S           seconds of unmeasured load first (default 3; 0 skips)
  --runs N             measured runs against the same server (default 1)
  --mode M             prebuilt (default): each connection cycles through its own share of
                       the accounts as ready-made requests; rotate: every request is built
                       afresh round-robin over all accounts (costs the load generator more CPU)
  --quantity Q         quantity per order; the service rate is 0.001 (default 1000)
  --seed-concurrency N admin requests in flight while seeding (default 64)
  --sync-mode M        WAL_SYNC_MODE for the server: commit or overlapping (default: server's)
  --cpu-prof           run the server under node --cpu-prof and summarise the measured runs
  --write-results      write the figures into bench/RESULTS.md (section "Order path (bench:http)")
  --json FILE          also write every figure as JSON
  --keep-data          keep the temp data directory (and profiles) afterwards
  --quiet-wait S       before each run, wait up to S seconds for the machine to be idle
                       (other processes below --quiet-below percent of all cores; default 0: don't wait)
  --quiet-below PCT    idle threshold for --quiet-wait (default 10)
  --server-entry PATH  the server script to run (default dist/src/main.js), e.g. an instrumented copy
  --target-orders N    durable orders/s to compare against (default 25000)
  --target-p99 MS      p99 latency to compare against (default 10)
  --note TEXT          a remark to print with the figures (e.g. what was measured)
`;

const RATE = '0.001';
const RATE_MICRO = 1000n;
const CREDITS = '1000000000';
const CREDITS_MICRO = 1_000_000_000n * 1_000_000n;

const here = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url));
const SERVER_MAIN = here('../../src/main.js');
const RESULTS_MD = here('../../../bench/RESULTS.md');
const BENCH_TMP = here('../../../.bench-tmp');

interface Options {
  accounts: number;
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
}

function positiveInt(name: string, raw: string, min = 1): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new Error(`--${name} must be an integer of at least ${min}; got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      accounts: { type: 'string', default: '10000' },
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
      'quiet-wait': { type: 'string', default: '0' },
      'quiet-below': { type: 'string', default: '10' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const mode = values.mode;
  if (mode !== 'prebuilt' && mode !== 'rotate') throw new Error(`--mode must be prebuilt or rotate; got ${JSON.stringify(mode)}`);
  const syncMode = values['sync-mode'] ?? null;
  if (syncMode !== null && syncMode !== 'commit' && syncMode !== 'overlapping') {
    throw new Error(`--sync-mode must be commit or overlapping; got ${JSON.stringify(syncMode)}`);
  }
  return {
    accounts: positiveInt('accounts', values.accounts),
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
    quietWait: positiveInt('quiet-wait', values['quiet-wait'], 0),
    quietBelow: positiveInt('quiet-below', values['quiet-below']),
  };
}

const T0 = performance.now();

function log(line: string): void {
  process.stderr.write(`[bench:http +${((performance.now() - T0) / 1000).toFixed(1)}s] ${line}\n`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function filesystemOf(path: string): string {
  const names: Record<number, string> = {
    0xef53: 'ext4',
    0x01021994: 'tmpfs',
    0x58465342: 'xfs',
    0x9123683e: 'btrfs',
    0x794c7630: 'overlayfs',
    0x2fc12fc1: 'zfs',
    0x6969: 'nfs',
  };
  try {
    const type = statfsSync(path).type;
    return names[type] ?? `fs type 0x${type.toString(16)}`;
  } catch {
    return 'unknown fs';
  }
}

/** Waits (up to maxS) for a second in which the machine is at most thresholdPct busy; returns the last reading. */
async function waitForQuiet(maxS: number, thresholdPct: number): Promise<number> {
  const deadline = Date.now() + maxS * 1000;
  let said = false;
  for (;;) {
    const before = machineTimes();
    await sleep(1000);
    const busy = machineUse(before, machineTimes()).busyPct;
    if (busy <= thresholdPct) return busy;
    if (Date.now() >= deadline) {
      log(`the machine is still ${f0(busy)}% busy after waiting ${maxS} s; measuring anyway`);
      return busy;
    }
    if (!said) log(`the machine is ${f0(busy)}% busy (other processes); waiting up to ${maxS} s for it to go below ${thresholdPct}%`);
    said = true;
  }
}

// ---------------------------------------------------------------- server

interface ServerProcess {
  child: ChildProcess;
  pid: number;
  baseUrl: string;
  adminUrl: string;
  token: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startServer(dataDir: string, options: Options, profDir: string | null): Promise<ServerProcess> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const token = randomBytes(24).toString('base64url');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    ADMIN_HOST: '127.0.0.1',
    ADMIN_PORT: String(adminPort),
    DATA_DIR: dataDir,
    ADMIN_TOKEN: token,
    LOG_LEVEL: 'warn',
    SEED_DEMO: 'false',
    RATE_LIMIT_DEFAULT: '100000000',
  };
  if (options.syncMode !== null) env['WAL_SYNC_MODE'] = options.syncMode;
  const nodeArgs = profDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${profDir}`];
  const child = spawn(process.execPath, [...nodeArgs, options.serverEntry], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const forward = (chunk: Buffer): void => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') process.stderr.write(`[server] ${line}\n`);
  };
  child.stdout!.on('data', forward);
  child.stderr!.on('data', forward);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const server: ServerProcess = {
    child,
    pid: child.pid!,
    baseUrl: `http://127.0.0.1:${port}`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    token,
    exited,
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (gone) throw new Error('the server exited during start-up (see its output above)');
    try {
      const response = await fetch(`${server.adminUrl}/healthz`);
      await response.arrayBuffer();
      if (response.status === 200) return server;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error('the server did not answer /healthz within 20 s');
    await sleep(50);
  }
}

async function admin(server: ServerProcess, method: string, path: string, body?: unknown): Promise<string> {
  const init: RequestInit = { method, headers: { Authorization: `Bearer ${server.token}` } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  const response = await fetch(server.adminUrl + path, init);
  const text = await response.text();
  if (response.status < 200 || response.status >= 300) {
    throw new Error(`admin ${method} ${path} answered ${response.status}: ${text}`);
  }
  return text;
}

async function seed(server: ServerProcess, options: Options): Promise<{ serviceId: number; accounts: { id: number; key: string; secret: string }[] }> {
  const service = JSON.parse(
    await admin(server, 'POST', '/admin/v1/services', { platform: 'bench', name: 'bench', rate: Number(RATE), min: 1, max: 1_000_000 }),
  ) as { service: { id: number } };
  const accounts: { id: number; key: string; secret: string }[] = new Array(options.accounts);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= options.accounts) return;
      const created = JSON.parse(await admin(server, 'POST', '/admin/v1/accounts', { name: `bench-${i}` })) as {
        account: { id: number };
        api_key: string;
        api_secret: string;
      };
      await admin(server, 'POST', `/admin/v1/accounts/${created.account.id}/credits`, { amount: CREDITS, reason: 'bench' });
      accounts[i] = { id: created.account.id, key: created.api_key, secret: created.api_secret };
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.seedConcurrency, options.accounts) }, worker));
  return { serviceId: service.service.id, accounts };
}

/** Exact decimal credits text ("999999999.872") → micro-credits. */
function microOf(text: string): bigint {
  const m = /^(-)?(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (m === null) throw new Error(`unexpected credits value ${text}`);
  const micro = BigInt(m[2]!) * 1_000_000n + BigInt((m[3] ?? '').padEnd(6, '0'));
  return m[1] === undefined ? micro : -micro;
}

/** Every wallet's durable balance (the admin listing waits for pending syncs). */
async function balances(server: ServerProcess): Promise<Map<number, bigint>> {
  const text = await admin(server, 'GET', '/admin/v1/accounts');
  const out = new Map<number, bigint>();
  const pattern = /\{"id":(\d+),"name":"(?:[^"\\]|\\.)*","credits":(-?[0-9.]+)/g;
  for (const m of text.matchAll(pattern)) out.set(Number(m[1]), microOf(m[2]!));
  // Credits are read from the text (exact decimals, never through a float);
  // make sure that saw every account the JSON holds.
  const listed = (JSON.parse(text) as { accounts?: unknown[] }).accounts?.length;
  if (listed !== out.size) throw new Error(`could not read the credits of every account from GET /admin/v1/accounts (${out.size} of ${listed}); did its format change?`);
  return out;
}

interface LedgerCheck {
  durableOrders: number;
  debitedCredits: string;
  accountsOrdering: number;
  minPerAccount: number;
  maxPerAccount: number;
  negativeWallets: number;
  /** Wallet deltas that are not a whole number of orders (must be 0). */
  oddDeltas: number;
}

function ledgerCheck(before: Map<number, bigint>, after: Map<number, bigint>, chargeMicro: bigint): LedgerCheck {
  let debited = 0n;
  let touched = 0;
  let min = Infinity;
  let max = 0;
  let negative = 0;
  let odd = 0;
  for (const [id, was] of before) {
    const now = after.get(id);
    if (now === undefined) throw new Error(`account ${id} disappeared from the admin listing`);
    if (now < 0n) negative++;
    const delta = was - now;
    debited += delta;
    if (delta % chargeMicro !== 0n) odd++;
    const orders = Number(delta / chargeMicro);
    if (orders > 0) touched++;
    min = Math.min(min, orders);
    max = Math.max(max, orders);
  }
  return {
    durableOrders: Number(debited / chargeMicro),
    debitedCredits: `${debited / 1_000_000n}.${String(debited % 1_000_000n).padStart(6, '0')}`.replace(/\.?0+$/, ''),
    accountsOrdering: touched,
    minPerAccount: min === Infinity ? 0 : min,
    maxPerAccount: max,
    negativeWallets: negative,
    oddDeltas: odd,
  };
}

async function stopServer(server: ServerProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  const started = Date.now();
  server.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), 20_000);
  });
  const exit = await Promise.race([server.exited, timeout]);
  clearTimeout(timer);
  if (exit === null) {
    server.child.kill('SIGKILL');
    throw new Error('the server did not exit within 20 s of SIGTERM');
  }
  return { ...exit, ms: Date.now() - started };
}

// ---------------------------------------------------------------- report

interface RunReport {
  label: string;
  load: LoadResult;
  ledger: LedgerCheck;
  requestsPerS: number;
  acknowledgedOrdersPerS: number;
  durableOrdersPerS: number;
  serverCpu: CpuUse | null;
  loadgenCpu: CpuUse | null;
  machine: { busyPct: number; iowaitPct: number };
  /** CPU used by everything else on the machine (other processes), percent of one core. */
  otherPct: number;
  serverMemory: Memory | null;
}

const f0 = (n: number): string => Math.round(n).toLocaleString('en-US');
const f1 = (n: number): string => n.toFixed(1);
const f2 = (n: number): string => n.toFixed(2);

function verdict(r: RunReport, options: Options): string {
  const orders = r.durableOrdersPerS >= options.targetOrders;
  const p99 = r.load.latency.p99 <= options.targetP99;
  return (
    `target ≥ ${f0(options.targetOrders)} durable orders/s with p99 ≤ ${options.targetP99} ms: ` +
    (orders && p99 ? 'met' : `NOT met (${f0(r.durableOrdersPerS)}/s = ${f0((100 * r.durableOrdersPerS) / options.targetOrders)}% of target, p99 ${f2(r.load.latency.p99)} ms)`)
  );
}

function describeRun(r: RunReport, connections: number): string {
  const l = r.load;
  const codes = Object.entries(l.statusCodes)
    .map(([c, n]) => `${c}: ${f0(n)}`)
    .join(', ');
  const threads = (cpu: CpuUse | null): string =>
    cpu === null ? 'n/a' : `${f0(cpu.pct)}% of a core (${cpu.threads.slice(0, 4).map((t) => `${t.name}${t.count > 1 ? `×${t.count}` : ''} ${f0(t.pct)}%`).join(', ')})`;
  const unacked = r.ledger.durableOrders - l.ok2xx;
  return [
    `${r.label}: ${f1(l.durationS)} s at ${connections} connections`,
    `  requests/s          ${f0(r.requestsPerS)}  (${f0(l.completed)} completed, ${f0(l.sent)} sent; per-second samples ${f0(l.perSecond.min)}..${f0(l.perSecond.max)})`,
    `  durable orders/s    ${f0(r.durableOrdersPerS)}  (201 responses: ${f0(l.ok2xx)} = ${f0(r.acknowledgedOrdersPerS)}/s)`,
    `  ledger check        ${f0(r.ledger.durableOrders)} orders debited (${r.ledger.debitedCredits} credits) across ${f0(r.ledger.accountsOrdering)} accounts ` +
      `(${r.ledger.minPerAccount}..${r.ledger.maxPerAccount} each); ${unacked >= 0 ? `${f0(unacked)} more than the 201s seen` : `${f0(-unacked)} FEWER than the 201s seen`} ` +
      `(≤ ${connections} expected: in flight when the load stopped); negative wallets ${r.ledger.negativeWallets}, odd deltas ${r.ledger.oddDeltas}`,
    `  latency (2xx)       p50 ${f2(l.latency.p50)} ms, p90 ${f2(l.latency.p90)} ms, p99 ${f2(l.latency.p99)} ms, p99.9 ${f2(l.latency.p999)} ms, max ${f2(l.latency.max)} ms, mean ${f2(l.latency.mean)} ms`,
    `  autocannon latency  p50 ${l.autocannonLatencyMs.p50} ms, p90 ${l.autocannonLatencyMs.p90} ms, p99 ${l.autocannonLatencyMs.p99} ms (1 ms buckets)`,
    `  status codes        ${codes || 'none'}; non-2xx ${f0(l.non2xx)}, errors ${f0(l.errors)}, timeouts ${f0(l.timeouts)}, resets ${f0(l.resets)}`,
    `  server CPU          ${threads(r.serverCpu)}`,
    `  load generator CPU  ${threads(r.loadgenCpu)}`,
    `  machine             ${f0(r.machine.busyPct)}% busy of ${cpus().length} cores, iowait ${f1(r.machine.iowaitPct)}%; ` +
      `other processes used ${f0(r.otherPct)}% of a core${r.otherPct > 20 ? ' (NOISY: something else was running)' : ''}`,
    `  server memory       ${describeMemory(r.serverMemory)}`,
  ].join('\n');
}

function sourceVersion(): string {
  const root = here('../../..');
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return dirty === '' ? `commit ${commit}` : `commit ${commit} + uncommitted changes in src/`;
  } catch {
    return 'unknown source version (not a git checkout)';
  }
}

function describeMemory(m: Memory | null): string {
  if (m === null) return 'n/a';
  return `RSS ${f0(m.rssMiB)} MiB (peak ${f0(m.peakMiB)} MiB): ${f0(m.anonMiB)} MiB heap and other private memory, ${f0(m.fileMiB)} MiB file-backed (the LMDB map, node and native modules)`;
}

function commandLine(argv: string[]): string {
  const args = argv.map((a) => (/^[\w./=:-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(' ');
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
}

function markdown(env: Environment, options: Options, runs: RunReport[], seedS: number, stop: { code: number | null; ms: number }): string {
  const rows = runs.map((r) => {
    const l = r.load;
    const cpu = (c: CpuUse | null): string => (c === null ? 'n/a' : `${f0(c.pct)}%`);
    return (
      `| ${r.label} | ${f0(r.requestsPerS)} | ${f0(r.durableOrdersPerS)} | ${f0(l.ok2xx)} / ${f0(r.ledger.durableOrders)} | ` +
      `${f2(l.latency.p50)} | ${f2(l.latency.p90)} | ${f2(l.latency.p99)} | ${f2(l.latency.max)} | ` +
      `${f0(l.non2xx)} / ${f0(l.errors)} / ${f0(l.timeouts)} | ${cpu(r.serverCpu)} | ${cpu(r.loadgenCpu)} | ${f0(r.otherPct)}% | ` +
      `${r.serverMemory === null ? 'n/a' : `${f0(r.serverMemory.rssMiB)} (${f0(r.serverMemory.anonMiB)} private)`} |`
    );
  });
  return [
    `Run of ${env.date}: \`${env.command}\``,
    '',
    ...(options.note === null ? [] : [`Note: ${options.note}`, '']),
    ...(options.serverEntry === SERVER_MAIN ? [] : [`Server entry: ${options.serverEntry}`, '']),
    `Server ${env.source}. Node ${env.node}; ${env.cpu}, ${env.cores} cores; data directory on ${env.dataFs}; WAL sync mode ${env.syncMode}; ` +
      `${f0(options.accounts)} accounts (seeded in ${f1(seedS)} s), ${options.connections} connections (${options.mode} requests), ` +
      `${options.warmup} s warm-up, ${options.duration} s per run, quantity ${options.quantity} × rate ${RATE} = charge ${options.quantity * Number(RATE)} credits. ` +
      `SIGTERM: exit code ${stop.code} after ${stop.ms} ms.`,
    '',
    '| run | req/s | durable orders/s | 201s / ledger orders | p50 ms | p90 ms | p99 ms | max ms | non-2xx / errors / timeouts | server CPU | loadgen CPU | other CPU | server RSS MiB (private) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    ...runs.map((r) => `${r.label}: ${verdict(r, options)}.`),
    '',
    'CPU is percent of one core over the run (this machine has ' +
      `${env.cores} cores; "other" is whatever else ran on the machine meanwhile). Durable orders/s counts 201 responses; the ledger column is the total debited across all wallets ` +
      '(admin API, durable state only) divided by the charge of one order.',
  ].join('\n');
}

const BEGIN = '<!-- bench:http:begin (written by npm run bench:http -- --write-results) -->';
const END = '<!-- bench:http:end -->';

function writeResults(block: string): void {
  let text = '';
  try {
    text = readFileSync(RESULTS_MD, 'utf8');
  } catch {
    text = '# Benchmark results\n';
  }
  const fresh = `${BEGIN}\n${block}\n${END}`;
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin >= 0 && end > begin) {
    text = text.slice(0, begin) + fresh + text.slice(end + END.length);
  } else {
    const heading = '## Order path (bench:http)';
    const at = text.indexOf(heading);
    if (at >= 0) {
      const afterHeading = at + heading.length;
      text = text.slice(0, afterHeading) + `\n\n${fresh}\n` + text.slice(afterHeading);
    } else {
      text = text.replace(/\n*$/, '\n') + `\n${heading}\n\n${fresh}\n`;
    }
  }
  writeFileSync(RESULTS_MD, text);
  log(`wrote ${RESULTS_MD}`);
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let options: Options;
  try {
    options = parseOptions(argv);
  } catch (error) {
    process.stderr.write(`bench:http: ${(error as Error).message}\n${HELP}`);
    process.exit(2);
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'credit-order-bench-'));
  if (options.cpuProf) mkdirSync(BENCH_TMP, { recursive: true });
  const profDir = options.cpuProf ? mkdtempSync(join(BENCH_TMP, 'cpuprof-')) : null;
  const env: Environment = {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    command: commandLine(argv),
    node: process.version,
    cpu: cpuModel(),
    cores: cpus().length,
    dataFs: `${filesystemOf(dataDir)} (${dataDir.startsWith(tmpdir()) ? tmpdir() : dataDir})`,
    syncMode: options.syncMode ?? 'server default (commit)',
    source: sourceVersion(),
  };
  log(`${env.command} | ${env.source} | Node ${env.node} | ${env.cpu} × ${env.cores} | data ${dataDir} on ${env.dataFs}`);

  let server: ServerProcess | null = null;
  let runner: Runner | null = null;
  let configFile: string | null = null;
  // Ctrl-C: do not leave a server, a load generator or a data directory behind.
  process.once('SIGINT', () => {
    runner?.child.kill('SIGKILL');
    server?.child.kill('SIGKILL');
    if (configFile !== null) rmSync(configFile, { force: true });
    if (!options.keepData) rmSync(dataDir, { recursive: true, force: true });
    process.exit(130);
  });
  try {
    server = await startServer(dataDir, options, profDir);
    log(`server pid ${server.pid}: API ${server.baseUrl}, admin ${server.adminUrl}`);

    const seedStarted = performance.now();
    const seeded = await seed(server, options);
    const seedS = (performance.now() - seedStarted) / 1000;
    log(`seeded ${seeded.accounts.length} accounts with ${CREDITS} credits each and service ${seeded.serviceId} in ${f1(seedS)} s`);

    configFile = join(dataDir, '..', `${dataDir.split('/').pop()}-runner.json`);
    const runnerConfig: RunnerConfig = {
      baseUrl: server.baseUrl,
      connections: options.connections,
      serviceId: seeded.serviceId,
      quantity: options.quantity,
      mode: options.mode,
      accounts: seeded.accounts.map((a) => ({ key: a.key, secret: a.secret })),
    };
    writeFileSync(configFile, JSON.stringify(runnerConfig), { mode: 0o600 });
    runner = await startRunner(configFile);
    log(`load generator pid ${runner.pid}`);

    if (options.warmup > 0) {
      const warm = await runner.run('warm-up', options.warmup);
      log(`warm-up: ${f0(warm.completed / warm.durationS)} req/s, ${f0(warm.non2xx)} non-2xx, ${f0(warm.errors)} errors`);
      if (warm.ok2xx === 0) throw new Error(`no order succeeded during the warm-up; status codes ${JSON.stringify(warm.statusCodes)}`);
    }

    const chargeMicro = BigInt(options.quantity) * RATE_MICRO;
    const reports: RunReport[] = [];
    for (let i = 1; i <= options.runs; i++) {
      const label = `run ${i}`;
      if (options.quietWait > 0) await waitForQuiet(options.quietWait, options.quietBelow);
      const before = await balances(server);
      if (before.size !== seeded.accounts.length) throw new Error(`the admin listing has ${before.size} accounts, expected ${seeded.accounts.length}`);
      const machine0 = machineTimes();
      const server0 = processTimes(server.pid);
      const runner0 = processTimes(runner.pid);
      const self0 = process.cpuUsage();
      const t0 = performance.now();
      const load = await runner.run(label, options.duration);
      const wallS = (performance.now() - t0) / 1000;
      const selfPct = (() => {
        const u = process.cpuUsage(self0);
        return (u.user + u.system) / 1e4 / wallS;
      })();
      const server1 = processTimes(server.pid);
      const runner1 = processTimes(runner.pid);
      const machine1 = machineTimes();
      const serverMemory = memory(server.pid);
      const after = await balances(server);
      const ledger = ledgerCheck(before, after, chargeMicro);
      const serverCpu = cpuUse(server.pid, server0, server1, wallS);
      const loadgenCpu = cpuUse(runner.pid, runner0, runner1, wallS);
      const machine = machineUse(machine0, machine1);
      const report: RunReport = {
        label,
        load,
        ledger,
        requestsPerS: load.completed / load.durationS,
        acknowledgedOrdersPerS: load.ok2xx / load.durationS,
        durableOrdersPerS: load.ok2xx / load.durationS,
        serverCpu,
        loadgenCpu,
        machine,
        otherPct: Math.max(0, machine.busyPct * cpus().length - (serverCpu?.pct ?? 0) - (loadgenCpu?.pct ?? 0) - selfPct),
        serverMemory,
      };
      reports.push(report);
      process.stdout.write(`${describeRun(report, options.connections)}\n  ${verdict(report, options)}\n\n`);
      if (ledger.durableOrders < load.ok2xx) throw new Error('the ledger holds fewer orders than the 201 responses: an acknowledged order was lost');
      if (ledger.negativeWallets > 0 || ledger.oddDeltas > 0) throw new Error('the ledger check failed (negative wallets or partial debits)');
    }

    await runner.close();
    runner = null;
    const finalMemory = memory(server.pid);
    const stop = await stopServer(server);
    server = null;
    process.stdout.write(
      `server memory after the runs: ${describeMemory(finalMemory)}; ` +
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

    const block = markdown(env, options, reports, seedS, stop);
    process.stdout.write(`${block}\n`);
    if (options.writeResults) writeResults(block);
    if (options.json !== null) {
      writeFileSync(options.json, JSON.stringify({ env, options, seedS, runs: reports, stop, finalMemory, profile, profileFile }, null, 2) + '\n');
      log(`wrote ${options.json}`);
    }
    if (stop.code !== 0) {
      log(`the server exited with code ${stop.code} on SIGTERM (expected 0)`);
      process.exitCode = 1;
    }
  } finally {
    if (runner !== null) runner.child.kill('SIGKILL');
    if (server !== null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    if (configFile !== null) rmSync(configFile, { force: true });
    if (options.keepData) log(`kept ${dataDir}${profDir === null ? '' : ` and ${profDir}`}`);
    else {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
}

main().catch((error: unknown) => {
  log(`failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});
