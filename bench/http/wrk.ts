/**
 * `npm run bench:wrk`: the order path driven by wrk, a load generator
 * written in C, instead of autocannon. Same data set (accounts seeded
 * directly), same server, same durable-orders ledger check as bench:http.
 *
 * Why: on this two-core machine the load generator shares the cores with
 * the server and sits inside every round trip. autocannon spends about
 * 12 µs of JavaScript per request and parses every response in JavaScript;
 * wrk spends a fraction of that. Running both separates what the server can
 * do from what the Node load generator costs, and wrk is what the issue's
 * prototype figure (about 32,000 orders/s) was measured with.
 *
 * Optional: wrk is a system package (Debian: `apt-get install wrk`), not an
 * npm one; without it this prints how to get it and exits 0. bench:http
 * (autocannon) stays the benchmark of record.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { assertLedger, balances, ledgerCheck } from './ledger.js';
import { cpuModel } from './procstat.js';
import { RATE_MICRO, seedDirect } from './seed.js';
import { startServer, stopServer, killServer, type ServerProcess } from './server-process.js';
import { describeSyncLatency, measureSyncLatency } from './sync-latency.js';
import { runWrk, wrkScript, wrkVersion, type WrkSummary } from './wrk-driver.js';
import { f0, f2, filesystemOf, log, positiveInt, setLogPrefix, shellArgs, sourceVersion, writeMarkedBlock } from './util.js';

const HELP = `Usage: npm run bench:wrk -- [options]

  --accounts N      funded accounts, seeded directly into LMDB (default 10000)
  --connections N   concurrent connections (default 64)
  --threads N       wrk threads (default 1)
  --duration S      seconds per measured run (default 10)
  --warmup S        seconds of unmeasured load first (default 3; 0 skips)
  --runs N          measured runs against the same server (default 2)
  --quantity Q      quantity per order; the service rate is 0.001 (default 1000)
  --write-results   write the figures into bench/RESULTS.md (between the bench:wrk markers)
`;

interface Options {
  accounts: number;
  connections: number;
  threads: number;
  duration: number;
  warmup: number;
  runs: number;
  quantity: number;
  writeResults: boolean;
}

interface RunFigures {
  label: string;
  summary: WrkSummary;
  ok2xx: number;
  ledgerOrders: number;
}

const RESULTS_MD = fileURLToPath(new URL('../../../bench/RESULTS.md', import.meta.url));
const BEGIN = '<!-- bench:wrk:begin (written by npm run bench:wrk -- --write-results) -->';
const END = '<!-- bench:wrk:end -->';

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      accounts: { type: 'string', default: '10000' },
      connections: { type: 'string', default: '64' },
      threads: { type: 'string', default: '1' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '3' },
      runs: { type: 'string', default: '2' },
      quantity: { type: 'string', default: '1000' },
      'write-results': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help === true) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const options: Options = {
    accounts: positiveInt('accounts', values.accounts!),
    connections: positiveInt('connections', values.connections!),
    threads: positiveInt('threads', values.threads!),
    duration: positiveInt('duration', values.duration!),
    warmup: positiveInt('warmup', values.warmup!, 0),
    runs: positiveInt('runs', values.runs!),
    quantity: positiveInt('quantity', values.quantity!),
    writeResults: values['write-results'] === true,
  };
  if (options.threads > options.connections) throw new Error('--threads must not exceed --connections');
  return options;
}

function table(runs: RunFigures[]): string {
  const lines = [
    '| run | durable orders/s | 201s / ledger orders | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | non-2xx / socket errors / timeouts |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of runs) {
    const s = r.summary;
    const l = s.latency;
    const errors = s.connectErrors + s.readErrors + s.writeErrors;
    lines.push(
      `| ${r.label} | ${f0(r.ok2xx / (s.durationUs / 1e6))} | ${f0(r.ok2xx)} / ${f0(r.ledgerOrders)} | ${f2(l.p50)} | ${f2(l.p90)} | ${f2(l.p99)} | ${f2(l.p999)} | ${f2(l.max)} | ${f0(s.non2xx)} / ${f0(errors)} / ${f0(s.timeouts)} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  setLogPrefix('bench:wrk');
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench:wrk: ${(error as Error).message}\n${HELP}`);
    process.exit(2);
  }
  const version = wrkVersion();
  if (version === null) {
    log('wrk is not installed (Debian: apt-get install wrk): skipped. bench:http measures the same path with autocannon.');
    return;
  }
  const args = shellArgs(process.argv.slice(2));
  const command =
    process.env['npm_lifecycle_event'] === 'bench:wrk' ? `npm run bench:wrk${args === '' ? '' : ` -- ${args}`}` : `node dist/bench/http/wrk.js${args === '' ? '' : ` ${args}`}`;
  // Measured before the server starts, on the file system its data goes to.
  const syncLatency = describeSyncLatency(measureSyncLatency(tmpdir()));
  log(syncLatency);
  const dataDir = mkdtempSync(join(tmpdir(), 'credit-order-wrk-'));
  const script = `${dataDir}-orders.lua`;
  let server: ServerProcess | null = null;
  try {
    const seeded = await seedDirect(dataDir, options.accounts);
    // The script holds every account's secret: readable by its owner only.
    writeFileSync(script, wrkScript(seeded, options.quantity), { mode: 0o600 });
    server = await startServer(dataDir, {});
    log(`server pid ${server.pid} ready; ${f0(seeded.count)} accounts; ${version}; ${options.connections} connections, ${options.threads} thread(s)`);
    const chargeMicro = BigInt(options.quantity) * RATE_MICRO;
    if (options.warmup > 0) {
      const warm = await runWrk(options, server.baseUrl, script, options.warmup);
      if (warm.requests - warm.non2xx === 0) throw new Error('no order succeeded during the warm-up');
    }
    const runs: RunFigures[] = [];
    for (let i = 1; i <= options.runs; i++) {
      const before = await balances(server);
      const summary = await runWrk(options, server.baseUrl, script, options.duration);
      const after = await balances(server);
      const ok2xx = summary.requests - summary.non2xx;
      const ledger = ledgerCheck(before, after, chargeMicro);
      assertLedger(ledger, ok2xx);
      runs.push({ label: `run ${i}`, summary, ok2xx, ledgerOrders: ledger.durableOrders });
      log(`run ${i}: ${f0(ok2xx / (summary.durationUs / 1e6))} durable orders/s, p99 ${f2(summary.latency.p99)} ms`);
    }
    const stopped = await stopServer(server);
    server = null;
    const block = [
      `Run of ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}: \`${command}\``,
      '',
      `Server ${sourceVersion()}. Node ${process.version}; ${cpuModel()}, ${cpus().length} cores; data directory on ${filesystemOf(tmpdir())}; ${syncLatency}; ` +
        `${f0(options.accounts)} accounts (seeded directly); ${version}, ${options.threads} thread(s), ${options.connections} connections; ` +
        `${options.warmup} s warm-up, ${options.duration} s per run. SIGTERM: exit code ${String(stopped.code)}.`,
      '',
      table(runs),
      '',
      'Durable orders/s counts the 2xx answers (every one a 201 sent after its commit was synced); the ledger column is the total debited across all wallets ' +
        '(admin API, durable state only) divided by the charge of one order, and must cover every 201. Latencies are wrk\'s (µs resolution).',
    ].join('\n');
    process.stdout.write(`${block}\n`);
    if (options.writeResults) writeMarkedBlock(RESULTS_MD, BEGIN, END, 'Order path driven by wrk (bench:wrk)', block);
  } finally {
    if (server !== null) await killServer(server);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(script, { force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:wrk: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
