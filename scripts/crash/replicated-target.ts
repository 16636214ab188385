/**
 * The kill test's `--replicated` target: two nodes of a replicated group on
 * a PostgreSQL primary with a synchronous standby (scripts/cluster). Each
 * kill SIGKILLs the leader; the other node takes over, the killed one is
 * restarted on its own data directory and rejoins as a follower. The clients
 * then talk to the new leader, and every check runs against it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, PgPair } from '../cluster/postgres.js';
import type { CrashTarget } from './kill-cycles.js';
import { spawnServer, type ServerProcess } from './server-process.js';

interface Node {
  name: string;
  dir: string;
  env: Record<string, string>;
  process: ServerProcess | null;
}

async function leads(node: Node): Promise<boolean> {
  if (node.process === null) return false;
  try {
    const res = await fetch(`${node.process.url}/readyz`, { signal: AbortSignal.timeout(1_000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

async function waitLeading(node: Node, deadlineMs: number): Promise<void> {
  const started = performance.now();
  while (!(await leads(node))) {
    if (performance.now() - started > deadlineMs) throw new Error(`node ${node.name} did not take over within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A replicated group as the kill test's target; `takeoverMs` collects how long each takeover took. */
export function replicatedTarget(token: string, takeoverMs: number[] = []): CrashTarget {
  let pg: PgPair | null = null;
  const nodes: Node[] = [];
  let leader = 0;
  const start = async (node: Node): Promise<ServerProcess> => {
    node.process = await spawnServer(node.dir, token, node.env);
    return node.process;
  };
  return {
    async start() {
      pg = await PgPair.start();
      const keys = { WEBHOOKS_SECRET_KEY: randomBytes(32).toString('base64'), ORDER_ID_KEY: randomBytes(16).toString('base64') };
      for (const name of ['a', 'b']) {
        const env = { REPLICATION_URL: pg.url, NODE_NAME: name, PORT: String(await freePort()), ADMIN_PORT: String(await freePort()), ...keys };
        nodes.push({ name, dir: mkdtempSync(join(tmpdir(), `coa-crash-${name}-`)), env, process: null });
      }
      await start(nodes[0]!);
      await waitLeading(nodes[0]!, 30_000);
      await start(nodes[1]!);
      return nodes[0]!.process!;
    },
    async killServing() {
      const dead = nodes[leader]!;
      dead.process!.child.kill('SIGKILL');
      await dead.process!.exited;
      dead.process = null;
      const killedMs = performance.now();
      leader = 1 - leader;
      await waitLeading(nodes[leader]!, 30_000);
      takeoverMs.push(performance.now() - killedMs);
      await start(dead);
      return nodes[leader]!.process!;
    },
    async close() {
      for (const node of nodes) {
        if (node.process !== null && node.process.child.exitCode === null && node.process.child.signalCode === null) {
          node.process.child.kill('SIGKILL');
          await node.process.exited;
        }
        rmSync(node.dir, { recursive: true, force: true });
      }
      await pg?.stop();
    },
  };
}
