/**
 * `npm run bench`: every benchmark in one go, then bench/RESULTS.md and
 * bench/throughput.svg regenerated from the figures.
 *
 *  1. micro-benchmarks (node dist/bench/micro/run.js; its markdown is kept);
 *  2. the order path (10,000 accounts, 64 connections) with the load
 *     generator's ceiling measured right before and right after every run:
 *     the same runner, requests and connections against a bare
 *     uWebSockets.js server answering a fixed JSON body (http/stub.ts);
 *  3. the mixed (1 order : 3 status : 1 balance) and idempotent (a new
 *     Idempotency-Key per order) scenarios;
 *  4. the conventional peer (bench/peers/fastify-postgres), when present;
 *  5. connections 16 / 64 / 128 / 256 on one server: durable orders/s, p99
 *     and entries per group commit (the chart);
 *  6. scaling with the data set: 1,000 / 100,000 (/ 1,000,000 with --full)
 *     accounts seeded directly into LMDB, and accounts with already-placed
 *     orders stored (100,000 with 1,000,000; --full: 1,000,000 with 1 and
 *     10 million): start time, memory per wallet, a short order run, verify,
 *     restart time against the data size, and the scaling target (orders/s at
 *     1,000,000 accounts and 10,000,000 orders ≥ 0.8 × at 1,000 and none).
 *
 * Everything outside the hand-written analysis markers of RESULTS.md is
 * regenerated; the analysis section (and the bench:http block inside it)
 * is kept as it is. --help lists the options.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describeCeiling, startCeiling, type Ceiling } from './http/ceiling.js';
import { describeRun, type RunReport } from './http/measure.js';
import { cpuModel } from './http/procstat.js';
import type { Scenario } from './http/protocol.js';
import { runScaling } from './http/scaling.js';
import { openSession, type Session } from './http/scenario.js';
import { diskOf, f0, filesystemOf, log, setLogPrefix, sourceVersion } from './http/util.js';
import { describeSyncLatency, measureSyncLatency } from './http/sync-latency.js';
import { HELP, type Options, QUANTITY, type Section, parseOptions } from './run-all/options.js';
import { type Environment, type OrderPath, type OrderPathRun, type Outcome, type PeerFigures, type Results, type ScenarioFigures } from './run-all/results.js';
import { commandLine, packageVersion, scaledTarget } from './run-all/render.js';
import { publish } from './run-all/results-file.js';

const here = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url));
const MICRO = here('./micro/run.js');
const PEER = here('./peers/fastify-postgres/run.js');

async function section<T>(name: Section, options: Options, run: () => Promise<T>): Promise<Outcome<T>> {
  if (options.skip.has(name)) return { ok: null, reason: 'skipped (--skip)' };
  log(`---- ${name}`);
  const started = performance.now();
  try {
    const value = await run();
    return { ok: true, value, seconds: (performance.now() - started) / 1000 };
  } catch (error) {
    const message = (error as Error).message ?? String(error);
    log(`${name} FAILED: ${(error as Error).stack ?? message}`);
    return { ok: false, error: message, seconds: (performance.now() - started) / 1000 };
  }
}

function runMicro(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MICRO], { stdio: ['ignore', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => {
      chunks.push(c);
      process.stdout.write(c);
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve(Buffer.concat(chunks).toString('utf8').trim());
      else reject(new Error(`node dist/bench/micro/run.js exited with code ${code}`));
    });
  });
}

function sessionFor(scenario: Scenario, options: Options): Promise<Session> {
  return openSession({ scenario, accounts: options.accounts, connections: options.connections, mode: 'prebuilt', quantity: QUANTITY, seed: 'direct' });
}

async function orderPath(options: Options): Promise<OrderPath> {
  const session = await sessionFor('order', options);
  let ceiling: Ceiling | null = null;
  try {
    // The same accounts (so the same request sizes) against the stub.
    const accounts = Array.from({ length: session.loadAccounts }, (_, i) => session.seeded.account(i));
    ceiling = await startCeiling(accounts, { connections: options.connections, mode: 'prebuilt', quantity: QUANTITY });
    await ceiling.runner.run('warm-up', Math.max(1, options.warmup));
    if (options.warmup > 0) await session.warmup(options.warmup);
    const runs: OrderPathRun[] = [];
    for (let i = 1; i <= options.runs; i++) {
      const ceilingBefore = await ceiling.measure(`run ${i} ceiling before`, options.duration, options);
      process.stdout.write(`${describeCeiling(ceilingBefore, 'prebuilt')}\n`);
      const order = await session.measure(`run ${i}`, options.duration, options);
      process.stdout.write(`${describeRun(order)}\n`);
      const ceilingAfter = await ceiling.measure(`run ${i} ceiling after`, options.duration, options);
      process.stdout.write(`${describeCeiling(ceilingAfter, 'prebuilt')}\n`);
      const fraction = order.requestsPerS / ((ceilingBefore.requestsPerS + ceilingAfter.requestsPerS) / 2);
      process.stdout.write(`run ${i}: the order path does ${f0(order.requestsPerS)} req/s = ${(100 * fraction).toFixed(0)}% of the bare uWebSockets.js ceiling\n\n`);
      runs.push({ ceilingBefore, order, ceilingAfter, fraction });
    }
    await ceiling.close();
    ceiling = null;
    const stop = await session.stop();
    return { seedS: session.seeded.seconds, readyMs: session.server.readyMs, runs, stopCode: stop.code };
  } finally {
    if (ceiling !== null) await ceiling.close().catch(() => {});
    await session.dispose();
  }
}

async function scenario(name: Scenario, options: Options): Promise<ScenarioFigures> {
  const session = await sessionFor(name, options);
  try {
    if (options.warmup > 0) await session.warmup(options.warmup);
    const runs: RunReport[] = [];
    for (let i = 1; i <= options.runs; i++) {
      const report = await session.measure(`run ${i}`, options.duration, options);
      process.stdout.write(`${describeRun(report)}\n\n`);
      runs.push(report);
    }
    const stop = await session.stop();
    return { scenario: name, seedS: session.seeded.seconds, primeS: session.primeS, loadAccounts: session.loadAccounts, runs, stopCode: stop.code };
  } finally {
    await session.dispose();
  }
}

async function sweep(options: Options): Promise<RunReport[]> {
  const session = await sessionFor('order', options);
  try {
    const reports: RunReport[] = [];
    const ascending = [...options.sweep].sort((a, b) => a - b);
    for (let pass = 1; pass <= options.runs; pass++) {
      // Alternate the order so that the slow drift as the orders table grows
      // does not always favour the same end.
      const order = pass % 2 === 1 ? ascending : [...ascending].reverse();
      for (const connections of order) {
        await session.warmup(options.quick ? 1 : 2, connections);
        const report = await session.measure(`${connections} connections, pass ${pass}`, options.sweepDuration, options, { connections });
        process.stdout.write(`${describeRun(report)}\n\n`);
        reports.push(report);
      }
    }
    await session.stop();
    return reports;
  } finally {
    await session.dispose();
  }
}

interface PeerModule {
  runFastifyPostgresPeer?: (options: Record<string, unknown>) => Promise<unknown>;
  peerMarkdown?: (result: unknown, command: string) => string;
}

/**
 * The conventional peer, if bench/peers/fastify-postgres is there (it is
 * written separately). Returns null with a reason when it is not run.
 */
async function peer(options: Options): Promise<PeerFigures | { notRun: string }> {
  if (!existsSync(PEER)) return { notRun: 'bench/peers/fastify-postgres is not built (dist/bench/peers/fastify-postgres/run.js missing)' };
  const mod = (await import(pathToFileURL(PEER).href)) as PeerModule;
  if (typeof mod.runFastifyPostgresPeer !== 'function') return { notRun: 'bench/peers/fastify-postgres/run.js exports no runFastifyPostgresPeer()' };
  const peerOptions = {
    accounts: options.accounts,
    connections: options.connections,
    duration: options.duration,
    warmup: options.warmup,
    runs: options.runs,
    quantity: QUANTITY,
    quietWait: options.quietWait,
    quietBelow: options.quietBelow,
  };
  const result = (await mod.runFastifyPostgresPeer(peerOptions)) as {
    skipped?: boolean;
    reason?: string;
    runs?: { label: string; requestsPerS: number; durableOrdersPerS: number; latency: { p99: number } }[];
  };
  if (result.skipped === true) return { notRun: result.reason ?? 'the peer skipped itself' };
  const command =
    `node dist/bench/peers/fastify-postgres/run.js --accounts ${options.accounts} --connections ${options.connections} ` +
    `--duration ${options.duration} --warmup ${options.warmup} --runs ${options.runs}` +
    (options.quietWait > 0 ? ` --quiet-wait ${options.quietWait} --quiet-below ${options.quietBelow}` : '');
  const markdown = typeof mod.peerMarkdown === 'function' ? mod.peerMarkdown(result, command) : '```\n' + JSON.stringify(result, null, 2) + '\n```';
  process.stdout.write(`${markdown}\n\n`);
  return {
    result,
    markdown,
    runs: (result.runs ?? []).map((r) => ({ label: r.label, requestsPerS: r.requestsPerS, durableOrdersPerS: r.durableOrdersPerS, p99: r.latency.p99 })),
  };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  setLogPrefix('bench');
  const argv = process.argv.slice(2);
  let options: Options;
  try {
    options = parseOptions(argv);
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n${HELP}`);
    process.exit(2);
  }
  if (options.fromJson !== null) {
    publish(JSON.parse(readFileSync(options.fromJson, 'utf8')) as Results, options.write);
    return;
  }
  const started = performance.now();
  const env: Environment = {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    command: commandLine(argv),
    args: argv,
    source: sourceVersion(),
    node: process.version,
    cpu: cpuModel(),
    cores: cpus().length,
    memoryGiB: totalmem() / 2 ** 30,
    kernel: release(),
    dataDir: `${tmpdir()} on ${filesystemOf(tmpdir())}, ${diskOf(tmpdir())}`,
    syncLatency: describeSyncLatency(measureSyncLatency(tmpdir())),
    versions: Object.fromEntries(
      ['lmdb', '@trufflesuite/uws-js-unofficial', 'autocannon', 'tinybench', 'typescript', 'fastify', 'pg'].map((name) => [name, packageVersion(name)]),
    ),
  };
  log(`${env.command} | ${env.source} | Node ${env.node} | ${env.cpu} × ${env.cores} | data in ${env.dataDir} | ${env.syncLatency}`);

  const micro = await section('micro', options, runMicro);
  const order = await section('order', options, () => orderPath(options));
  const mixed = await section('mixed', options, () => scenario('mixed', options));
  const idempotent = await section('idempotent', options, () => scenario('idempotent', options));
  let peerOutcome: Outcome<PeerFigures>;
  {
    const raw = await section('peer', options, () => peer(options));
    if (raw.ok === true && 'notRun' in raw.value) {
      process.stdout.write(`peer: not run (${raw.value.notRun})\n`);
      peerOutcome = { ok: null, reason: raw.value.notRun };
    } else peerOutcome = raw as Outcome<PeerFigures>;
  }
  const sweepOutcome = await section('sweep', options, () => sweep(options));
  const scaling = await section('scaling', options, () =>
    runScaling({
      sizes: options.sizes,
      steps: options.steps,
      runs: options.runs,
      durationS: options.scalingDuration,
      warmupS: options.quick ? 1 : 2,
      connections: options.connections,
      loadAccountsMax: options.loadAccounts,
      quantity: QUANTITY,
      ledgerMaxAccounts: 200_000,
      settleS: 2,
      touchAccountsMax: options.touchAccounts,
      quietWait: options.quietWait,
      quietBelow: options.quietBelow,
    }),
  );
  if (scaling.ok === true) log(scaledTarget(scaling.value).replaceAll('**', ''));

  const results: Results = {
    env,
    options: { ...options, skip: [...options.skip] },
    totalS: (performance.now() - started) / 1000,
    micro,
    orderPath: order,
    mixed,
    idempotent,
    peer: peerOutcome,
    sweep: sweepOutcome,
    scaling,
  };
  publish(results, options.write);
  if (options.json !== null) {
    writeFileSync(options.json, JSON.stringify(results, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n');
    log(`wrote ${options.json}`);
  }
  const failures = Object.entries({ micro, order, mixed, idempotent, peer: peerOutcome, sweep: sweepOutcome, scaling }).filter(([, o]) => o.ok === false);
  const badStops = [order, mixed, idempotent].filter((o) => o.ok === true && o.value.stopCode !== 0).length;
  if (failures.length > 0 || badStops > 0) {
    log(`done in ${f0(results.totalS)} s with failures: ${failures.map(([n]) => n).join(', ')}${badStops > 0 ? ` (and ${badStops} server(s) exited non-zero on SIGTERM)` : ''}`);
    process.exitCode = 1;
  } else log(`done in ${f0(results.totalS)} s`);
}

main().catch((error: unknown) => {
  log(`failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});

