/**
 * The generated part of bench/RESULTS.md: markdown rendered from the figures alone (so --from-json reproduces it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ChartPoint } from '../chart.js';
import { failures, msPerCommit, type RunReport } from '../http/measure.js';
import { perWallet, pointName, type ScalingPoint, type ScalingResult, type ScalingStep } from '../http/scaling.js';
import { f0, f1, f2, MiB, REPO_ROOT, shellArgs } from '../http/util.js';
import { QUANTITY, TARGET_SCALED, TARGET_SCALED_BASE, TARGET_SCALED_RATIO } from './options.js';
import { type Environment, type Outcome, type Results } from './results.js';

export function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

/** " --full …", the arguments of the run (older JSON: taken from the command line). */
export function runAllArgs(env: Environment): string {
  const args = env.args !== undefined ? shellArgs(env.args) : env.command.replace(/^npm run bench(?: -- )?|^node dist\/bench\/run-all\.js ?/, '');
  return args === '' ? '' : ` ${args}`;
}

export function commandLine(argv: string[]): string {
  const args = shellArgs(argv);
  if (process.env['npm_lifecycle_event'] === 'bench') return `npm run bench${args === '' ? '' : ` -- ${args}`}`;
  return `node dist/bench/run-all.js${args === '' ? '' : ` ${args}`}`;
}

export const mib = (m: { rssMiB: number; anonMiB: number } | null): string => (m === null ? 'n/a' : `${f0(m.rssMiB)} (${f0(m.anonMiB)})`);
export const pct = (c: { pct: number } | null): string => (c === null ? 'n/a' : `${f0(c.pct)}%`);
/** Other processes' CPU during a run, flagged when it was high enough to matter on 2 cores. */
export const NOISY_PCT = 25;
export const other = (pctOfCore: number): string => `${f0(pctOfCore)}%${pctOfCore > NOISY_PCT ? ' ⚠' : ''}`;
export const msc = (r: RunReport): string => {
  const ms = msPerCommit(r);
  return ms === null ? 'n/a' : f2(ms);
};

export function failed(title: string, outcome: Outcome<unknown>): string[] | null {
  if (outcome.ok === true) return null;
  if (outcome.ok === null) return [`${title}: ${outcome.reason}.`];
  return [`**${title} failed** after ${f1(outcome.seconds)} s: ${outcome.error.split('\n')[0]}`];
}

export function scenarioRows(name: string, runs: RunReport[]): string[] {
  return runs.map((r) => {
    const o = r.orderLatency;
    return (
      `| ${name} | ${r.label} | ${f0(r.requestsPerS)} | ${f0(r.durableOrdersPerS)} | ${f2(o.p50)} | ${f2(o.p90)} | ${f2(o.p99)} | ${f2(o.p999)} | ` +
      `${f2(r.load.latency.p99)} | ${f1(r.batch.perCommit)} | ${msc(r)} | ${pct(r.serverCpu)} | ${pct(r.loadgenCpu)} | ${other(r.otherPct)} | ${mib(r.serverMemory)} | ` +
      `${f0(r.load.byKind.order?.ok2xx ?? 0)} / ${r.ledger === null ? 'n/a' : f0(r.ledger.durableOrders)} | ${failures(r)} |`
    );
  });
}

export function meanOf(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

export function chartPoints(sweepRuns: RunReport[]): ChartPoint[] {
  return sweepRuns.map((r) => ({ connections: r.connections, ordersPerS: r.durableOrdersPerS, p99Ms: r.orderLatency.p99 }));
}

export function render(results: Results): string {
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
      `The ceiling is the same load generator, requests and connections against a bare uWebSockets.js server (\`bench/http/stub.ts\`, through \`src/http/transport/uws.ts\`) ` +
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
export function runsOf(step: ScalingStep): RunReport[] {
  const old = step as ScalingStep & { run?: RunReport | null };
  return step.runs ?? (old.run === undefined || old.run === null ? [] : [old.run]);
}

/** " --steps 1000000:10000000,…", or nothing when there are no steps (older JSON has none). */
export function stepsArg(steps: ScalingPoint[] | undefined): string {
  return steps === undefined || steps.length === 0 ? '' : ` --steps ${steps.map((p) => `${p.accounts}:${p.orders}`).join(',')}`;
}

/** Stored orders of a step (JSON from before stored orders: 0). */
export const ordersOf = (st: ScalingStep): number => st.orders ?? 0;

/** Mean durable orders/s of the step at `point`, or null when no such step ran (with runs). */
export function scaledOrdersPerS(s: ScalingResult, point: ScalingPoint): number | null {
  const runs = s.steps.filter((st) => st.accounts === point.accounts && ordersOf(st) === point.orders).flatMap(runsOf);
  return runs.length === 0 ? null : meanOf(runs.map((r) => r.durableOrdersPerS));
}

/** "1,000 accounts and no stored orders". */
export const storedName = (p: ScalingPoint): string => `${f0(p.accounts)} accounts and ${p.orders === 0 ? 'no' : f0(p.orders)} stored orders`;

/** The scaling target as one sentence: the ratio, met or NOT met, or why it is not there. */
export function scaledTarget(s: ScalingResult): string {
  const what = `durable orders/s at ${storedName(TARGET_SCALED)} ÷ at ${storedName(TARGET_SCALED_BASE)}`;
  const at = scaledOrdersPerS(s, TARGET_SCALED);
  const base = scaledOrdersPerS(s, TARGET_SCALED_BASE);
  const missing = [at === null ? pointName(TARGET_SCALED) : null, base === null ? pointName(TARGET_SCALED_BASE) : null].filter((m) => m !== null);
  if (at === null || base === null) {
    return `**Target (scaling)**: ${what} ≥ ${TARGET_SCALED_RATIO}: not measured, the ${missing.join(' and the ')} step did not run (--full runs both).`;
  }
  const ratio = at / base;
  return `**Target (scaling)**: ${what} = ${f0(at)} ÷ ${f0(base)} = **${f2(ratio)}** (target ≥ ${TARGET_SCALED_RATIO}): ${ratio >= TARGET_SCALED_RATIO ? 'met' : '**NOT met**'}.`;
}

export function renderScaling(s: ScalingResult): string[] {
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

