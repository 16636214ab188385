/**
 * A replicated group for tests: a real PostgreSQL primary with a
 * synchronous standby (scripts/cluster/postgres.ts), and nodes that are
 * real server processes on fixed loopback ports (a node listens on the same
 * ports as follower and as leader), each with its own data directory.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerProcess } from '../../scripts/crash/server-process.js';
import type { PgPair } from '../../scripts/cluster/postgres.js';
import { spawnServer } from './server-process.js';
import { requireTool } from './tools.js';

type PostgresModule = typeof import('../../scripts/cluster/postgres.js');

async function postgresModule(): Promise<PostgresModule> {
  return (await import('../../dist/scripts/cluster/postgres.js' as string)) as PostgresModule;
}

/** Why `neededBy` cannot run here (a SKIPPED line is printed; under CI=true it fails instead), or null when it can. */
export async function postgresMissing(neededBy = 'the replication tests'): Promise<string | null> {
  return requireTool('postgresql', neededBy);
}

export interface GroupNode {
  name: string;
  dataDir: string;
  port: number;
  adminPort: number;
  url: string;
  adminUrl: string;
  process: ServerProcess | null;
}

export interface Readiness {
  status: number;
  body: { ok: boolean; role: string; node: string; synchronous_standby?: boolean | null } | null;
}

export interface Customer {
  service: number;
  id: number;
  key: string;
  secret: string;
}

export const GROUP_TOKEN = 'group-admin-token-for-tests';

/**
 * The deadline of a wait on a replicated group (a leader elected, the log
 * applied on a follower, orders acknowledged through PostgreSQL's
 * synchronous standby): real processes and a real database on a loaded
 * machine, so generous; it bounds a hang and measures nothing.
 */
export const REPLICA_WAIT_MS = 30_000;

/** How often such a wait asks again: each look is a request to a node or a query to PostgreSQL. */
export const REPLICA_POLL_MS = 100;
let groups = 0;

export class Group {
  readonly keys = { WEBHOOKS_SECRET_KEY: randomBytes(32).toString('base64'), ORDER_ID_KEY: randomBytes(16).toString('base64') };
  readonly nodes = new Map<string, GroupNode>();
  private readonly dirs: string[] = [];

  private constructor(
    readonly pg: PgPair,
    readonly url: string,
  ) {}

  /** A PostgreSQL primary with a synchronous standby, for the groups of one test file. */
  static async startPostgres(): Promise<PgPair> {
    const pg = await postgresModule();
    return pg.PgPair.start();
  }

  /** A new group with a database of its own on `pg`. */
  static async create(pg: PgPair): Promise<Group> {
    return new Group(pg, await pg.database(`group_${++groups}`));
  }

  /** A node's environment: the group's URL and keys, its name and ports. */
  env(node: GroupNode, extra: Record<string, string> = {}): Record<string, string> {
    return { REPLICATION_URL: this.url, NODE_NAME: node.name, PORT: String(node.port), ADMIN_PORT: String(node.adminPort), ...this.keys, ...extra };
  }

  /** Starts (or restarts, on its own data directory) a node and waits until it listens. */
  async startNode(name: string, extra: Record<string, string> = {}, dataDir?: string): Promise<GroupNode> {
    let node = this.nodes.get(name);
    if (node === undefined) {
      const { freePort } = await postgresModule();
      const dir = dataDir ?? mkdtempSync(join(tmpdir(), `coa-node-${name}-`));
      this.dirs.push(dir);
      const [port, adminPort] = [await freePort(), await freePort()];
      node = { name, dataDir: dir, port, adminPort, url: `http://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${adminPort}`, process: null };
      this.nodes.set(name, node);
    }
    node.process = await spawnServer(node.dataDir, GROUP_TOKEN, this.env(node, extra));
    return node;
  }

  node(name: string): GroupNode {
    const node = this.nodes.get(name);
    if (node === undefined) throw new Error(`no node ${name}`);
    return node;
  }

  async readiness(node: GroupNode): Promise<Readiness> {
    try {
      const response = await fetch(`${node.url}/readyz`, { signal: AbortSignal.timeout(2_000) });
      return { status: response.status, body: (await response.json()) as Readiness['body'] };
    } catch {
      return { status: 0, body: null };
    }
  }

  /** Waits until one of `names` answers /readyz 200 as the leader; returns it and how long it took. */
  async waitLeader(names: string[], deadlineMs = REPLICA_WAIT_MS): Promise<{ node: GroupNode; waitedMs: number }> {
    const started = performance.now();
    for (;;) {
      for (const name of names) {
        const node = this.node(name);
        const ready = await this.readiness(node);
        if (ready.status === 200 && ready.body?.role === 'leader') return { node, waitedMs: performance.now() - started };
      }
      if (performance.now() - started > deadlineMs) throw new Error(`no leader among ${names.join(', ')} within ${deadlineMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Calls a node's admin API. */
  async admin(node: GroupNode, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${node.adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${GROUP_TOKEN}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await response.json() };
  }

  /** A service (0.001 credits a unit, cancel and refill) and an account with `credits`, made through `node`'s admin API. */
  async customer(node: GroupNode, credits = 100): Promise<Customer> {
    const service = (await this.admin(node, 'POST', '/admin/v1/services', { platform: 'x', name: 'x', rate: 0.001, min: 1, max: 1000, cancel: true, refill: true })).body.service.id as number;
    const created = (await this.admin(node, 'POST', '/admin/v1/accounts', { name: 'customer' })).body;
    await this.admin(node, 'POST', `/admin/v1/accounts/${created.account.id}/credits`, { amount: credits, reason: 'test' });
    return { service, id: created.account.id, key: created.api_key, secret: created.api_secret };
  }

  /** Places an order of `quantity` units; null when the request found no server. */
  async order(node: GroupNode, customer: Customer, n: number, quantity = 100): Promise<{ status: number; body: any } | null> {
    try {
      const res = await fetch(`${node.url}/api/v1/order`, {
        method: 'POST',
        headers: { 'x-api-key': customer.key, 'x-api-secret': customer.secret, 'content-type': 'application/json' },
        body: JSON.stringify({ service: customer.service, target: `https://example.com/${n}`, quantity }),
        signal: AbortSignal.timeout(20_000),
      });
      return { status: res.status, body: await res.json() };
    } catch {
      return null;
    }
  }

  /** Every acknowledged order is on `node` with its charge, and the wallet holds exactly the credits minus their charges. */
  async expectAcknowledged(node: GroupNode, customer: Customer, acked: { order: string; charge: number }[], credits = 100): Promise<string[]> {
    const problems: string[] = [];
    let charged = 0;
    for (const ack of acked) {
      const shown = await this.admin(node, 'GET', `/admin/v1/orders/${ack.order}`);
      if (shown.status !== 200) problems.push(`acknowledged order ${ack.order} is missing on ${node.name}`);
      else if (shown.body.order.charge !== ack.charge) problems.push(`order ${ack.order} charged ${shown.body.order.charge}, acknowledged ${ack.charge}`);
      charged += Math.round(ack.charge * 1e6);
    }
    const account = (await this.admin(node, 'GET', `/admin/v1/accounts/${customer.id}`)).body.account;
    const orders = (await this.admin(node, 'GET', `/admin/v1/orders?status=pending&limit=500`)).body.orders as { charge: number }[];
    let stored = 0;
    for (const o of orders) stored += Math.round(o.charge * 1e6);
    if (Math.round(account.credits * 1e6) !== credits * 1e6 - stored) problems.push(`wallet holds ${account.credits}, its stored orders say ${(credits * 1e6 - stored) / 1e6}`);
    if (stored < charged) problems.push(`stored orders charge ${stored} micro-credits, less than the ${charged} acknowledged`);
    const verify = await this.admin(node, 'GET', '/admin/v1/verify');
    if (verify.status !== 200) problems.push(`verify: ${verify.status} ${JSON.stringify(verify.body)}`);
    return problems;
  }

  /** Node `a` started and leading, node `b` following, and a funded customer made on the leader. */
  async leaderAndFollower(extra: Record<string, string> = {}): Promise<{ leader: GroupNode; follower: GroupNode; customer: Customer }> {
    await this.startNode('a', extra);
    const { node: leader } = await this.waitLeader(['a']);
    const follower = await this.startNode('b', extra);
    return { leader, follower, customer: await this.customer(leader) };
  }

  /** SIGKILL, and wait for the exit. */
  async kill(name: string): Promise<void> {
    const node = this.node(name);
    const proc = node.process;
    if (proc === null) return;
    proc.child.kill('SIGKILL');
    await proc.exited;
    node.process = null;
  }

  /** Kills every node (SIGCONT first, for one that was stopped) and removes their data. */
  async stop(): Promise<void> {
    for (const node of this.nodes.values()) {
      if (node.process === null) continue;
      node.process.child.kill('SIGCONT');
      node.process.child.kill('SIGKILL');
      await node.process.exited;
    }
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A PostgreSQL pair for one test file and one group on it, started before
 * its tests and stopped after them.
 */
export function useGroup(): { pg: () => PgPair; group: () => Group } {
  let pg: PgPair | undefined;
  let group: Group | undefined;
  beforeAll(async () => {
    pg = await Group.startPostgres();
    group = await Group.create(pg);
  }, 120_000);
  afterAll(async () => {
    await group?.stop();
    await pg?.stop();
  }, 60_000);
  return { pg: () => pg!, group: () => group! };
}
