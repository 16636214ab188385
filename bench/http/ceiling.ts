/**
 * The load generator's ceiling on this machine: the same runner and the
 * same requests as the order benchmark, against a bare uWebSockets.js
 * server (stub.ts, through src/http/transport/uws.ts) that answers every POST at once
 * with a fixed JSON body. If a benchmark's requests/s come close to this
 * figure, the load generator (or the machine), not the server, is the
 * limit; the order path's requests/s as a fraction of it is printed by
 * run-all.ts.
 *
 *   node dist/bench/http/ceiling.js [--connections 64] [--duration 8] [--runs 2] [--mode prebuilt|rotate]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, startRunner, type Runner } from './loadgen.js';
import { cpuUse, machineTimes, machineUse, processTimes, type CpuUse } from './procstat.js';
import type { LoadResult, RunnerAccount, RunnerConfig } from './protocol.js';
import { f0, onInterrupt, positiveInt, waitForQuiet, QUIET_OPTION_SPECS, quietOptions, type QuietOptions } from './util.js';

const STUB = fileURLToPath(new URL('./stub.js', import.meta.url));

export interface CeilingReport {
  label: string;
  connections: number;
  requestsPerS: number;
  load: LoadResult;
  stubCpu: CpuUse | null;
  loadgenCpu: CpuUse | null;
  otherPct: number;
}

export interface Ceiling {
  stubPid: number;
  runner: Runner;
  measure(label: string, durationS: number, quiet: QuietOptions, connections?: number): Promise<CeilingReport>;
  close(): Promise<void>;
}

/** Accounts shaped like real ones, for when only the request sizes matter (the stub checks nothing). */
export function fakeAccounts(n: number): RunnerAccount[] {
  return Array.from({ length: n }, (_, i) => ({ key: `key_${i.toString(16).padStart(32, '0')}`, secret: `sec_${'x'.repeat(43)}` }));
}

/** Starts the stub and a load generator with the given accounts and mode (the order scenario's requests). */
export async function startCeiling(accounts: RunnerAccount[], options: { connections: number; mode: 'prebuilt' | 'rotate'; quantity?: number }): Promise<Ceiling> {
  const port = await freePort();
  const stub: ChildProcess = spawn(process.execPath, [STUB, String(port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const dir = mkdtempSync(join(tmpdir(), 'credit-order-ceiling-'));
  const unregister = onInterrupt(() => {
    stub.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  let runner: Runner | null = null;
  try {
    await new Promise<void>((resolve, reject) => {
      stub.once('message', () => resolve());
      stub.once('exit', (code) => reject(new Error(`the stub exited (code ${code})`)));
    });
    const configFile = join(dir, 'runner.json');
    const config: RunnerConfig = {
      baseUrl: `http://127.0.0.1:${port}`,
      connections: options.connections,
      serviceId: 1,
      quantity: options.quantity ?? 1000,
      mode: options.mode,
      scenario: 'order',
      accounts: accounts.map((a) => ({ key: a.key, secret: a.secret })),
    };
    writeFileSync(configFile, JSON.stringify(config), { mode: 0o600 });
    runner = await startRunner(configFile);
  } catch (error) {
    stub.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    unregister();
    throw error;
  }
  const liveRunner = runner;
  return {
    stubPid: stub.pid!,
    runner: liveRunner,
    async measure(label, durationS, quiet, connections = options.connections) {
      await waitForQuiet(quiet);
      const machine0 = machineTimes();
      const stub0 = processTimes(stub.pid!);
      const runner0 = processTimes(liveRunner.pid);
      const self0 = process.cpuUsage();
      const t0 = performance.now();
      const load = await liveRunner.run(label, durationS, connections);
      const wallS = (performance.now() - t0) / 1000;
      const self = process.cpuUsage(self0);
      const stubCpu = cpuUse(stub.pid!, stub0, processTimes(stub.pid!), wallS);
      const loadgenCpu = cpuUse(liveRunner.pid, runner0, processTimes(liveRunner.pid), wallS);
      const machine = machineUse(machine0, machineTimes());
      return {
        label,
        connections,
        requestsPerS: load.completed / load.durationS,
        load,
        stubCpu,
        loadgenCpu,
        otherPct: Math.max(0, machine.busyPct * cpus().length - (stubCpu?.pct ?? 0) - (loadgenCpu?.pct ?? 0) - (self.user + self.system) / 1e4 / wallS),
      };
    },
    async close() {
      await liveRunner.close();
      stub.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      unregister();
    },
  };
}

export function describeCeiling(r: CeilingReport, mode: string): string {
  return (
    `${r.label} (ceiling, ${mode}, ${r.connections} connections): ${f0(r.requestsPerS)} req/s, ` +
    `p50 ${r.load.latency.p50.toFixed(2)} ms, p99 ${r.load.latency.p99.toFixed(2)} ms; ` +
    `load generator ${f0(r.loadgenCpu?.pct ?? 0)}% of a core, stub ${f0(r.stubCpu?.pct ?? 0)}%, other ${f0(r.otherPct)}%`
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      connections: { type: 'string', default: '64' },
      duration: { type: 'string', default: '8' },
      runs: { type: 'string', default: '2' },
      accounts: { type: 'string', default: '10000' },
      mode: { type: 'string', default: 'prebuilt' },
      ...QUIET_OPTION_SPECS,
    },
  });
  const mode = values.mode;
  if (mode !== 'prebuilt' && mode !== 'rotate') throw new Error('--mode must be prebuilt or rotate');
  const connections = positiveInt('connections', values.connections);
  const quiet = quietOptions(values);
  const ceiling = await startCeiling(fakeAccounts(positiveInt('accounts', values.accounts)), { connections, mode });
  try {
    await ceiling.runner.run('warm-up', 2);
    for (let i = 1; i <= positiveInt('runs', values.runs); i++) {
      process.stdout.write(describeCeiling(await ceiling.measure(`run ${i}`, positiveInt('duration', values.duration), quiet), mode) + '\n');
    }
  } finally {
    await ceiling.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`ceiling: ${(error as Error).message}\n`);
    process.exitCode = 1;
  });
}
