/**
 * The order path in this process, without HTTP: what the event loop does
 * for an order between reading its headers and body and writing its answer.
 * The real server is started on a temporary directory (its listeners stay
 * idle); each order is authenticated by key and secret, its JSON body
 * parsed and checked, sent to its wallet's actor, and answered (rendered)
 * once its commit is durable. 64 accounts each send one order per block,
 * as 64 connections would, and each block waits for its sync. The figure is
 * the main thread's CPU per order (Linux schedstat), so the fsync waits and
 * lmdb-js's write thread are not in it; a profile of this run
 * (`node --cpu-prof dist/bench/micro/run.js orderPath`) shows where the
 * event loop's time goes.
 *
 * Only what main's server already offers is used, so the same file runs
 * against another build's `src/` for an A/B of the whole path.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/app/config.js';
import { startServer, type Server } from '../../src/app/server.js';
import { createLogger } from '../../src/platform/log.js';
import { withServiceDefaults, type ServiceRecord } from '../../src/ledger/index.js';
import { parseJson } from '../../src/http/transport/json-request.js';
import { checkOrderInput } from '../../src/http/orders/order-input.js';
import { orderRequest } from '../../src/http/orders/order-submit.js';
import { renderAnswer } from '../../src/http/transport/answer.js';

const CONNECTIONS = 64;
const BLOCKS_PER_ROUND = 150;

/** Nanoseconds of CPU this process's main thread has run (Linux schedstat: the event loop's own time, not lmdb-js's write thread). */
export function mainThreadNs(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
}

/** A server in this process on a fresh directory, quiet, with wallets large enough for any run. */
export async function benchServer(): Promise<{ server: Server; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'coa-bench-order-path-'));
  const config = { ...loadConfig([], {}), port: 0, adminPort: 0, dataDir: dir, adminToken: 'bench', seedDemo: false, walPreallocateMb: 0, defaultRateLimitPerMinute: 100_000_000 };
  const server = await startServer(config, { log: createLogger('silent') });
  return {
    server,
    close: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An account with a funded wallet, loaded, with its key and secret. */
export async function fundedAccount(server: Server, name: string): Promise<{ apiKey: string; apiSecret: string }> {
  const { account, apiSecret } = await server.context.registry.create(name);
  await account.actor.send({ kind: 'credit', amount: 1_000_000_000_000_000, reason: 'bench' })!.durable;
  return { apiKey: account.profile.apiKey, apiSecret };
}

async function benchService(server: Server): Promise<ServiceRecord> {
  const saved = await server.context.catalog.save(null, (_current, id) =>
    withServiceDefaults({ id, platform: 'instagram', name: 'Followers', rate: 100_000, min: 1, max: 1_000_000, enabled: true }),
  );
  return saved as ServiceRecord;
}

/** One order as the v1 handler takes it once its headers and body are in: authenticate, parse, check, decide; its answer once durable. */
function placeOne(server: Server, creds: { apiKey: string; apiSecret: string }, body: Buffer, n: number): Promise<void> {
  const ctx = server.context;
  const account = ctx.registry.authenticate(creds.apiKey, creds.apiSecret)!;
  const parsed = parseJson('application/json', body);
  if (!parsed.ok) throw new Error('the bench body is JSON');
  const checked = checkOrderInput(parsed.value, ctx.limits.targetCharsMax, (id) => ctx.catalog.get(id));
  if (!checked.ok) throw new Error('the bench order is valid');
  const requestId = `req_bench${n}`;
  const delivery = account.actor.send({ kind: 'order', requestId, channel: 'api', request: orderRequest(checked.payload, checked.service, null) })!;
  return delivery.durable!.then(() => {
    if (renderAnswer(delivery.decision.outcome, requestId).status !== 201) throw new Error('the bench order is placed');
  });
}

/** Main-thread ns of CPU per order over `blocks` blocks of one order per connection. */
export async function orderPathRound(server: Server, accounts: { apiKey: string; apiSecret: string }[], body: Buffer, blocks: number): Promise<number> {
  let n = 0;
  const before = mainThreadNs();
  for (let b = 0; b < blocks; b++) {
    const placed: Promise<void>[] = [];
    for (const creds of accounts) placed.push(placeOne(server, creds, body, n++));
    await Promise.all(placed);
  }
  return (mainThreadNs() - before) / n;
}

/** The whole in-process order path, in rounds (the first is a warm-up). */
export async function orderPath(): Promise<void> {
  const { server, close } = await benchServer();
  try {
    const service = await benchService(server);
    const accounts = [];
    for (let i = 0; i < CONNECTIONS; i++) accounts.push(await fundedAccount(server, `bench-${i}`));
    const body = Buffer.from(JSON.stringify({ service: service.id, target: 'https://instagram.com/p/abcdef', quantity: 1000 }));
    await orderPathRound(server, accounts, body, BLOCKS_PER_ROUND);
    process.stdout.write(`\n## the order path in process (main-thread ns of CPU per order, ${CONNECTIONS} accounts, blocks of one order each)\n\n| round | ns per order |\n|---|---:|\n`);
    for (let round = 1; round <= 5; round++) {
      process.stdout.write(`| ${round} | ${Math.round(await orderPathRound(server, accounts, body, BLOCKS_PER_ROUND))} |\n`);
    }
  } finally {
    await close();
  }
}
