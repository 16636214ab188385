/**
 * What the Idempotency-Key sweep costs keyed orders committing beside it:
 * the latency of each commit's entries (append to acknowledgement) and the
 * event loop's worst delay, with and without a sweep of expired records
 * running, on the real LMDB store and group commit.
 *
 *   node dist/bench/storage/sweep-stall.js [--expired 200000] [--writers 64] [--seconds 4] [--step N] [--dir /tmp]
 *
 * The store is seeded with `--expired` records past their retention (and
 * their expiry-index rows). Then `--writers` loops each append one keyed
 * order's writes at a time (the order row, the record and its index row,
 * as the wallet actor commits them) and wait for it: `--seconds` without a
 * sweep, then for as long as one sweep takes to remove every expired record
 * in its steps (of `--step` records; the server's default when not given). The disk's sync latency (a 4 KiB write + fdatasync) is printed
 * beside the figures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ManualClock } from '../../src/platform/clock.js';
import type { IdempotencyRecord } from '../../src/ledger/index.js';
import { IdempotencySweeper, idempotencyExpiryKey, LmdbGroupCommit, openStore, type WalEntry } from '../../src/wal/index.js';
import { describeSyncLatency, measureSyncLatency } from '../http/sync-latency.js';

const { values } = parseArgs({
  options: {
    expired: { type: 'string', default: '200000' },
    writers: { type: 'string', default: '64' },
    seconds: { type: 'string', default: '4' },
    step: { type: 'string' },
    dir: { type: 'string', default: tmpdir() },
  },
});
const expired = Number(values.expired);
const writers = Number(values.writers);
const seconds = Number(values.seconds);
const step = values.step === undefined ? undefined : Number(values.step);
for (const [name, n] of [['--expired', expired], ['--writers', writers], ['--seconds', seconds], ['--step', step ?? 1]] as const) {
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
}

const RETENTION_MS = 24 * 3_600_000;
const record = (atMs: number): IdempotencyRecord => ({ fingerprint: 'f'.repeat(43), status: 201, body: '{"order":"o1","charge":"1.00"}', order: null, atMs });

/** One keyed order's writes, as the wallet actor commits them (no log event: the sweep's cost is in the tables). */
function keyedOrder(n: number, atMs: number): WalEntry {
  const key = `${n % 10_000}:key-${n}`;
  return {
    events: [],
    puts: [
      { table: 'orders', key: [atMs, n], value: { id: `o${n}`, account: n % 10_000, status: 'pending', charge: 1_000_000 } },
      { table: 'idempotency', key, value: record(atMs) },
      { table: 'idempotencyExpiry', key: idempotencyExpiryKey(atMs, key), value: 1 },
    ],
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function main(): Promise<void> {
  const sync = measureSyncLatency(values.dir!);
  const dir = mkdtempSync(join(values.dir!, 'sweep-stall-'));
  const store = openStore(dir);
  const clock = new ManualClock();
  try {
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => console.error(e) });
    // Seeded a day and more in the past, 10,000 to a commit.
    const oldMs = clock.wallMs();
    for (let n = 0; n < expired; ) {
      const puts: WalEntry['puts'] = [];
      for (const end = Math.min(expired, n + 10_000); n < end; n++) {
        const key = `${n % 10_000}:old-${n}`;
        puts.push({ table: 'idempotency', key, value: record(oldMs) });
        puts.push({ table: 'idempotencyExpiry', key: idempotencyExpiryKey(oldMs, key), value: 1 });
      }
      await wal.append({ events: [], puts });
    }
    clock.advance(RETENTION_MS + 60_000);
    // No wallet here holds a record not yet durable (the load's keys are new ones).
    const sweeper = new IdempotencySweeper(store, wal, clock, RETENTION_MS, () => false, step);

    let next = 0;
    const phase = async (name: string, during: (() => Promise<unknown>) | null): Promise<void> => {
      const latencies: number[] = [];
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      const started = performance.now();
      let stop = false;
      let sweptMs: number | null = null;
      // Without a sweep the phase lasts `--seconds`; with one, until it is done.
      const timer = during === null ? setTimeout(() => (stop = true), seconds * 1000) : null;
      const work = during?.().then(() => {
        sweptMs = performance.now() - started;
        stop = true;
      });
      await Promise.all(
        Array.from({ length: writers }, async () => {
          while (!stop) {
            const t = performance.now();
            await wal.append(keyedOrder(next++, clock.wallMs()));
            latencies.push(performance.now() - t);
          }
        }),
      );
      if (timer !== null) clearTimeout(timer);
      await work;
      loop.disable();
      const elapsed = (performance.now() - started) / 1000;
      latencies.sort((a, b) => a - b);
      const fmt = (ms: number): string => ms.toFixed(2);
      console.log(
        `| ${name} | ${Math.round(latencies.length / elapsed).toLocaleString('en-US')} | ${fmt(percentile(latencies, 0.5))} | ${fmt(percentile(latencies, 0.99))} | ${fmt(latencies.at(-1) ?? 0)} | ${fmt(loop.max / 1e6)} | ${sweptMs === null ? '—' : fmt(sweptMs)} |`,
      );
    };
    console.log(`Disk: ${describeSyncLatency(sync)}; ${expired.toLocaleString('en-US')} expired records; ${writers} writers; ${seconds} s without a sweep; steps of ${step ?? 'the default'}.`);
    console.log('| phase | keyed orders/s | p50 ms | p99 ms | max ms | event loop max delay ms | sweep took ms |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    await phase('no sweep', null);
    await phase('sweep running', async () => {
      const result = await sweeper.runOnce();
      if (result.removed !== expired) throw new Error(`the sweep removed ${result.removed} of ${expired} expired records`);
    });
    await wal.close();
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
