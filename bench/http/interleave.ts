/**
 * Interleaved runs of two variants of the order path (A, B, then B, A, and so on), each
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
import { diskKbPerCommit, msPerCommit, type RunReport } from './measure.js';
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
  /** Entries (orders) per commit. */
  perCommit: number[];
  /** Percent of one core used by every process but the server and the load generator (a PostgreSQL beside the server, for one). */
  otherCpu: number[];
  /** Runs before each of this variant's servers starts (e.g. a fresh PostgreSQL database named in `env`). */
  before?: () => Promise<void>;
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
  return { name, entry, env, args, orders: [], serverOrders: [], p99: [], commitMs: [], diskKb: [], perCommit: [], otherCpu: [] };
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
      for (const v of roundOrder(variants, round)) {
        await v.before?.();
        const reports = await runServer(v, orderArgs, join(dir, `${v.name}-${round}.json`));
        for (const r of reports) {
          v.orders.push(r.durableOrdersPerS);
          v.p99.push(r.orderLatency.p99);
          const ms = msPerCommit(r);
          if (ms !== null) v.commitMs.push(ms);
          const kb = diskKbPerCommit(r);
          if (kb !== null) v.diskKb.push(kb);
          v.perCommit.push(r.batch.perCommit);
          v.otherCpu.push(r.otherPct);
        }
        if (reports.length > 0) v.serverOrders.push(meanSe(reports.map((r) => r.durableOrdersPerS)).mean);
        log(`round ${round} ${v.name}: ${reports.map((r) => f0(r.durableOrdersPerS)).join(', ')} durable orders/s`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The variants in the order round `round` (from 1) runs them: as given in
 * odd rounds, reversed in even ones (A B C, C B A, A B C, …). Each server
 * starts right after another one's data directory was deleted and its
 * writes are still being flushed, and the first server of a round after a
 * pause of its own: in a fixed order one variant would always take the same
 * place. Alternating puts each variant in every place equally often, so a
 * place's effect cancels in pairs of rounds.
 */
export function roundOrder<T>(variants: readonly T[], round: number): T[] {
  return round % 2 === 1 ? [...variants] : [...variants].reverse();
}

export function meanSe(values: number[]): MeanSe {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  if (values.length < 2) return { mean, se: 0 };
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1);
  return { mean, se: Math.sqrt(variance / values.length) };
}

/**
 * `other ÷ base` of durable orders/s, three ways: with every run counted,
 * with each server counted once, and paired by round. The two runs of one
 * server are alike (a server that starts slow stays slow), so the first
 * standard error is too small; the second is honest but takes the drift
 * between rounds as noise; the third leaves that drift out, and is the
 * figure of record.
 */
export function describeRatio(name: string, other: Pick<Variant, 'orders' | 'serverOrders'>, base: Pick<Variant, 'orders' | 'serverOrders'>): string {
  const [o, b] = [meanSe(other.orders), meanSe(base.orders)];
  const [os, bs] = [meanSe(other.serverOrders), meanSe(base.serverOrders)];
  const paired = pairedRatio(other.serverOrders, base.serverOrders);
  return (
    `${name} = ${(o.mean / b.mean).toFixed(2)} ± ${ratioSe(o, b).toFixed(2)} counting every run; ` +
    `${(os.mean / bs.mean).toFixed(3)} ± ${ratioSe(os, bs).toFixed(3)} counting each server once (${base.serverOrders.length} and ${other.serverOrders.length} servers); ` +
    (paired === null ? 'not paired (fewer than two rounds)' : `${describePaired(paired)} paired by round`)
  );
}

/** A paired ratio as the tables print it: `0.897 ± 0.016 (24 rounds)`. */
export function describePaired(p: { ratio: number; se: number; rounds: number }): string {
  return `${p.ratio.toFixed(3)} ± ${p.se.toFixed(3)} (${p.rounds} rounds)`;
}

/**
 * `other ÷ base` paired by round: the geometric mean of each round's ratio
 * of the two servers' orders/s, with its standard error (of the mean log
 * ratio, carried back). The servers of one round run within a minute or
 * so of each other, the first and the last round tens of minutes apart,
 * and this VM's disk and neighbours drift over minutes: the ratio within a
 * round leaves that drift out, which the ratio of the two means does not
 * (its error takes all of it). A variant's i-th server ran in round i
 * (`interleave` records one per variant per round). Null with fewer than
 * two complete rounds.
 */
export function pairedRatio(other: readonly number[], base: readonly number[]): { ratio: number; se: number; rounds: number } | null {
  const n = Math.min(other.length, base.length);
  if (n < 2) return null;
  const logs = Array.from({ length: n }, (_, i) => Math.log(other[i]! / base[i]!));
  const { mean, se } = meanSe(logs);
  const ratio = Math.exp(mean);
  return { ratio, se: ratio * se, rounds: n };
}

/** The standard error of a ratio of two independent means (first-order propagation). */
export function ratioSe(a: MeanSe, b: MeanSe): number {
  const ratio = a.mean / b.mean;
  return Math.abs(ratio) * Math.sqrt((a.se / a.mean) ** 2 + (b.se / b.mean) ** 2);
}
