/**
 * The shape shared by the one-build comparisons (`bench:v2`, `bench:webhooks`, `bench:replication`):
 * the common options, two variants of the order path alternated on fresh
 * servers (interleave.ts), a table of both and the ratio of the second to
 * the first with its standard error, beside the disk's sync latency.
 */
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { describeRatio, interleave, interleaveArgs, interleaveOptions, meanSe, type Variant } from './interleave.js';
import { describeSyncLatency, measureSyncLatency } from './sync-latency.js';
import { f0, f1, f2, log, setLogPrefix } from './util.js';

export interface Comparison {
  /** The log prefix, e.g. `bench:v2`. */
  name: string;
  /** The script, for the usage line. */
  script: string;
  /** What the variants are ("API", "variant"), the table's first header. */
  what: string;
  /** Text of --accounts in the usage. */
  accountsHelp: string;
  defaultAccounts: string;
  /** The baseline first, then the variant measured against it. */
  variants: [Variant, Variant];
  /** How the ratio is named, e.g. "v2 ÷ v1". */
  ratioName: string;
  /** The ratio the comparison aims at (default 0.90). */
  target?: number;
}

export async function compareTwo(c: Comparison): Promise<void> {
  setLogPrefix(c.name);
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      ...interleaveOptions('2', c.defaultAccounts),
      'second-arg': { type: 'string', multiple: true },
    },
  });
  if (values.help === true) {
    process.stdout.write(`Usage: node ${c.script} [options]

  --rounds N        servers per variant, alternated (default 3)
  --runs N          measured runs per server (default 2)
  --duration S      seconds per run (default 6)
  --warmup S        seconds of warm-up per server (default 2)
  --accounts N      ${c.accountsHelp} (default ${c.defaultAccounts})
  --second-arg A    one more bench:http option for the second variant only (repeatable), e.g. --second-arg=--webhook-accounts=50
`);
    return;
  }
  const { rounds, args } = interleaveArgs(values);
  c.variants[1].args.push(...(values['second-arg'] ?? []));
  const syncLatency = describeSyncLatency(measureSyncLatency(tmpdir()));
  log(syncLatency);
  await interleave(c.variants, args, rounds);
  const lines = [`| ${c.what} | runs | durable orders/s, mean ± SE | min – max | p99 ms (mean) | ms per commit (mean) | orders per commit (mean) | disk KB per commit (mean) | other processes' CPU (mean) |`, '|---|---:|---:|---:|---:|---:|---:|---:|---:|'];
  for (const v of c.variants) {
    const o = meanSe(v.orders);
    lines.push(`| ${v.name} | ${v.orders.length} | ${f0(o.mean)} ± ${f0(o.se)} | ${f0(Math.min(...v.orders))} – ${f0(Math.max(...v.orders))} | ${f2(meanSe(v.p99).mean)} | ${f2(meanSe(v.commitMs).mean)} | ${f1(meanSe(v.perCommit).mean)} | ${v.diskKb.length === 0 ? 'n/a' : f1(meanSe(v.diskKb).mean)} | ${f0(meanSe(v.otherCpu).mean)}% |`);
  }
  process.stdout.write(`${lines.join('\n')}\n\n${describeRatio(c.ratioName, c.variants[1], c.variants[0])} (target ≥ ${(c.target ?? 0.9).toFixed(2)})\n${syncLatency}.\n`);
}

/** Runs a comparison as a script's main, exiting 1 with the stack on failure. */
export function runComparison(c: Comparison): void {
  compareTwo(c).catch((error: unknown) => {
    process.stderr.write(`${c.name}: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
