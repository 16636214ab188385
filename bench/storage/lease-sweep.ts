/**
 * What putting ended claim leases back in the queue costs: the time of
 * each lease-sweep step (up to LEASE_SWEEP_STEP_MAX expiries, each an
 * actor command and an order.released event, durable before the step
 * resolves) and the event loop's longest block while the steps run, on the
 * real server (LMDB, group commit, wallet actors) with an injected clock.
 *
 *   node dist/bench/storage/lease-sweep.js [--orders 5000] [--accounts 50] [--dir /tmp]
 *
 * It places `--orders` orders over `--accounts` accounts, claims them all
 * with the shortest lease, moves the clock past it, and runs sweep steps
 * until none is left; then it watches the idle event loop for as long, the
 * baseline of what a shared machine's scheduler alone adds. The disk's
 * sync latency is printed beside the figures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { loadConfig, startServer } from '../../src/app/index.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createLogger, MS_PER_SECOND } from '../../src/platform/index.js';
import { LEASE_SECONDS_MIN } from '../../src/ledger/index.js';
import { describeSyncLatency, measureSyncLatency } from '../http/sync-latency.js';

const { values } = parseArgs({
  options: {
    orders: { type: 'string', default: '5000' },
    accounts: { type: 'string', default: '50' },
    dir: { type: 'string', default: tmpdir() },
  },
});
const orders = Number(values.orders);
const accounts = Number(values.accounts);
for (const [name, n] of [['--orders', orders], ['--accounts', accounts]] as const) {
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
}

const CLAIM_PAGE = 500;
const TOKEN = 'lease-sweep-bench';

async function call(base: string, method: string, path: string, body: unknown, headers: Record<string, string>): Promise<any> {
  const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const parsed = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(values.dir, 'coa-lease-sweep-'));
  console.log(describeSyncLatency(measureSyncLatency(dir)));
  const clock = new ManualClock(1_000_000, Date.now());
  const config = { ...loadConfig([], {}), host: '127.0.0.1', port: 0, adminHost: '127.0.0.1', adminPort: 0, dataDir: join(dir, 'data'), adminToken: TOKEN, logLevel: 'silent', seedDemo: false, defaultRateLimitPerMinute: 100_000_000 };
  const server = await startServer(config, { clock, log: createLogger('silent'), sweepEveryMs: null, leaseSweepEveryMs: null });
  try {
    const api = `http://127.0.0.1:${server.port}`;
    const admin = (method: string, path: string, body: unknown) => call(`http://127.0.0.1:${server.adminPort}`, method, path, body, { authorization: `Bearer ${TOKEN}` });
    const service = (await admin('POST', '/admin/v1/services', { platform: 'bench', name: 'bench', rate: '0.001', min: 1, max: 1000 })).service.id;
    const keys: Record<string, string>[] = [];
    for (let a = 0; a < accounts; a++) {
      const made = await admin('POST', '/admin/v1/accounts', { name: `bench-${a}` });
      await admin('POST', `/admin/v1/accounts/${made.account.id}/credits`, { amount: '1000000', reason: 'bench' });
      keys.push({ 'x-api-key': made.api_key, 'x-api-secret': made.api_secret });
    }
    for (let n = 0; n < orders; n += accounts) {
      await Promise.all(keys.slice(0, Math.min(accounts, orders - n)).map((k, i) => call(api, 'POST', '/api/v1/order', { service, target: `https://example.com/${n + i}`, quantity: 10 }, k)));
    }
    for (let claimed = 0; claimed < orders; claimed += CLAIM_PAGE) await admin('POST', '/admin/v1/orders/claim', { limit: CLAIM_PAGE, worker: 'bench', lease_seconds: LEASE_SECONDS_MIN });
    clock.advance(LEASE_SECONDS_MIN * MS_PER_SECOND);
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const steps: number[] = [];
    let expired = 0;
    for (;;) {
      const started = performance.now();
      const n = await server.leases.step();
      if (n === 0) break;
      steps.push(performance.now() - started);
      expired += n;
    }
    loop.disable();
    steps.sort((x, y) => x - y);
    const total = steps.reduce((s, x) => s + x, 0);
    // The baseline: the event loop's longest delay over as long with nothing to do (on a shared machine, the scheduler's share).
    const idle = monitorEventLoopDelay({ resolution: 1 });
    idle.enable();
    await new Promise((resolve) => setTimeout(resolve, total));
    idle.disable();
    console.log(`expired ${expired} leases in ${steps.length} steps: ${total.toFixed(0)} ms in all, ${(expired / (total / MS_PER_SECOND)).toFixed(0)} a second; ` +
      `a step: median ${steps[Math.floor(steps.length / 2)]!.toFixed(1)} ms, longest ${steps[steps.length - 1]!.toFixed(1)} ms; event loop blocked at most ${(loop.max / 1e6).toFixed(1)} ms (idle for as long: ${(idle.max / 1e6).toFixed(1)} ms)`);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
