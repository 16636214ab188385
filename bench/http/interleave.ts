/**
 * Interleaved runs of two variants of the order path (A, B, A, B, …), each
 * a fresh server under `bench/http/order.js`, for comparisons smaller than
 * one run's noise: on this shared two-core VM one run differs from the next
 * by ±5–10% (mostly the disk's sync latency, which drifts over minutes), so
 * only alternating the variants and averaging several runs of each can see
 * a difference of a few percent. Used by ab.ts (any two server scripts or
 * environments) and durability-cost.ts (the same build with and without
 * its syncs).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunReport } from './measure.js';
import { diskKbPerCommit, msPerCommit } from './measure.js';
import { f0, log, positiveInt } from './util.js';

export interface Variant {
  name: string;
  /** The server script (dist/src/main.js or an instrumented copy). */
  entry: string;
  /** Extra environment for this variant's bench process and its server. */
  env: Record<string, string>;
  /** Extra order.js options for this variant (e.g. its scenario). */
  args: string[];
  orders: number[];
  /** Each server's mean durable orders/s over its measured runs (runs of one server are alike, so this is the independent sample). */
  serverOrders: number[];
  p99: number[];
  commitMs: number[];
  /** Disk KB written per commit (the data directory's device, every process). */
  diskKb: number[];
}

export interface MeanSe {
  mean: number;
  /** Standard error of the mean (0 with fewer than two values). */
  se: number;
}

const ORDER_JS = fileURLToPath(new URL('./order.js', import.meta.url));

/** The options every interleaved bench takes (parseArgs shape), `runs` and `accounts` defaulting as the bench prefers. */
export function interleaveOptions(runsDefault: string, accountsDefault = '10000') {
  return {
    rounds: { type: 'string', default: '3' },
    runs: { type: 'string', default: runsDefault },
    duration: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '2' },
    accounts: { type: 'string', default: accountsDefault },
    help: { type: 'boolean', default: false },
  } as const;
}

/** The rounds and the order.js arguments from parsed `interleaveOptions`, each checked. */
export function interleaveArgs(values: { rounds: string; runs: string; duration: string; warmup: string; accounts: string }): { rounds: number; args: string[] } {
  return {
    rounds: positiveInt('rounds', values.rounds),
    args: [
      '--seed', 'direct',
      '--runs', String(positiveInt('runs', values.runs)),
      '--duration', String(positiveInt('duration', values.duration)),
      '--warmup', String(positiveInt('warmup', values.warmup, 0)),
      '--accounts', String(positiveInt('accounts', values.accounts)),
    ],
  };
}

export function variant(name: string, entry: string, env: Record<string, string> = {}, args: string[] = []): Variant {
  return { name, entry, env, args, orders: [], serverOrders: [], p99: [], commitMs: [], diskKb: [] };
}

/** `K=V` pairs from a repeatable command-line option. */
export function envPairs(list: string[] | undefined, flag: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of list ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`${flag} wants KEY=VALUE; got ${JSON.stringify(pair)}`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

function runServer(v: Variant, args: string[], jsonFile: string): Promise<RunReport[]> {
  return new Promise((resolve, reject) => {
    // The variant's own options come last, so that one of them (a
    // `--second-arg=--server-entry=…`) wins over the default entry: bench:http
    // takes the last of a repeated option, and with the entry last every
    // such comparison silently ran the default build for both variants.
    const child = spawn(process.execPath, [ORDER_JS, ...args, '--server-entry', v.entry, ...v.args, '--json', jsonFile], {
      env: { ...process.env, ...v.env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`bench:http for variant ${v.name} exited with ${code}`));
      resolve((JSON.parse(readFileSync(jsonFile, 'utf8')) as { runs: RunReport[] }).runs);
    });
  });
}

/**
 * Runs every variant `rounds` times, alternating, each time a fresh server
 * given `orderArgs` (order.js options), and records each measured run's
 * durable orders/s, order p99 and ms per commit into its variant.
 */
export async function interleave(variants: Variant[], orderArgs: string[], rounds: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'credit-order-ab-'));
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const v of variants) {
        const reports = await runServer(v, orderArgs, join(dir, `${v.name}-${round}.json`));
        for (const r of reports) {
          v.orders.push(r.durableOrdersPerS);
          v.p99.push(r.orderLatency.p99);
          const ms = msPerCommit(r);
          if (ms !== null) v.commitMs.push(ms);
          const kb = diskKbPerCommit(r);
          if (kb !== null) v.diskKb.push(kb);
        }
        if (reports.length > 0) v.serverOrders.push(meanSe(reports.map((r) => r.durableOrdersPerS)).mean);
        log(`round ${round} ${v.name}: ${reports.map((r) => f0(r.durableOrdersPerS)).join(', ')} durable orders/s`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function meanSe(values: number[]): MeanSe {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  if (values.length < 2) return { mean, se: 0 };
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1);
  return { mean, se: Math.sqrt(variance / values.length) };
}

/**
 * `other ÷ base` of durable orders/s, twice: with every run counted (the
 * figure of earlier sessions), and with each server counted once. The two
 * runs of one server are alike (a server that starts slow stays slow), so
 * the first standard error is too small; the second is the honest one.
 */
export function describeRatio(name: string, other: Pick<Variant, 'orders' | 'serverOrders'>, base: Pick<Variant, 'orders' | 'serverOrders'>): string {
  const [o, b] = [meanSe(other.orders), meanSe(base.orders)];
  const [os, bs] = [meanSe(other.serverOrders), meanSe(base.serverOrders)];
  return (
    `${name} = ${(o.mean / b.mean).toFixed(2)} ± ${ratioSe(o, b).toFixed(2)} counting every run; ` +
    `${(os.mean / bs.mean).toFixed(3)} ± ${ratioSe(os, bs).toFixed(3)} counting each server once (${base.serverOrders.length} and ${other.serverOrders.length} servers)`
  );
}

/** The standard error of a ratio of two independent means (first-order propagation). */
export function ratioSe(a: MeanSe, b: MeanSe): number {
  const ratio = a.mean / b.mean;
  return Math.abs(ratio) * Math.sqrt((a.se / a.mean) ** 2 + (b.se / b.mean) ** 2);
}
