/**
 * `npm run bench:durability`: what durability costs on this machine's disk.
 *
 * Runs the same build twice over, alternating (durable, no-sync, durable,
 * no-sync, …; a fresh server each time, see interleave.ts): once as it is,
 * once with libeatmydata preloaded (`LD_PRELOAD`), which turns every
 * fsync, fdatasync, sync_file_range and O_SYNC/O_DSYNC open of the server
 * into a no-op. Everything else (the code, the data, the load, the page
 * cache) is the same, so the ratio of the two throughputs is the share of
 * the order path's speed that the syncs leave, and the p99s show what they
 * add to latency. The no-sync variant is a measurement only: its replies are
 * not durable.
 *
 * Every report states the disk's measured sync latency (sync-latency.ts):
 * the cost of durability depends on it, so a ratio means nothing without it.
 *
 * Optional: libeatmydata is a system package (Debian: `apt-get install
 * eatmydata`), not an npm one; without it this prints one line saying so and
 * exits 0.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { findEatmydata, LIBRARY_DIRS } from './eatmydata.js';
import { interleave, meanSe, ratioSe, variant, type Variant } from './interleave.js';
import { SERVER_MAIN } from './server-process.js';
import { describeSyncLatency, measureSyncLatency } from './sync-latency.js';
import { f0, f2, log, positiveInt, setLogPrefix, shellArgs, sourceVersion, writeMarkedBlock } from './util.js';

const HELP = `Usage: npm run bench:durability -- [options]

  --scenario S      order (default), mixed or idempotent (as bench:http)
  --connections N   concurrent HTTP connections (default 64)
  --rounds N        servers per variant, alternated durable, no-sync, … (default 3)
  --runs N          measured runs per server (default 2)
  --duration S      seconds per run (default 6)
  --warmup S        seconds of warm-up per server (default 2)
  --accounts N      funded accounts, seeded directly into LMDB (default 10000)
  --eatmydata PATH  libeatmydata.so to preload (default: looked for under /usr/lib*)
  --server-entry P  the server script (default dist/src/main.js)
  --write-results   write the figures into bench/RESULTS.md (between the bench:durability markers of the scenario)
`;

const RESULTS_MD = fileURLToPath(new URL('../../../bench/RESULTS.md', import.meta.url));
/** One block per scenario, so that the three scenarios' latest runs stand side by side. */
const begin = (scenario: string): string => `<!-- bench:durability:${scenario}:begin (written by npm run bench:durability -- --write-results) -->`;
const end = (scenario: string): string => `<!-- bench:durability:${scenario}:end -->`;

/** The targets at 64 connections: durable ÷ no-sync throughput, and the durable order p99. */
const RATIO_TARGET = 0.85;
const P99_TARGET_MS = 5;

function commandLine(argv: string[]): string {
  const args = shellArgs(argv);
  if (process.env['npm_lifecycle_event'] === 'bench:durability') return `npm run bench:durability${args === '' ? '' : ` -- ${args}`}`;
  return `node dist/bench/http/durability-cost.js${args === '' ? '' : ` ${args}`}`;
}

function row(v: Variant): string {
  const o = meanSe(v.orders);
  return (
    `| ${v.name} | ${v.orders.length} | ${f0(o.mean)} ± ${f0(o.se)} | ${f0(Math.min(...v.orders))} – ${f0(Math.max(...v.orders))} | ` +
    `${f2(meanSe(v.p99).mean)} | ${f2(Math.max(...v.p99))} | ${v.commitMs.length === 0 ? 'n/a' : f2(meanSe(v.commitMs).mean)} |`
  );
}

async function main(): Promise<void> {
  setLogPrefix('bench:durability');
  const argv = process.argv.slice(2);
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      scenario: { type: 'string', default: 'order' },
      connections: { type: 'string', default: '64' },
      rounds: { type: 'string', default: '3' },
      runs: { type: 'string', default: '2' },
      duration: { type: 'string', default: '6' },
      warmup: { type: 'string', default: '2' },
      accounts: { type: 'string', default: '10000' },
      eatmydata: { type: 'string' },
      'server-entry': { type: 'string' },
      'write-results': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help === true) {
    process.stdout.write(HELP);
    return;
  }
  const scenario = values.scenario!;
  if (scenario !== 'order' && scenario !== 'mixed' && scenario !== 'idempotent') {
    throw new Error(`--scenario must be order, mixed or idempotent; got ${JSON.stringify(scenario)}`);
  }
  const library = values.eatmydata ?? findEatmydata();
  if (library === null || !existsSync(library)) {
    process.stdout.write(
      `bench:durability: skipped: libeatmydata is not installed (${library === null ? `not found under ${LIBRARY_DIRS.join(', ')}` : `${library} does not exist`}; ` +
        'Debian: apt-get install eatmydata). It is what turns the syncs off for the no-sync side of the comparison.\n',
    );
    return;
  }
  const rounds = positiveInt('rounds', values.rounds!);
  const connections = positiveInt('connections', values.connections!);
  const orderArgs = [
    '--seed', 'direct',
    '--scenario', scenario,
    '--connections', String(connections),
    '--runs', String(positiveInt('runs', values.runs!)),
    '--duration', String(positiveInt('duration', values.duration!)),
    '--warmup', String(positiveInt('warmup', values.warmup!, 0)),
    '--accounts', String(positiveInt('accounts', values.accounts!)),
  ];
  const entry = values['server-entry'] ?? SERVER_MAIN;
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  // Measured before any server runs, outside the no-sync variant's environment.
  const syncLatency = describeSyncLatency(measureSyncLatency(tmpdir()));
  log(syncLatency);
  const durable = variant('durable', entry);
  const noSync = variant('no-sync (eatmydata)', entry, { LD_PRELOAD: library });
  await interleave([durable, noSync], orderArgs, rounds);

  const d = meanSe(durable.orders);
  const n = meanSe(noSync.orders);
  const ratio = d.mean / n.mean;
  const p99 = meanSe(durable.p99).mean;
  const targets =
    connections === 64 && scenario === 'order'
      ? [
          `Targets at 64 connections: durable ÷ no-sync ≥ ${RATIO_TARGET}: ${ratio >= RATIO_TARGET ? 'met' : 'NOT met'}; ` +
            `durable order p99 ≤ ${P99_TARGET_MS} ms (mean of the runs' p99): ${p99 <= P99_TARGET_MS ? 'met' : 'NOT met'}.`,
        ]
      : [];
  const block = [
    `Run of ${date}: \`${commandLine(argv)}\``,
    '',
    `Server ${sourceVersion()}${entry === SERVER_MAIN ? '' : ` (entry ${entry})`}; scenario ${scenario}, ${connections} connections; ` +
      `${syncLatency}; no-sync = the same build with LD_PRELOAD=${library}.`,
    '',
    '| variant | runs | durable orders/s, mean ± SE | min – max | p99 ms (mean) | p99 ms (worst run) | ms per commit (mean) |',
    '|---|---:|---:|---:|---:|---:|---:|',
    row(durable),
    row(noSync),
    '',
    `**durable ÷ no-sync throughput: ${ratio.toFixed(3)} ± ${ratioSe(d, n).toFixed(3)}**; order p99 ${f2(p99)} ms durable, ` +
      `${f2(meanSe(noSync.p99).mean)} ms no-sync.`,
    ...targets,
    '',
    'Variants alternate, a fresh server each (durable first); mean ± standard error over every measured run. The no-sync ' +
      'variant\'s "durable orders/s" are 201s sent without a real sync: a measurement of what the syncs cost, never a way to run.',
  ].join('\n');
  process.stdout.write(`${block}\n`);
  if (values['write-results'] === true) {
    writeMarkedBlock(RESULTS_MD, begin(scenario), end(scenario), `What durability costs, scenario ${scenario} (bench:durability)`, block);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:durability: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
