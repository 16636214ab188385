/**
 * `npm run bench:replication`: durable orders/s of a leader that appends
 * every group-commit batch to PostgreSQL (a primary with a synchronous
 * standby, both on this machine) against the same build standalone, in one
 * run: alternated (standalone, replicated, replicated, standalone, …), a
 * fresh server each time, several short runs of durable orders at 64
 * connections each. Prints both means, replicated ÷ standalone with its
 * standard error (target ≥ 0.50, stretch 0.80) and the disk's sync latency.
 *
 * The PostgreSQL pair (scripts/cluster/postgres.ts: fsync, synchronous
 * commit and full-page writes on, the standby synchronous) starts once,
 * before the first replicated server, in a temporary directory on the same
 * disk as the servers' data; each replicated server gets a database of its
 * own, so it leads a new group of one node. Both variants' accounts are
 * written straight into LMDB before the server starts (`--seed direct`), so
 * they are the leader's local state and not in the group's log: the bench
 * measures the order path, not a group another node could join.
 *
 * Beside the disk's sync latency it prints the PostgreSQL pair's own
 * commit latency: one 4 KiB row inserted and committed at a time (the
 * primary's WAL flush, the standby's receipt and flush, and the round trip
 * back), the floor under every batch the replicated leader appends.
 */
import { randomBytes } from 'node:crypto';
import { PgPair } from '../../scripts/cluster/postgres.js';
import { variant } from './interleave.js';
import { SERVER_MAIN } from './server-process.js';
import { compareTwo } from './two-variants.js';
import { f2, log, onInterrupt } from './util.js';

const PROBE_COMMITS = 200;
const PROBE_ROW_BYTES = 4096;

let pair: PgPair | null = null;
let databases = 0;
let commitLatency = 'PostgreSQL commit latency not measured (no replicated server ran)';

/** Commits one 4 KiB row at a time into a table of its own on `pg`'s primary; the median and p90 as a sentence. */
async function measureCommitLatency(pg: PgPair): Promise<string> {
  return pg.primary.sql(async (probe) => {
    await probe`create table commit_probe (n int primary key, record bytea not null)`;
    const row = Buffer.alloc(PROBE_ROW_BYTES, 0x5a);
    const timesMs: number[] = [];
    for (let n = 0; n < PROBE_COMMITS; n++) {
      const startedMs = performance.now();
      await probe`insert into commit_probe values (${n}, ${row})`;
      timesMs.push(performance.now() - startedMs);
    }
    timesMs.sort((a, b) => a - b);
    const at = (q: number): number => timesMs[Math.floor(q * timesMs.length)]!;
    return `PostgreSQL commit latency with the synchronous standby ${f2(at(0.5))} ms (median of ${PROBE_COMMITS} single-row 4 KiB inserts, each its own commit; p90 ${f2(at(0.9))} ms)`;
  });
}

const replicated = variant('replicated', SERVER_MAIN, {
  NODE_NAME: 'bench',
  WEBHOOKS_SECRET_KEY: randomBytes(32).toString('base64'),
  ORDER_ID_KEY: randomBytes(16).toString('base64'),
});
replicated.before = async () => {
  if (pair === null) {
    pair = await PgPair.start();
    log(`PostgreSQL primary on port ${pair.primary.port}, synchronous standby on port ${pair.standby.port}, in ${pair.root}`);
    commitLatency = await measureCommitLatency(pair);
    log(commitLatency);
  }
  replicated.env['REPLICATION_URL'] = await pair.database(`bench_${++databases}`);
};
// The servers run detached from this process's group: a Ctrl-C must stop them here.
onInterrupt(() => {
  void pair?.standby.crash();
  void pair?.primary.crash();
});

compareTwo({
  name: 'bench:replication',
  script: 'dist/bench/http/replication.js',
  what: 'mode',
  accountsHelp: 'funded accounts',
  defaultAccounts: '10000',
  variants: [variant('standalone', SERVER_MAIN), replicated],
  ratioName: 'replicated ÷ standalone',
  target: 0.5,
})
  .catch((error: unknown) => {
    process.stderr.write(`bench:replication: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  })
  .then(() => process.stdout.write(`${commitLatency}.\n`))
  .finally(() => pair?.stop());
