/**
 * A replicated node's fail-stop waits, as a single node's does, for the
 * writes handed to its LMDB store to settle before `exit(1)`: exiting while
 * lmdb-js's write thread runs can kill the process in lmdb-js's native
 * teardown instead (docs/RELIABILITY.md). The node runs in this process on
 * a real PostgreSQL pair with its exit injected; the store is the leader's,
 * the one it runs at the time of the fault.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.js';
import { startReplicatedNode, type ReplicatedNode } from '../../src/app/replicated-node.js';
import { createLogger } from '../../src/platform/log.js';
import { GROUP_TOKEN, type Group, type GroupNode, postgresMissing, type Readiness, REPLICA_POLL_MS, REPLICA_WAIT_MS, useGroup } from '../helpers/replicated-group.js';
import { waitFor } from '../helpers/wait-for.js';

const missing = await postgresMissing("the replicated node's fail-stop test");

/** The pino level of a fatal line. */
const FATAL_LEVEL = 60;

interface FatalLine {
  level: number;
  msg: string;
  err?: { message: string };
}

/** A node of `group` in this process, on ephemeral ports, whose exit and fatal log lines the test observes. */
async function startNode(group: Group, dir: string, exit: (code: number) => void, onFatalLine: (line: FatalLine) => void): Promise<ReplicatedNode> {
  const env = { REPLICATION_URL: group.url, NODE_NAME: 'a', ADMIN_TOKEN: GROUP_TOKEN, ...group.keys };
  const config = { ...loadConfig([], env), host: '127.0.0.1', port: 0, adminHost: '127.0.0.1', adminPort: 0, dataDir: dir, seedDemo: false, walPreallocateMb: 1 };
  // pino writes each line to its destination synchronously, inside the log call.
  const log = createLogger('fatal', {
    write(text: string) {
      const line = JSON.parse(text) as FatalLine;
      if (line.level === FATAL_LEVEL) onFatalLine(line);
    },
  });
  return startReplicatedNode(config, { log, exit, sweepEveryMs: null, leaseSweepEveryMs: null, subscriptionSweepEveryMs: null });
}

/** The node's current server, addressed as the group fixture's helpers expect. */
function addressOf(node: ReplicatedNode, dir: string): GroupNode {
  const { port, adminPort } = node.server;
  return { name: 'a', dataDir: dir, port, adminPort, url: `http://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${adminPort}`, process: null };
}

describe.skipIf(missing !== null)("a replicated node's fail-stop", () => {
  const setup = useGroup();
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('exits with status 1 once, only after the writes handed to the leader\'s store have committed and flushed; a second fault adds no exit', async () => {
    const g = setup.group();
    const dir = mkdtempSync(join(tmpdir(), 'coa-node-fail-stop-'));
    const events: string[] = [];
    const exits: number[] = [];
    const fatals: FatalLine[] = [];
    let node: ReplicatedNode | null = null;
    // Handed to LMDB inside the first fatal log line, just before the handler decides when to exit: still in flight then.
    const handWrite = (): void => {
      const store = node!.server.context.store;
      void store.tables.meta.put('fail-stop-probe', 1).then(
        () => {
          events.push('committed');
          void store.root.flushed.then(() => events.push('flushed'));
        },
        () => events.push('commit failed'),
      );
    };
    node = await startNode(
      g,
      dir,
      (code) => {
        events.push('exit');
        exits.push(code);
      },
      (line) => {
        fatals.push(line);
        if (fatals.length === 1) handWrite();
      },
    );
    cleanups.push(async () => {
      await node!.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    });
    await waitFor('the node to take the lease and lead', () => node!.role === 'leader', REPLICA_WAIT_MS, () => `role ${node!.role}`);
    const leader = addressOf(node, dir);
    let ready: Readiness | null = null;
    const serving = async (): Promise<boolean> => (ready = await g.readiness(leader)).status === 200;
    await waitFor('the leader to answer /readyz 200 (its lease confirmed)', serving, REPLICA_WAIT_MS, () => `last answer ${JSON.stringify(ready)}`, REPLICA_POLL_MS);
    const customer = await g.customer(leader);
    expect((await g.order(leader, customer, 1))?.status).toBe(201);

    // From now on the leader's orders table refuses to store a record: the next order's LMDB commit fails after its append to PostgreSQL.
    const orders = node.server.context.store.tables.orders as unknown as { encoder: { encode(value: unknown): Uint8Array } };
    orders.encoder.encode = () => {
      throw new Error('the orders table cannot store this record (injected)');
    };
    void g.order(leader, customer, 2);
    await waitFor('the failed commit to stop the node', () => exits.length > 0, REPLICA_WAIT_MS, () => `events ${events.join(', ')}; ${fatals.length} fatal lines`);
    expect(events).toEqual(['committed', 'flushed', 'exit']);
    expect(exits).toEqual([1]);
    expect(fatals[0]!.msg).toBe('stopping this node so that a restart rejoins the group as a follower');

    // Another node takes the lease: the renewal finds it gone, a second fault, logged, and no second exit.
    const sql = postgres(g.url, { max: 1, onnotice: () => {} });
    try {
      await sql`update coa_leader set node = 'elsewhere', epoch = epoch + 1 where id = 1`;
    } finally {
      await sql.end();
    }
    await waitFor('the lost lease to be reported as a second fault', () => fatals.length === 2, REPLICA_WAIT_MS, () => `${fatals.length} fatal lines`);
    expect(fatals[1]!.err?.message).toContain('lost the lease');
    expect(exits).toEqual([1]);
  }, 120_000);
});
