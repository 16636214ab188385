/**
 * `node dist/bench/http/ab.js`: an interleaved A/B of the order path, for
 * changes smaller than one run's noise.
 *
 * On this shared two-core VM one bench:http run differs from the next by
 * ±5–10% (mostly the disk's sync latency, which drifts over minutes), so a
 * one-run comparison cannot see a 3% effect. This alternates the two
 * variants, a fresh server each time (A, B, B, A, A, B, …), gives each server
 * several short runs, and reports the mean ± standard error per variant and
 * the difference with its standard error. A variant is a server script
 * (`--a-entry`, e.g. an instrumented or older copy of dist) and/or extra
 * environment for the bench and its server (`--a-env K=V`, repeatable).
 */
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { envPairs, interleave, interleaveArgs, interleaveOptions, meanSe, variant } from './interleave.js';
import { SERVER_MAIN } from './server-process.js';
import { describeSyncLatency, measureSyncLatency } from './sync-latency.js';
import { f0, f2, log, setLogPrefix } from './util.js';

const HELP = `Usage: node dist/bench/http/ab.js [options]

  --a-entry PATH    server script of variant A (default dist/src/main.js)
  --b-entry PATH    server script of variant B (default dist/src/main.js)
  --a-env K=V       environment for variant A's bench and server (repeatable)
  --b-env K=V       the same for variant B
  --rounds N        servers per variant, alternated A, B, B, A, A, B, … (default 3)
  --runs N          measured runs per server (default 3)
  --duration S      seconds per run (default 6)
  --warmup S        seconds of warm-up per server (default 2)
  --accounts N      funded accounts (default 10000)
`;

async function main(): Promise<void> {
  setLogPrefix('bench:ab');
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      ...interleaveOptions('3'),
      'a-entry': { type: 'string' },
      'b-entry': { type: 'string' },
      'a-env': { type: 'string', multiple: true },
      'b-env': { type: 'string', multiple: true },
    },
  });
  if (values.help === true) {
    process.stdout.write(HELP);
    return;
  }
  const { rounds, args } = interleaveArgs(values);
  const variants = [
    variant('A', values['a-entry'] ?? SERVER_MAIN, envPairs(values['a-env'], '--a-env')),
    variant('B', values['b-entry'] ?? SERVER_MAIN, envPairs(values['b-env'], '--b-env')),
  ];
  // Measured before any server runs (and outside either variant's environment).
  const syncLatency = describeSyncLatency(measureSyncLatency(tmpdir()));
  log(syncLatency);
  await interleave(variants, args, rounds);
  const lines = ['| variant | server | environment | runs | durable orders/s, mean ± SE | min – max | p99 ms (mean) | ms per commit (mean) |', '|---|---|---|---:|---:|---:|---:|---:|'];
  for (const v of variants) {
    const o = meanSe(v.orders);
    const env = Object.entries(v.env).map(([k, x]) => `${k}=${x}`).join(' ') || '—';
    lines.push(
      `| ${v.name} | ${v.entry === SERVER_MAIN ? 'dist/src/main.js' : v.entry} | ${env} | ${v.orders.length} | ${f0(o.mean)} ± ${f0(o.se)} | ` +
        `${f0(Math.min(...v.orders))} – ${f0(Math.max(...v.orders))} | ${f2(meanSe(v.p99).mean)} | ${f2(meanSe(v.commitMs).mean)} |`,
    );
  }
  const [a, b] = [meanSe(variants[0]!.orders), meanSe(variants[1]!.orders)];
  const diff = a.mean - b.mean;
  const se = Math.sqrt(a.se ** 2 + b.se ** 2);
  const pct = (100 * diff) / b.mean;
  const verdict =
    variants.some((v) => v.orders.length < 2)
      ? `A − B = ${f0(diff)} orders/s (${pct.toFixed(1)}%): too few runs for a verdict (at least 2 per variant).`
      : Math.abs(diff) < 2 * se
      ? `A − B = ${f0(diff)} ± ${f0(se)} orders/s (${pct.toFixed(1)}%): within two standard errors, no measurable difference.`
      : `A − B = ${f0(diff)} ± ${f0(se)} orders/s (${pct.toFixed(1)}%): A is ${diff > 0 ? 'faster' : 'slower'} (beyond two standard errors).`;
  process.stdout.write(`${lines.join('\n')}\n\n${verdict}\n${syncLatency}.\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:ab: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
