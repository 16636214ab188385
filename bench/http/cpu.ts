/**
 * `npm run bench:cpu`: µs of CPU per acknowledged request, the figure of
 * record for the order path's cost, measured against a bare uWebSockets.js
 * server in the same run.
 *
 * On two cores the order path is bound by CPU, so the CPU one order costs
 * sets its speed, and unlike throughput it hardly depends on what else the
 * machine does. Each round runs the same wrk load (one thread, 64
 * connections, a warm-up, then one measured run) against a fresh server of
 * every variant, in alternating order: the bare uWS ceiling (bare-uws.ts),
 * the order path durable, the order path with every sync a no-op
 * (libeatmydata), optionally WAL_SYNC_MODE=log and a second build ("B",
 * `--entry`), so that before and after run interleaved on the same machine.
 * It reports, per variant, requests/s, the server's CPU per request in all
 * and per thread class (thread-classes.ts), entries per commit, wrk's CPU
 * and the other processes'; then the ratios the issue's targets are stated
 * in, paired by round; and the disk's sync latency before and after.
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { cpus, setPriority, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { targetRatios, variantFigures, type CpuRun, type TargetRatios } from './cpu-figures.js';
import { figuresTable, ratiosTable } from './cpu-report.js';
import { measureVariant, type CpuVariant, type RunSettings } from './cpu-run.js';
import { findEatmydata } from './eatmydata.js';
import { roundOrder } from './interleave.js';
import { cpuModel } from './procstat.js';
import { formatProfile, summarizeProfile } from './profile.js';
import { concernShares, formatConcerns } from './profile-concerns.js';
import { SERVER_MAIN } from './server-process.js';
import { describeSyncLatency, measureSyncLatency } from './sync-latency.js';
import { describeThreads, type ThreadMap } from './thread-classes.js';
import { f0, filesystemOf, log, positiveInt, setLogPrefix, shellArgs, sourceVersion, writeMarkedBlock } from './util.js';
import { wrkVersion } from './wrk-driver.js';

const HELP = `Usage: npm run bench:cpu -- [options]

  --rounds N        rounds; each runs every variant once on a fresh server, in alternating order (default 3)
  --duration S      seconds of the measured wrk run (default 8)
  --warmup S        seconds of unmeasured load on each server first (default 2; 0 skips); for the order
                    path one more run follows when that did not reach every account (a fresh server
                    loads each account on its first order)
  --connections N   wrk connections (default 64)
  --threads N       wrk threads (default 1)
  --accounts N      funded accounts, seeded directly into LMDB for each order-path server (default 10000)
  --quantity Q      quantity per order; the service rate is 0.001 (default 1000)
  --variants LIST   comma-separated, from: bare, durable, no-sync, log, B, B-no-sync, B-log
                    (default bare,durable,no-sync; with --entry also B,B-no-sync)
  --entry PATH      the "B" build's server script (another build's dist/src/main.js)
  --eatmydata PATH  libeatmydata.so for the no-sync variants (default: looked for under /usr/lib*)
  --nice=N          run the benchmark, and so every server and wrk it starts, at this nice value
                    (-20..19; below 0 needs root): on a shared machine, fewer preemptions by other work
  --no-gdb          do not ask gdb which thread is which (the thread pool is then counted in "rest")
  --profile         afterwards, run the durable variant once more under node --cpu-prof and summarise
                    its main thread over the measured run (not counted in the figures; the
                    .cpuprofile is kept in a temp directory, whose path is printed)
  --write-results   write the tables into bench/RESULTS.md (between the bench:cpu markers)
`;

const RESULTS_MD = fileURLToPath(new URL('../../../bench/RESULTS.md', import.meta.url));
const BEGIN = '<!-- bench:cpu:begin (written by npm run bench:cpu -- --write-results) -->';
const END = '<!-- bench:cpu:end -->';
const VARIANT_NAMES = ['bare', 'durable', 'no-sync', 'log', 'B', 'B-no-sync', 'B-log'] as const;
type VariantName = (typeof VARIANT_NAMES)[number];

interface Options {
  settings: RunSettings;
  rounds: number;
  variants: VariantName[];
  entry: string | null;
  eatmydata: string | null;
  nice: number | null;
  profile: boolean;
  writeResults: boolean;
}

function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      rounds: { type: 'string', default: '3' },
      duration: { type: 'string', default: '8' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '64' },
      threads: { type: 'string', default: '1' },
      accounts: { type: 'string', default: '10000' },
      quantity: { type: 'string', default: '1000' },
      variants: { type: 'string' },
      entry: { type: 'string' },
      eatmydata: { type: 'string' },
      nice: { type: 'string' },
      'no-gdb': { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      'write-results': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help === true) return null;
  const load = { connections: positiveInt('connections', values.connections!), threads: positiveInt('threads', values.threads!) };
  if (load.threads > load.connections) throw new Error('--threads must not exceed --connections');
  const entry = values.entry === undefined ? null : resolve(values.entry);
  if (entry !== null && !existsSync(entry)) throw new Error(`--entry: ${entry} does not exist (build that checkout first)`);
  const variants = parseVariants(values.variants ?? (entry === null ? 'bare,durable,no-sync' : 'bare,durable,no-sync,B,B-no-sync'));
  if (entry === null && variants.some((v) => v.startsWith('B'))) throw new Error('the B variants need --entry PATH');
  return {
    settings: {
      load,
      durationS: positiveInt('duration', values.duration!),
      warmupS: positiveInt('warmup', values.warmup!, 0),
      accounts: positiveInt('accounts', values.accounts!),
      quantity: positiveInt('quantity', values.quantity!),
      useGdb: values['no-gdb'] !== true,
    },
    rounds: positiveInt('rounds', values.rounds!),
    variants,
    entry,
    eatmydata: values.eatmydata ?? null,
    nice: values.nice === undefined ? null : niceValue(values.nice),
    profile: values.profile === true,
    writeResults: values['write-results'] === true,
  };
}

function niceValue(raw: string): number {
  if (!/^-?\d+$/.test(raw) || Number(raw) < -20 || Number(raw) > 19) throw new Error(`--nice must be an integer from -20 to 19; got ${JSON.stringify(raw)}`);
  return Number(raw);
}

function parseVariants(raw: string): VariantName[] {
  const names = raw.split(',').map((n) => n.trim());
  for (const n of names) {
    if (!(VARIANT_NAMES as readonly string[]).includes(n)) throw new Error(`--variants: unknown variant ${JSON.stringify(n)}; the variants are ${VARIANT_NAMES.join(', ')}`);
  }
  if (new Set(names).size !== names.length) throw new Error('--variants: a variant is listed twice');
  if (!names.includes('bare')) throw new Error('--variants must include bare: the targets are ratios to it');
  return names as VariantName[];
}

/** The variants to run; the no-sync ones are left out, with a line saying so, when libeatmydata is missing. */
function buildVariants(o: Options): CpuVariant[] {
  const library = o.eatmydata ?? findEatmydata();
  const noSyncOk = library !== null && existsSync(library);
  const out: CpuVariant[] = [];
  for (const name of o.variants) {
    const b = name.startsWith('B');
    const entry = b ? o.entry! : SERVER_MAIN;
    const rest = b ? name.slice(1).replace(/^-/, '') || 'durable' : name;
    if (rest === 'bare') out.push({ name: 'bare uWS', kind: 'bare', entry, syncMode: null, env: {} });
    else if (rest === 'durable') out.push({ name: b ? 'B durable' : 'durable', kind: 'order', entry, syncMode: null, env: {} });
    else if (rest === 'log') out.push({ name: b ? 'B log' : 'log', kind: 'order', entry, syncMode: 'log', env: {} });
    else if (noSyncOk) out.push({ name: b ? 'B no-sync' : 'no-sync', kind: 'order', entry, syncMode: null, env: { LD_PRELOAD: library } });
    else log(`${name}: skipped: libeatmydata is not installed (Debian: apt-get install eatmydata)`);
  }
  return out;
}

function commandLine(argv: string[]): string {
  const args = shellArgs(argv);
  if (process.env['npm_lifecycle_event'] === 'bench:cpu') return `npm run bench:cpu${args === '' ? '' : ` -- ${args}`}`;
  return `node dist/bench/http/cpu.js${args === '' ? '' : ` ${args}`}`;
}

async function runRounds(variants: CpuVariant[], o: Options): Promise<{ runs: CpuRun[]; threads: Map<string, ThreadMap> }> {
  const runs: CpuRun[] = [];
  const threads = new Map<string, ThreadMap>();
  for (let round = 1; round <= o.rounds; round++) {
    for (const v of roundOrder(variants, round)) {
      const measured = await measureVariant(v, round, o.settings);
      runs.push(measured.run);
      threads.set(v.name, measured.threads);
      const r = measured.run;
      log(`round ${round} ${v.name}: ${f0(r.acknowledged / r.loadS)} requests/s, ${((r.serverUs['event loop'] + r.serverUs['thread pool'] + r.serverUs.rest) / Math.max(1, r.acknowledged)).toFixed(1)} µs of server CPU per request`);
    }
  }
  return { runs, threads };
}

/** The durable variant once more under --cpu-prof; its main thread over the measured run, summarised. */
async function profileDurable(variants: CpuVariant[], o: Options): Promise<string> {
  const durable = variants.find((v) => v.name === 'durable');
  if (durable === undefined) return '';
  // Kept afterwards, for a closer look (Chrome DevTools, or profile.js with the window printed here).
  const profDir = mkdtempSync(join(tmpdir(), 'credit-order-cpuprof-'));
  const measured = await measureVariant(durable, 0, { ...o.settings, profDir });
  const file = readdirSync(profDir).find((n) => n.endsWith('.cpuprofile'));
  if (file === undefined) return 'No .cpuprofile was written.';
  const path = join(profDir, file);
  log(`profile: ${path} (measured run: --from ${measured.fromUs} --to ${measured.toUs})`);
  const window = { fromUs: measured.fromUs, toUs: measured.toUs };
  return `${formatProfile(summarizeProfile(path, window, 40))}\n\n${formatConcerns(concernShares(path, window))}`;
}

function ratioColumns(variants: CpuVariant[], runs: CpuRun[]): { label: string; ratios: TargetRatios }[] {
  const figures = (name: string) => (variants.some((v) => v.name === name) ? variantFigures(name, runs) : null);
  const bare = figures('bare uWS')!;
  const columns: { label: string; ratios: TargetRatios }[] = [];
  for (const [label, durable, noSync] of [['A', 'durable', 'no-sync'], ['B', 'B durable', 'B no-sync']] as const) {
    const d = figures(durable);
    if (d !== null) columns.push({ label: label === 'A' ? 'A (this build)' : 'B (--entry)', ratios: targetRatios(bare, d, figures(noSync)) });
  }
  return columns;
}

async function main(): Promise<void> {
  setLogPrefix('bench:cpu');
  const argv = process.argv.slice(2);
  let o: Options | null;
  try {
    o = parseOptions(argv);
  } catch (error) {
    process.stderr.write(`bench:cpu: ${(error as Error).message}\n${HELP}`);
    process.exit(2);
  }
  if (o === null) return void process.stdout.write(HELP);
  const version = wrkVersion();
  if (version === null) return log('wrk is not installed (Debian: apt-get install wrk): skipped.');
  const variants = buildVariants(o);
  // Children inherit the nice value of the thread that starts them: this one.
  if (o.nice !== null) setPriority(0, o.nice);
  const syncBefore = describeSyncLatency(measureSyncLatency(tmpdir()));
  log(syncBefore);
  const { runs, threads } = await runRounds(variants, o);
  const syncAfter = describeSyncLatency(measureSyncLatency(tmpdir()));
  const profile = o.profile ? await profileDurable(variants, o) : '';
  const table = figuresTable(variants.map((v) => variantFigures(v.name, runs)), [...threads.values()].every((t) => t.poolKnown || t.roles.size === 0));
  const orderThreads = threads.get('durable') ?? [...threads.entries()].find(([name]) => name !== 'bare uWS')?.[1];
  const block = [
    `Run of ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}: \`${commandLine(argv)}\``,
    '',
    `Server ${sourceVersion()}${o.entry === null ? '' : `; B = ${o.entry}`}. Node ${process.version}; ${cpuModel()}, ${cpus().length} cores; data directories on ${filesystemOf(tmpdir())}; ` +
      `${version}, ${o.settings.load.threads} thread(s), ${o.settings.load.connections} connections; ${o.settings.warmupS} s warm-up and one ${o.settings.durationS} s run per server; ` +
      `${o.rounds} round(s), the variants' order reversed every other round; ${f0(o.settings.accounts)} accounts seeded directly` +
      `${o.nice === null ? '' : `; servers and wrk at nice ${o.nice}`}.`,
    '',
    `Before the rounds: ${syncBefore}. After: ${syncAfter}.`,
    '',
    table,
    '',
    ratiosTable(ratioColumns(variants, runs)),
    '',
    `Server threads: ${orderThreads === undefined ? 'not read' : describeThreads(orderThreads)}. ` +
      'Requests/s count 2xx answers only; for the order path each is a 201 sent after its commit (synced, but for no-sync), and the ledger (every wallet\'s durable balance) ' +
      'held every one. CPU is each server thread\'s scheduler time (schedstat) over wrk\'s run, divided by the acknowledged requests; wrk\'s is its own CPU time; ' +
      '"other processes" is the rest of the machine\'s busy time in that window, in percent of one core.',
  ].join('\n');
  process.stdout.write(`${block}\n${profile === '' ? '' : `\n${profile}\n`}`);
  if (o.writeResults) writeMarkedBlock(RESULTS_MD, BEGIN, END, 'CPU per order (bench:cpu)', block);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:cpu: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
