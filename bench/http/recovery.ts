/**
 * `node dist/bench/http/recovery.js`: how long the server takes to come
 * back after a crash under load, with a large data set.
 *
 * Seeds `--accounts` funded accounts directly into LMDB, starts the server,
 * drives orders at it from `--workers` concurrent clients spread over the
 * accounts, SIGKILLs it mid-load, and restarts it on the same directory:
 * the time from spawn to the first 200 from the admin /healthz is the
 * recovery time (LMDB opens on its last synced meta page; nothing is
 * replayed). Repeated `--cycles` times; the ledger is checked through the
 * admin API after each restart: the stored pending orders (GET
 * /admin/v1/stats, the orders-by-status row written in every commit) must
 * cover every 201 seen.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { seedDirect } from './seed.js';
import { admin, killServer, startServer, stopServer, type ServerProcess } from './server-process.js';
import { describeSyncLatency, measureSyncLatency } from './sync-latency.js';
import { f0, log, positiveInt, setLogPrefix, sleep } from './util.js';

const QUANTITY = 1000;

async function drive(server: ServerProcess, seeded: Awaited<ReturnType<typeof seedDirect>>, workers: number, ms: number): Promise<number> {
  let stop = false;
  let acknowledged = 0;
  const stride = Math.max(1, Math.floor(seeded.count / 100_000));
  const worker = async (w: number): Promise<void> => {
    for (let n = 0; !stop; n++) {
      const a = seeded.account(((w + n * workers) * stride) % seeded.count);
      try {
        const res = await fetch(`${server.baseUrl}/api/v1/order`, {
          method: 'POST',
          headers: { 'x-api-key': a.key, 'x-api-secret': a.secret, 'content-type': 'application/json' },
          body: JSON.stringify({ service: seeded.serviceId, target: `https://example.com/r/${w}/${n}`, quantity: QUANTITY }),
        });
        await res.arrayBuffer();
        if (res.status === 201) acknowledged++;
      } catch {
        return; // killed mid-request
      }
    }
  };
  const running = Array.from({ length: workers }, (_, w) => worker(w));
  await sleep(ms);
  server.child.kill('SIGKILL');
  await server.exited;
  stop = true;
  await Promise.all(running);
  return acknowledged;
}

async function main(): Promise<void> {
  setLogPrefix('bench:recovery');
  const { values } = parseArgs({
    options: {
      accounts: { type: 'string', default: '1000000' },
      cycles: { type: 'string', default: '3' },
      workers: { type: 'string', default: '32' },
      'load-ms': { type: 'string', default: '3000' },
    },
  });
  const accounts = positiveInt('accounts', values.accounts!);
  const cycles = positiveInt('cycles', values.cycles!);
  const workers = positiveInt('workers', values.workers!);
  const loadMs = positiveInt('load-ms', values['load-ms']!);
  const syncLatency = describeSyncLatency(measureSyncLatency(tmpdir()));
  log(syncLatency);
  const dir = mkdtempSync(join(tmpdir(), 'credit-order-recovery-'));
  let server: ServerProcess | null = null;
  try {
    const seeded = await seedDirect(dir, accounts);
    log(`${f0(accounts)} accounts seeded in ${seeded.seconds.toFixed(1)} s`);
    server = await startServer(dir, { readyTimeoutMs: 120_000 });
    const stored = async (s: ServerProcess): Promise<number> => (JSON.parse(await admin(s, 'GET', '/admin/v1/stats')) as { orders: Record<string, number> }).orders['pending'] ?? 0;
    let acknowledged = 0;
    const recoveryMs: number[] = [];
    for (let c = 1; c <= cycles; c++) {
      acknowledged += await drive(server, seeded, workers, loadMs);
      server = await startServer(dir, { readyTimeoutMs: 120_000 });
      recoveryMs.push(server.readyMs);
      const durable = await stored(server);
      if (durable < acknowledged) throw new Error(`cycle ${c}: ${acknowledged} orders acknowledged, only ${durable} stored`);
      log(`cycle ${c}: killed under load (${f0(acknowledged)} orders acknowledged so far, ${f0(durable)} stored); back in ${f0(server.readyMs)} ms`);
    }
    const stopped = await stopServer(server);
    server = null;
    const worst = Math.max(...recoveryMs);
    process.stdout.write(
      `${f0(accounts)} accounts; ${cycles} crashes under load (${workers} clients, SIGKILL after ${loadMs} ms each): ` +
        `recovery (spawn → /healthz 200) ${recoveryMs.map((ms) => f0(ms)).join(', ')} ms; worst ${f0((worst * 1e6) / accounts)} ms per million accounts; ` +
        `no acknowledged order lost; SIGTERM exit ${String(stopped.code)}. ${syncLatency}.\n`,
    );
  } finally {
    if (server !== null) await killServer(server);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:recovery: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
