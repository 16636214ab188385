/**
 * `node dist/bench/http/variants.js`: several variants of the order path
 * interleaved in one run (V1, V2, …, Vn, then Vn, …, V1, and so on), each against the
 * first. `ab.js` compares two; taking a cost apart needs more (off, the
 * build under test and several copies of it, each patched in one place, side
 * by side), and every variant measured in the same rounds sees the same
 * drift of the disk and of the shared cores.
 *
 * A variant is a name, a server script (`entry`, default dist/src/main.js:
 * point it at a patched copy of dist/ to try a change without committing
 * it), extra environment for its bench and server (`env`) and extra
 * bench:http options (`args`, e.g. `--webhooks`), given as JSON:
 *
 *   node dist/bench/http/variants.js --rounds 6 --variants '[
 *     {"name": "off", "args": ["--webhooks", "--webhooks-disabled"]},
 *     {"name": "on", "args": ["--webhooks"]},
 *     {"name": "on, 5%", "args": ["--webhooks"], "env": {"WEBHOOKS_BUSY_PERCENT": "5"}}]'
 */
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { describePaired, interleave, interleaveArgs, interleaveOptions, meanSe, pairedRatio, ratioSe, variant, type Variant } from './interleave.js';
import { SERVER_MAIN } from './server-process.js';
import { describeSyncLatency, measureSyncLatency } from './sync-latency.js';
import { f0, f1, f2, log, setLogPrefix } from './util.js';

const HELP = `Usage: node dist/bench/http/variants.js --variants JSON [options]

  --variants JSON   a list of {"name", "entry"?, "env"?, "args"?}; the first is the baseline
  --rounds N        servers per variant, alternated (default 3)
  --runs N          measured runs per server (default 2)
  --duration S      seconds per run (default 6)
  --warmup S        seconds of warm-up per server (default 2)
  --accounts N      funded accounts (default 2000)
`;

/** The variants from `--variants`, each checked, with a sentence for the first thing wrong. */
export function readVariants(json: string): Variant[] {
  let list: unknown;
  try {
    list = JSON.parse(json);
  } catch {
    throw new Error('--variants is not JSON: give a list like [{"name": "off"}, {"name": "on", "args": ["--webhooks"]}]');
  }
  if (!Array.isArray(list) || list.length < 2) throw new Error('--variants wants a list of at least two variants (the first is the baseline)');
  const names = new Set<string>();
  return list.map((item: unknown, i) => {
    const where = `variant ${i + 1}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new Error(`${where} is not an object`);
    const { name, entry, env, args, ...rest } = item as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) throw new Error(`${where} has unknown field ${JSON.stringify(unknown[0])} (fields: name, entry, env, args)`);
    if (typeof name !== 'string' || name === '' || /[/\\]/.test(name)) throw new Error(`${where} needs a "name" without slashes`);
    if (names.has(name)) throw new Error(`two variants are named ${JSON.stringify(name)}`);
    names.add(name);
    if (entry !== undefined && (typeof entry !== 'string' || entry === '')) throw new Error(`${name}: "entry" is the path of a server script`);
    if (env !== undefined && (typeof env !== 'object' || env === null || Array.isArray(env) || Object.values(env).some((v) => typeof v !== 'string'))) {
      throw new Error(`${name}: "env" is an object of strings, e.g. {"WEBHOOKS_BUSY_PERCENT": "5"}`);
    }
    if (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== 'string'))) throw new Error(`${name}: "args" is a list of bench:http options`);
    return variant(name, entry === undefined ? SERVER_MAIN : resolve(entry as string), (env ?? {}) as Record<string, string>, (args ?? []) as string[]);
  });
}

async function main(): Promise<void> {
  setLogPrefix('bench:variants');
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: { ...interleaveOptions('2', '2000'), variants: { type: 'string' } },
  });
  if (values.help === true || values.variants === undefined) {
    process.stdout.write(HELP);
    if (values.help !== true) process.exitCode = 2;
    return;
  }
  const variants = readVariants(values.variants);
  const { rounds, args } = interleaveArgs(values);
  // Before and after: the disk's sync latency drifts over a long run.
  const before = describeSyncLatency(measureSyncLatency(tmpdir()));
  log(before);
  await interleave(variants, args, rounds);
  const after = describeSyncLatency(measureSyncLatency(tmpdir()));
  const base = meanSe(variants[0]!.orders);
  const baseServers = meanSe(variants[0]!.serverOrders);
  const lines = [
    `| variant | server | environment | options | runs | durable orders/s, mean ± SE | ÷ ${variants[0]!.name} | ÷ ${variants[0]!.name}, each server once | ÷ ${variants[0]!.name}, paired by round | p99 ms (mean) | ms per commit (mean) | disk KB per commit (mean) |`,
    '|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const v of variants) {
    const o = meanSe(v.orders);
    const s = meanSe(v.serverOrders);
    const paired = pairedRatio(v.serverOrders, variants[0]!.serverOrders);
    const env = Object.entries(v.env).map(([k, x]) => `${k}=${x}`).join(' ') || '—';
    lines.push(
      `| ${v.name} | ${v.entry === SERVER_MAIN ? 'dist/src/main.js' : v.entry} | ${env} | ${v.args.join(' ') || '—'} | ${v.orders.length} | ${f0(o.mean)} ± ${f0(o.se)} | ` +
        `${f2(o.mean / base.mean)} ± ${f2(ratioSe(o, base))} | ${(s.mean / baseServers.mean).toFixed(3)} ± ${ratioSe(s, baseServers).toFixed(3)} | ${v === variants[0] || paired === null ? '—' : describePaired(paired)} | ${f2(meanSe(v.p99).mean)} | ${f2(meanSe(v.commitMs).mean)} | ${v.diskKb.length === 0 ? 'n/a' : f1(meanSe(v.diskKb).mean)} |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n\nBefore: ${before}.\nAfter: ${after}.\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    log(`failed: ${(error as Error).message}`);
    process.exitCode = 1;
  });
}
