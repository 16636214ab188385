/**
 * `npm run cluster`: a replicated group to try on one machine, on loopback.
 *
 * It starts a PostgreSQL primary with a synchronous standby (PgPair), two
 * nodes (the built dist/src/main.js, NODE_NAME a and b, REPLICATION_URL the
 * pair's multi-host URI) sharing one generated admin token, webhook sealing
 * key and order-id key, and HAProxy with deploy/haproxy.cfg in front of
 * them. Once a node leads, it creates a demo service and a funded demo
 * account through the leader's admin API and prints where everything is,
 * the keys and a few curl lines. Ctrl-C (SIGINT) or SIGTERM stops HAProxy,
 * the nodes and PostgreSQL, and removes the temporary directory that holds
 * the nodes' data and logs.
 *
 * Every port is a free loopback port chosen at start; nothing listens on
 * another interface. Authentication to PostgreSQL is `trust` on 127.0.0.1:
 * this is a sandbox, not a deployment (docs/deployment.md describes one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Haproxy, HAPROXY_MISSING, haproxyPresent } from './haproxy.js';
import { findPostgresBin, freePort, PgPair, POSTGRES_MISSING } from './postgres.js';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const LEADER_WAIT_MS = 60_000;
const NODE_STOP_MS = 15_000;
const POLL_MS = 200;
const DEMO_CREDITS = 1_000;

interface Node {
  name: string;
  url: string;
  adminUrl: string;
  child: ChildProcess;
  exited: Promise<void>;
}

interface Cluster {
  root: string;
  token: string;
  pg: PgPair | null;
  nodes: Node[];
  proxy: Haproxy | null;
}

interface Demo {
  service: number;
  key: string;
  secret: string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts one node as a child process; its output goes to `<root>/<name>.log`. */
async function startNode(cluster: Cluster, name: string, env: Record<string, string>): Promise<Node> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const out = createWriteStream(join(cluster.root, `${name}.log`));
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      ...env,
      NODE_NAME: name,
      DATA_DIR: join(cluster.root, `node-${name}`),
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_HOST: '127.0.0.1',
      ADMIN_PORT: String(adminPort),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { name, url: `http://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${adminPort}`, child, exited };
}

/** Waits until one of the nodes answers /readyz 200 as the leader. */
async function waitLeader(nodes: Node[]): Promise<Node> {
  const deadline = Date.now() + LEADER_WAIT_MS;
  for (;;) {
    for (const node of nodes) {
      if (node.child.exitCode !== null) throw new Error(`node ${node.name} exited (code ${node.child.exitCode}) before a leader was chosen; see its log`);
      try {
        const response = await fetch(`${node.url}/readyz`, { signal: AbortSignal.timeout(POLL_MS * 5) });
        const body = (await response.json()) as { role?: string };
        if (response.status === 200 && body.role === 'leader') return node;
      } catch {
        // Not listening yet, or switching from follower to leader.
      }
    }
    if (Date.now() > deadline) throw new Error(`no node became the leader within ${LEADER_WAIT_MS / 1_000} s`);
    await sleep(POLL_MS);
  }
}

async function admin(cluster: Cluster, node: Node, path: string, body: unknown): Promise<any> {
  const response = await fetch(`${node.adminUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cluster.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (response.status >= 300) throw new Error(`admin POST ${path} answered ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

/** A demo service and a funded demo account, made through the leader's admin API (so both nodes have them). */
async function seedDemo(cluster: Cluster, leader: Node): Promise<Demo> {
  const service = await admin(cluster, leader, '/admin/v1/services', { platform: 'instagram', name: 'Demo followers', rate: 0.001, min: 10, max: 100_000 });
  const account = await admin(cluster, leader, '/admin/v1/accounts', { name: 'demo' });
  await admin(cluster, leader, `/admin/v1/accounts/${account.account.id}/credits`, { amount: DEMO_CREDITS, reason: 'npm run cluster demo' });
  return { service: service.service.id as number, key: account.api_key as string, secret: account.api_secret as string };
}

async function start(cluster: Cluster): Promise<{ leader: Node; demo: Demo }> {
  process.stderr.write('Starting a PostgreSQL primary with a synchronous standby…\n');
  cluster.pg = await PgPair.start();
  const env = {
    REPLICATION_URL: cluster.pg.url,
    ADMIN_TOKEN: cluster.token,
    WEBHOOKS_SECRET_KEY: randomBytes(32).toString('base64'),
    ORDER_ID_KEY: randomBytes(16).toString('base64'),
  };
  process.stderr.write('Starting nodes a and b…\n');
  for (const name of ['a', 'b']) cluster.nodes.push(await startNode(cluster, name, env));
  const leader = await waitLeader(cluster.nodes);
  const listen = `127.0.0.1:${await freePort()}`;
  const [a, b] = cluster.nodes.map((node) => node.url.slice('http://'.length));
  cluster.proxy = await Haproxy.start(listen, a!, b!);
  return { leader, demo: await seedDemo(cluster, leader) };
}

function describe(cluster: Cluster, leader: Node, demo: Demo): string {
  const url = cluster.proxy!.url;
  const auth = `-H 'X-API-Key: ${demo.key}' -H 'X-API-Secret: ${demo.secret}'`;
  return [
    '',
    `Cluster running (node data and logs in ${cluster.root}).`,
    `  Customer API (HAProxy): ${url}`,
    ...cluster.nodes.map((n) => `  Node ${n.name}: customer ${n.url}, admin ${n.adminUrl}${n === leader ? ' (leader)' : ''}`),
    `  PostgreSQL: ${cluster.pg!.url} (primary ${cluster.pg!.primary.port}, synchronous standby ${cluster.pg!.standby.port})`,
    `  Admin token: ${cluster.token}`,
    `  Demo API key: ${demo.key}`,
    `  Demo API secret: ${demo.secret}`,
    `  Demo service: ${demo.service} (${DEMO_CREDITS} credits on the demo account)`,
    '',
    'Try it:',
    `  curl -s ${url}/api/v1/balance ${auth}`,
    `  curl -s -X POST ${url}/api/v1/order ${auth} -H 'Content-Type: application/json' -d '{"service":${demo.service},"target":"https://instagram.com/example","quantity":100}'`,
    ...cluster.nodes.map((n) => `  curl -s ${n.url}/readyz`),
    `  curl -s ${leader.adminUrl}/admin/v1/accounts -H 'Authorization: Bearer ${cluster.token}'`,
    `  kill -9 ${leader.child.pid}   # the leader: the other node takes over behind the same URL within seconds`,
    '',
    'Ctrl-C stops everything.',
    '',
  ].join('\n');
}

async function stopNode(node: Node): Promise<void> {
  if (node.child.exitCode !== null || node.child.signalCode !== null) return;
  node.child.kill('SIGTERM');
  const timer = setTimeout(() => node.child.kill('SIGKILL'), NODE_STOP_MS);
  await node.exited;
  clearTimeout(timer);
}

/** HAProxy, then the nodes, then PostgreSQL; then the temporary directory. */
async function stop(cluster: Cluster): Promise<void> {
  await cluster.proxy?.stop().catch(() => undefined);
  await Promise.all(cluster.nodes.map(stopNode));
  await cluster.pg?.stop().catch((error: unknown) => process.stderr.write(`stopping PostgreSQL: ${(error as Error).message}\n`));
  rmSync(cluster.root, { recursive: true, force: true });
}

async function main(): Promise<void> {
  const missing = findPostgresBin() === null ? POSTGRES_MISSING : haproxyPresent() ? null : HAPROXY_MISSING;
  if (missing !== null) {
    process.stderr.write(`npm run cluster: ${missing}\n`);
    process.exit(1);
  }
  const cluster: Cluster = { root: mkdtempSync(join(tmpdir(), 'coa-cluster-')), token: randomBytes(24).toString('base64url'), pg: null, nodes: [], proxy: null };
  // A signal during the start is acted on once the start is over, so that
  // nothing it was still launching outlives the stop.
  let starting = true;
  let signalled = false;
  const finish = async (code: number): Promise<never> => {
    process.stderr.write('Stopping HAProxy, the nodes and PostgreSQL…\n');
    await stop(cluster);
    process.stderr.write('Stopped; the temporary directory is removed.\n');
    process.exit(code);
  };
  const onSignal = (): void => {
    if (signalled) return;
    signalled = true;
    if (!starting) void finish(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const { leader, demo } = await start(cluster);
    starting = false;
    if (signalled) await finish(0);
    process.stdout.write(describe(cluster, leader, demo));
  } catch (error) {
    process.stderr.write(`npm run cluster: ${(error as Error).message}\n`);
    await finish(1);
  }
}

void main();
