/**
 * `npm run bench:webhooks`: the order path with webhooks on against off, in
 * one run: the same build, alternated (off, on, off, on, …), a fresh server
 * each time, several short runs of durable orders at 64 connections each.
 * "On": every load account has an endpoint (order.updated) at a local
 * receiver, so every order also writes an outbox row in its own commit and
 * is then delivered, signed, and its row removed in a commit of its own.
 * Prints both means, on ÷ off with its standard error (target ≥ 0.90) and
 * the disk's sync latency.
 */
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { interleave, meanSe, ratioSe, variant } from './interleave.js';
import { SERVER_MAIN } from './server-process.js';
import { describeSyncLatency, measureSyncLatency } from './sync-latency.js';
import { f0, f2, log, positiveInt, setLogPrefix } from './util.js';

const HELP = `Usage: node dist/bench/http/webhooks-on-off.js [options]

  --rounds N        servers per variant, alternated (default 3)
  --runs N          measured runs per server (default 2)
  --duration S      seconds per run (default 6)
  --warmup S        seconds of warm-up per server (default 2)
  --accounts N      funded accounts, each with an endpoint when on (default 2000)
`;

async function main(): Promise<void> {
  setLogPrefix('bench:webhooks');
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      rounds: { type: 'string', default: '3' },
      runs: { type: 'string', default: '2' },
      duration: { type: 'string', default: '6' },
      warmup: { type: 'string', default: '2' },
      accounts: { type: 'string', default: '2000' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help === true) {
    process.stdout.write(HELP);
    return;
  }
  const rounds = positiveInt('rounds', values.rounds!);
  const args = [
    '--seed', 'direct',
    '--runs', String(positiveInt('runs', values.runs!)),
    '--duration', String(positiveInt('duration', values.duration!)),
    '--warmup', String(positiveInt('warmup', values.warmup!, 0)),
    '--accounts', String(positiveInt('accounts', values.accounts!)),
  ];
  // Both servers may post to the loopback receiver; only "on" has endpoints.
  const env = { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' };
  const variants = [variant('webhooks off', SERVER_MAIN, env, []), variant('webhooks on', SERVER_MAIN, env, ['--webhooks'])];
  const syncLatency = describeSyncLatency(measureSyncLatency(tmpdir()));
  log(syncLatency);
  await interleave(variants, args, rounds);
  const lines = ['| variant | runs | durable orders/s, mean ± SE | min – max | p99 ms (mean) |', '|---|---:|---:|---:|---:|'];
  for (const v of variants) {
    const o = meanSe(v.orders);
    lines.push(`| ${v.name} | ${v.orders.length} | ${f0(o.mean)} ± ${f0(o.se)} | ${f0(Math.min(...v.orders))} – ${f0(Math.max(...v.orders))} | ${f2(meanSe(v.p99).mean)} |`);
  }
  const [off, on] = [meanSe(variants[0]!.orders), meanSe(variants[1]!.orders)];
  process.stdout.write(`${lines.join('\n')}\n\non ÷ off = ${(on.mean / off.mean).toFixed(2)} ± ${ratioSe(on, off).toFixed(2)} (target ≥ 0.90)\n${syncLatency}.\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:webhooks: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
