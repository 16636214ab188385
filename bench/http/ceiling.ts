/**
 * The load generator's ceiling on this machine: the same runner and the same
 * request mix as `bench:http`, against a stub (stub.ts) that answers every
 * order at once without doing anything. If the real benchmark's requests/s
 * come close to this figure, the load generator, not the server, is the
 * limit.
 *
 *   node dist/bench/http/ceiling.js [--connections 64] [--duration 8] [--runs 2] [--mode prebuilt|rotate]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, startRunner } from './loadgen.js';
import { cpuUse, processTimes } from './procstat.js';
import type { RunnerConfig } from './protocol.js';

const STUB = fileURLToPath(new URL('./stub.js', import.meta.url));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      connections: { type: 'string', default: '64' },
      duration: { type: 'string', default: '8' },
      runs: { type: 'string', default: '2' },
      accounts: { type: 'string', default: '10000' },
      mode: { type: 'string', default: 'prebuilt' },
    },
  });
  const mode = values.mode;
  if (mode !== 'prebuilt' && mode !== 'rotate') throw new Error('--mode must be prebuilt or rotate');
  const connections = Number(values.connections);
  const port = await freePort();
  const stub = spawn(process.execPath, [STUB, String(port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    stub.once('message', () => resolve());
    stub.once('exit', (code) => reject(new Error(`the stub exited (code ${code})`)));
  });
  const dir = mkdtempSync(join(tmpdir(), 'credit-order-ceiling-'));
  const configFile = join(dir, 'runner.json');
  // Keys and secrets shaped like real ones; the stub checks nothing.
  const accounts = Array.from({ length: Number(values.accounts) }, (_, i) => ({
    key: `key_${i.toString(16).padStart(32, '0')}`,
    secret: `sec_${'x'.repeat(43)}`,
  }));
  const config: RunnerConfig = { baseUrl: `http://127.0.0.1:${port}`, connections, serviceId: 1, quantity: 1000, mode, accounts };
  writeFileSync(configFile, JSON.stringify(config));
  const runner = await startRunner(configFile);
  try {
    await runner.run('warm-up', 2);
    for (let i = 1; i <= Number(values.runs); i++) {
      const stub0 = processTimes(stub.pid!);
      const runner0 = processTimes(runner.pid);
      const t0 = performance.now();
      const r = await runner.run(`run ${i}`, Number(values.duration));
      const wallS = (performance.now() - t0) / 1000;
      const stubCpu = cpuUse(stub.pid!, stub0, processTimes(stub.pid!), wallS);
      const loadgenCpu = cpuUse(runner.pid, runner0, processTimes(runner.pid), wallS);
      process.stdout.write(
        `run ${i} (${mode}, ${connections} connections): ${Math.round(r.completed / r.durationS).toLocaleString('en-US')} req/s, ` +
          `p50 ${r.latency.p50.toFixed(2)} ms, p99 ${r.latency.p99.toFixed(2)} ms; ` +
          `load generator ${Math.round(loadgenCpu?.pct ?? 0)}% of a core, stub ${Math.round(stubCpu?.pct ?? 0)}%\n`,
      );
    }
  } finally {
    await runner.close();
    stub.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`ceiling: ${(error as Error).message}\n`);
  process.exitCode = 1;
});
