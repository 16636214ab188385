/**
 * One measured run against the real server: CPU per process and thread
 * (server, load generator, everything else), the server's memory, the
 * group commit's batches (GET /admin/v1/stats before and after) and,
 * optionally, the ledger cross-check; plus the plain-text report of a run.
 */
import { cpus } from 'node:os';
import { assertLedger, balances, ledgerCheck, type LedgerCheck } from './ledger.js';
import type { Runner } from './loadgen.js';
import { cpuUse, diskWrites, machineTimes, machineUse, memory, processTimes, type CpuUse, type Memory } from './procstat.js';
import type { LoadResult, Scenario } from './protocol.js';
import { batchBetween, walCounters, type BatchFigures, type ServerProcess } from './server-process.js';
import { f0, f1, f2, waitForQuiet, type QuietOptions } from './util.js';

export interface RunReport {
  label: string;
  scenario: Scenario;
  connections: number;
  load: LoadResult;
  /** null when the run was not cross-checked against the ledger. */
  ledger: LedgerCheck | null;
  requestsPerS: number;
  /** 201 responses to POST /api/v1/order per second (each is durable when answered). */
  durableOrdersPerS: number;
  /** Latency of the order requests alone (2xx). */
  orderLatency: LoadResult['latency'];
  serverCpu: CpuUse | null;
  loadgenCpu: CpuUse | null;
  machine: { busyPct: number; iowaitPct: number };
  /** CPU used by everything else on the machine (other processes), percent of one core. */
  otherPct: number;
  /** Machine busy percent (all cores) in the second before the run, as seen by the quiet wait (0 when not waited). */
  busyBeforePct: number;
  serverMemory: Memory | null;
  /** Group-commit batches during the run and entries per batch. */
  batch: BatchFigures;
  /**
   * Bytes written to the block device holding the data directory during
   * the run (/proc/diskstats: every process's writes to it, so a quiet
   * machine matters); null where it cannot be read.
   */
  disk: { device: string; bytes: number } | null;
}

/** Disk bytes written per LMDB commit, KB (1,000 bytes), or null. */
export function diskKbPerCommit(r: RunReport): number | null {
  return r.disk === null || r.batch.commits === 0 ? null : r.disk.bytes / r.batch.commits / 1000;
}

/**
 * Wall time per LMDB commit, ms: the run's duration ÷ commits. LMDB's write
 * thread starts the next commit as soon as one is synced whenever batches
 * are waiting, so under load this is close to the time one commit (write +
 * fsync) takes.
 */
export function msPerCommit(r: RunReport): number | null {
  return r.batch.commits === 0 ? null : (1000 * r.load.durationS) / r.batch.commits;
}

export interface MeasureOptions extends QuietOptions {
  label: string;
  scenario: Scenario;
  durationS: number;
  connections: number;
  /** Charge of one order in micro-credits; null skips the ledger cross-check. */
  chargeMicro: bigint | null;
}

export async function measureRun(server: ServerProcess, runner: Runner, options: MeasureOptions): Promise<RunReport> {
  const busyBeforePct = await waitForQuiet(options);
  const before = options.chargeMicro === null ? null : await balances(server);
  const wal0 = await walCounters(server);
  const machine0 = machineTimes();
  const disk0 = diskWrites(server.dataDir);
  const server0 = processTimes(server.pid);
  const runner0 = processTimes(runner.pid);
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const load = await runner.run(options.label, options.durationS, options.connections);
  const wallS = (performance.now() - t0) / 1000;
  const selfUse = process.cpuUsage(self0);
  const selfPct = (selfUse.user + selfUse.system) / 1e4 / wallS;
  const server1 = processTimes(server.pid);
  const runner1 = processTimes(runner.pid);
  const machine1 = machineTimes();
  const disk1 = diskWrites(server.dataDir);
  const serverMemory = memory(server.pid);
  const serverCpu = cpuUse(server.pid, server0, server1, wallS);
  const loadgenCpu = cpuUse(runner.pid, runner0, runner1, wallS);
  const machine = machineUse(machine0, machine1);
  const orders = load.byKind.order;
  const ok201 = orders?.ok2xx ?? 0;
  let ledger: LedgerCheck | null = null;
  if (before !== null && options.chargeMicro !== null) {
    // The listing waits for every pending commit, so the counters read after
    // it include the requests that were in flight when the load stopped.
    ledger = ledgerCheck(before, await balances(server), options.chargeMicro);
  }
  const wal1 = await walCounters(server);
  const report: RunReport = {
    label: options.label,
    scenario: options.scenario,
    connections: options.connections,
    load,
    ledger,
    requestsPerS: load.completed / load.durationS,
    durableOrdersPerS: ok201 / load.durationS,
    orderLatency: orders?.latency ?? load.latency,
    serverCpu,
    loadgenCpu,
    machine,
    otherPct: Math.max(0, machine.busyPct * cpus().length - (serverCpu?.pct ?? 0) - (loadgenCpu?.pct ?? 0) - selfPct),
    busyBeforePct,
    serverMemory,
    batch: batchBetween(wal0, wal1),
    disk: disk0 === null || disk1 === null || disk0.device !== disk1.device ? null : { device: disk0.device, bytes: (disk1.sectors - disk0.sectors) * 512 },
  };
  if (ledger !== null) assertLedger(ledger, ok201);
  return report;
}

export function describeMemory(m: Memory | null): string {
  if (m === null) return 'n/a';
  return `RSS ${f0(m.rssMiB)} MiB (peak ${f0(m.peakMiB)} MiB): ${f0(m.anonMiB)} MiB heap and other private memory, ${f0(m.fileMiB)} MiB file-backed (the LMDB map, node and native modules)`;
}

export function describeCpu(cpu: CpuUse | null): string {
  return cpu === null
    ? 'n/a'
    : `${f0(cpu.pct)}% of a core (${cpu.threads
        .slice(0, 4)
        .map((t) => `${t.name}${t.count > 1 ? `×${t.count}` : ''} ${f0(t.pct)}%`)
        .join(', ')})`;
}

export function describeRun(r: RunReport): string {
  const l = r.load;
  const codes = Object.entries(l.statusCodes)
    .map(([c, n]) => `${c}: ${f0(n)}`)
    .join(', ');
  const lat = (x: LoadResult['latency']): string =>
    `p50 ${f2(x.p50)} ms, p90 ${f2(x.p90)} ms, p99 ${f2(x.p99)} ms, p99.9 ${f2(x.p999)} ms, max ${f2(x.max)} ms, mean ${f2(x.mean)} ms`;
  const lines = [
    `${r.label} [${r.scenario}]: ${f1(l.durationS)} s at ${r.connections} connections`,
    `  requests/s          ${f0(r.requestsPerS)}  (${f0(l.completed)} completed, ${f0(l.sent)} sent; per-second samples ${f0(l.perSecond.min)}..${f0(l.perSecond.max)})`,
    `  durable orders/s    ${f0(r.durableOrdersPerS)}  (201 responses to POST /api/v1/order: ${f0(l.byKind.order?.ok2xx ?? 0)})`,
  ];
  if (r.ledger !== null) {
    const unacked = r.ledger.durableOrders - (l.byKind.order?.ok2xx ?? 0);
    lines.push(
      `  ledger check        ${f0(r.ledger.durableOrders)} orders debited (${r.ledger.debitedCredits} credits) across ${f0(r.ledger.accountsOrdering)} accounts ` +
        `(${r.ledger.minPerAccount}..${r.ledger.maxPerAccount} each); ${unacked >= 0 ? `${f0(unacked)} more than the 201s seen` : `${f0(-unacked)} FEWER than the 201s seen`} ` +
        `(≤ ${r.connections} expected: in flight when the load stopped); negative wallets ${r.ledger.negativeWallets}, odd deltas ${r.ledger.oddDeltas}`,
    );
  }
  lines.push(`  latency (2xx)       ${lat(l.latency)}`);
  for (const [kind, k] of Object.entries(l.byKind)) {
    if (Object.keys(l.byKind).length > 1) lines.push(`    ${kind.padEnd(8)}          ${f0(k.completed / l.durationS)}/s; ${lat(k.latency)}`);
  }
  lines.push(
    `  autocannon latency  p50 ${l.autocannonLatencyMs.p50} ms, p90 ${l.autocannonLatencyMs.p90} ms, p99 ${l.autocannonLatencyMs.p99} ms (1 ms buckets)`,
    `  status codes        ${codes || 'none'}; non-2xx ${f0(l.non2xx)}, errors ${f0(l.errors)}, timeouts ${f0(l.timeouts)}, resets ${f0(l.resets)}`,
    `  group commit        ${f0(r.batch.entries)} entries in ${f0(r.batch.batches)} batches (${f1(r.batch.perBatch)} each) and ${f0(r.batch.commits)} LMDB commits (${f1(r.batch.perCommit)} entries each)` +
      (r.batch.commits === 0 ? '' : `; ${f0(r.batch.commits / r.load.durationS)} commits/s (${f2(msPerCommit(r)!)} ms each)`),
    `  disk writes         ${r.disk === null ? 'n/a' : `${f1(r.disk.bytes / 1e6)} MB to ${r.disk.device}${diskKbPerCommit(r) === null ? '' : ` (${f1(diskKbPerCommit(r)!)} KB per commit)`}, every process's`}`,
    `  server CPU          ${describeCpu(r.serverCpu)}`,
    `  load generator CPU  ${describeCpu(r.loadgenCpu)}`,
    `  machine             ${f0(r.machine.busyPct)}% busy of ${cpus().length} cores, iowait ${f1(r.machine.iowaitPct)}%; ` +
      `other processes used ${f0(r.otherPct)}% of a core${r.otherPct > 20 ? ' (NOISY: something else was running)' : ''}`,
    `  server memory       ${describeMemory(r.serverMemory)}`,
  );
  return lines.join('\n');
}

/** The non-2xx / errors / timeouts triple of a run, for tables. */
export function failures(r: RunReport): string {
  return `${f0(r.load.non2xx)} / ${f0(r.load.errors)} / ${f0(r.load.timeouts)}`;
}
