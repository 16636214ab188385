/**
 * What the zero-filled reserve ahead of data.mdb (WAL_PREALLOCATE_MB) does
 * to a commit: the same group commits of log entries on a fresh store with
 * and without the reserve, in interleaved pairs, timed per commit.
 *
 *   node dist/bench/storage/reserve.js [--pairs 5] [--commits 6000] [--entries 27] [--dir /tmp]
 *
 * Each commit is one turn's entries through LmdbGroupCommit, awaited before
 * the next turn (one commit in flight, as on an idle-ish server), so the
 * figure is the commit's own time: pages written, fdatasync, meta page.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { describeSyncLatency, measureSyncLatency } from '../http/sync-latency.js';
import { FileReserve, LmdbGroupCommit, openStore, type WalEntry } from '../../src/wal/index.js';

const { values } = parseArgs({
  options: {
    pairs: { type: 'string', default: '5' },
    commits: { type: 'string', default: '6000' },
    entries: { type: 'string', default: '27' },
    dir: { type: 'string', default: tmpdir() },
  },
});
const pairs = Number(values.pairs);
const commits = Number(values.commits);
const perCommit = Number(values.entries);
for (const [name, n] of [['--pairs', pairs], ['--commits', commits], ['--entries', perCommit]] as const) {
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
}

/** An order.placed event about the size of a real one. */
function entry(n: number): WalEntry {
  return {
    events: [
      {
        type: 'order.placed',
        atMs: 1_700_000_000_000 + n,
        account: 1 + (n % 10_000),
        order: `o${n.toString().padStart(21, '0')}`,
        service: 1,
        quantity: 1000,
        rate: 1000,
        charge: 1000,
        debit: 1000,
        balance: 1_000_000_000 - n,
        channel: 'api',
        idempotencyKey: null,
      },
    ],
    puts: [],
  };
}

async function run(reserveMiB: number): Promise<number> {
  const dir = mkdtempSync(join(values.dir!, 'reserve-bench-'));
  const store = openStore(dir);
  try {
    await store.tables.meta.put('init', 1);
    const reserve = reserveMiB === 0 ? null : new FileReserve(store, { bytes: reserveMiB * 1024 * 1024, onError: (e) => console.error(e) });
    reserve?.fill();
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => console.error(e), onIdle: () => reserve?.idle() });
    let n = 0;
    const started = performance.now();
    for (let c = 0; c < commits; c++) {
      const acks: Promise<void>[] = [];
      for (let i = 0; i < perCommit; i++) acks.push(wal.append(entry(n++)));
      await Promise.all(acks);
    }
    const msPerCommit = (performance.now() - started) / commits;
    await wal.close();
    reserve?.close();
    return msPerCommit;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function meanSe(xs: number[]): string {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, xs.length - 1));
  return `${mean.toFixed(3)} ± ${(sd / Math.sqrt(xs.length)).toFixed(3)}`;
}

const without: number[] = [];
const withReserve: number[] = [];
for (let p = 1; p <= pairs; p++) {
  without.push(await run(0));
  withReserve.push(await run(64));
  console.log(`pair ${p}: growing the file ${without.at(-1)!.toFixed(3)} ms/commit, into the reserve ${withReserve.at(-1)!.toFixed(3)} ms/commit`);
}
console.log(`${commits} commits of ${perCommit} log entries, ${pairs} interleaved pairs, data in ${values.dir}; ${describeSyncLatency(measureSyncLatency(values.dir!))}:`);
console.log(`  growing the file (WAL_PREALLOCATE_MB=0)  ${meanSe(without)} ms per commit`);
console.log(`  into the 64 MiB reserve (the default)    ${meanSe(withReserve)} ms per commit`);
