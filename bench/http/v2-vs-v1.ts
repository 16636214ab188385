/**
 * `npm run bench:v2`: API v2's add against the v1 order path, in one run:
 * the same build, alternated (v1, v2, v1, v2, …), a fresh server each time,
 * each server given several short runs of durable orders at 64 connections
 * (the v2 scenario sends `POST /api/v2` form-encoded, as PHP's curl does;
 * the ledger cross-check counts only real orders, so an error answered 200
 * cannot pass for one). Prints both means, v2 ÷ v1 with its standard error,
 * and the disk's sync latency.
 */
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { interleave, interleaveArgs, interleaveOptions, meanSe, ratioSe, variant } from './interleave.js';
import { SERVER_MAIN } from './server-process.js';
import { describeSyncLatency, measureSyncLatency } from './sync-latency.js';
import { f0, f2, log, setLogPrefix } from './util.js';

const HELP = `Usage: node dist/bench/http/v2-vs-v1.js [options]

  --rounds N        servers per API, alternated (default 3)
  --runs N          measured runs per server (default 2)
  --duration S      seconds per run (default 6)
  --warmup S        seconds of warm-up per server (default 2)
  --accounts N      funded accounts (default 10000)
`;

async function main(): Promise<void> {
  setLogPrefix('bench:v2');
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: interleaveOptions('2'),
  });
  if (values.help === true) {
    process.stdout.write(HELP);
    return;
  }
  const { rounds, args } = interleaveArgs(values);
  const variants = [variant('v1', SERVER_MAIN, {}, ['--scenario', 'order']), variant('v2', SERVER_MAIN, {}, ['--scenario', 'v2'])];
  const syncLatency = describeSyncLatency(measureSyncLatency(tmpdir()));
  log(syncLatency);
  await interleave(variants, args, rounds);
  const lines = ['| API | runs | durable orders/s, mean ± SE | min – max | p99 ms (mean) |', '|---|---:|---:|---:|---:|'];
  for (const v of variants) {
    const o = meanSe(v.orders);
    lines.push(`| ${v.name} | ${v.orders.length} | ${f0(o.mean)} ± ${f0(o.se)} | ${f0(Math.min(...v.orders))} – ${f0(Math.max(...v.orders))} | ${f2(meanSe(v.p99).mean)} |`);
  }
  const [v1, v2] = [meanSe(variants[0]!.orders), meanSe(variants[1]!.orders)];
  const ratio = v2.mean / v1.mean;
  process.stdout.write(`${lines.join('\n')}\n\nv2 ÷ v1 = ${ratio.toFixed(2)} ± ${ratioSe(v2, v1).toFixed(2)} (target ≥ 0.90)\n${syncLatency}.\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:v2: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
