/**
 * `node dist/bench/http/ab.js`: an interleaved A/B of the order path, for
 * changes smaller than one run's noise.
 *
 * On this shared two-core VM one bench:http run differs from the next by
 * ±5–10% (mostly the disk's sync latency, which drifts over minutes), so a
 * one-run comparison cannot see a 3% effect. This alternates the two
 * variants, a fresh server each time (A, B, A, B, …), gives each server
 * several short runs, and reports the mean ± standard error per variant and
 * the difference with its standard error. A variant is a server script
 * (`--a-entry`, e.g. an instrumented or older copy of dist) and/or extra
 * environment for the bench and its server (`--a-env K=V`, repeatable).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { RunReport } from './measure.js';
import { msPerCommit } from './measure.js';
import { SERVER_MAIN } from './server-process.js';
import { f0, f2, log, positiveInt, setLogPrefix } from './util.js';

const HELP = `Usage: node dist/bench/http/ab.js [options]

  --a-entry PATH    server script of variant A (default dist/src/main.js)
  --b-entry PATH    server script of variant B (default dist/src/main.js)
  --a-env K=V       environment for variant A's bench and server (repeatable)
  --b-env K=V       the same for variant B
  --rounds N        servers per variant, alternated A, B, A, B, … (default 3)
  --runs N          measured runs per server (default 3)
  --duration S      seconds per run (default 6)
  --warmup S        seconds of warm-up per server (default 2)
  --accounts N      funded accounts (default 10000)
`;

interface Variant {
  name: 'A' | 'B';
  entry: string;
  env: Record<string, string>;
  orders: number[];
  p99: number[];
  commitMs: number[];
}

const ORDER_JS = fileURLToPath(new URL('./order.js', import.meta.url));

function envPairs(list: string[] | undefined, flag: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of list ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`${flag} wants KEY=VALUE; got ${JSON.stringify(pair)}`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

function runServer(variant: Variant, args: string[], jsonFile: string): Promise<RunReport[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ORDER_JS, ...args, '--server-entry', variant.entry, '--json', jsonFile], {
      env: { ...process.env, ...variant.env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`bench:http for variant ${variant.name} exited with ${code}`));
      resolve((JSON.parse(readFileSync(jsonFile, 'utf8')) as { runs: RunReport[] }).runs);
    });
  });
}

function stats(values: number[]): { mean: number; se: number } {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  if (values.length < 2) return { mean, se: 0 };
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1);
  return { mean, se: Math.sqrt(variance / values.length) };
}

async function main(): Promise<void> {
  setLogPrefix('bench:ab');
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      'a-entry': { type: 'string' },
      'b-entry': { type: 'string' },
      'a-env': { type: 'string', multiple: true },
      'b-env': { type: 'string', multiple: true },
      rounds: { type: 'string', default: '3' },
      runs: { type: 'string', default: '3' },
      duration: { type: 'string', default: '6' },
      warmup: { type: 'string', default: '2' },
      accounts: { type: 'string', default: '10000' },
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
  const variants: Variant[] = [
    { name: 'A', entry: values['a-entry'] ?? SERVER_MAIN, env: envPairs(values['a-env'], '--a-env'), orders: [], p99: [], commitMs: [] },
    { name: 'B', entry: values['b-entry'] ?? SERVER_MAIN, env: envPairs(values['b-env'], '--b-env'), orders: [], p99: [], commitMs: [] },
  ];
  const dir = mkdtempSync(join(tmpdir(), 'credit-order-ab-'));
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const v of variants) {
        const reports = await runServer(v, args, join(dir, `${v.name}-${round}.json`));
        for (const r of reports) {
          v.orders.push(r.durableOrdersPerS);
          v.p99.push(r.orderLatency.p99);
          const ms = msPerCommit(r);
          if (ms !== null) v.commitMs.push(ms);
        }
        log(`round ${round} ${v.name}: ${reports.map((r) => f0(r.durableOrdersPerS)).join(', ')} durable orders/s`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const lines = ['| variant | server | environment | runs | durable orders/s, mean ± SE | min – max | p99 ms (mean) | ms per commit (mean) |', '|---|---|---|---:|---:|---:|---:|---:|'];
  for (const v of variants) {
    const o = stats(v.orders);
    const env = Object.entries(v.env).map(([k, x]) => `${k}=${x}`).join(' ') || '—';
    lines.push(
      `| ${v.name} | ${v.entry === SERVER_MAIN ? 'dist/src/main.js' : v.entry} | ${env} | ${v.orders.length} | ${f0(o.mean)} ± ${f0(o.se)} | ` +
        `${f0(Math.min(...v.orders))} – ${f0(Math.max(...v.orders))} | ${f2(stats(v.p99).mean)} | ${f2(stats(v.commitMs).mean)} |`,
    );
  }
  const [a, b] = variants.map((v) => stats(v.orders)) as [{ mean: number; se: number }, { mean: number; se: number }];
  const diff = a.mean - b.mean;
  const se = Math.sqrt(a.se ** 2 + b.se ** 2);
  const pct = (100 * diff) / b.mean;
  const verdict =
    variants.some((v) => v.orders.length < 2)
      ? `A − B = ${f0(diff)} orders/s (${pct.toFixed(1)}%): too few runs for a verdict (at least 2 per variant).`
      : Math.abs(diff) < 2 * se
      ? `A − B = ${f0(diff)} ± ${f0(se)} orders/s (${pct.toFixed(1)}%): within two standard errors, no measurable difference.`
      : `A − B = ${f0(diff)} ± ${f0(se)} orders/s (${pct.toFixed(1)}%): A is ${diff > 0 ? 'faster' : 'slower'} (beyond two standard errors).`;
  process.stdout.write(`${lines.join('\n')}\n\n${verdict}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:ab: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
