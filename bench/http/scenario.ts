/**
 * A scenario session: a fresh data directory, the real server on it, funded
 * accounts (seeded through the admin API or directly into LMDB), for the
 * mixed scenario one order per account placed beforehand (their ids are
 * what the status polls ask for), and the load generator configured for
 * the scenario. Measured runs go through measure.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { many } from './client.js';
import { startRunner, type Runner } from './loadgen.js';
import { measureRun, type RunReport } from './measure.js';
import { memory, type Memory } from './procstat.js';
import type { LoadResult, RunnerAccount, RunnerConfig, Scenario } from './protocol.js';
import { RATE_MICRO, seedDirect, seedViaAdmin, spreadIndexes, type Seeded } from './seed.js';
import { killServer, startServer, stopServer, type ServerProcess } from './server-process.js';
import { f0, f1, log, onInterrupt, type QuietOptions } from './util.js';

export interface SessionOptions {
  scenario: Scenario;
  /** Accounts in the data set. */
  accounts: number;
  /** At most this many of them (spread evenly) get load (default: all). */
  loadAccounts?: number;
  connections: number;
  /** Requests a second offered in all, spread evenly in time; null or absent: as many as the connections can make. */
  rate?: number | null;
  mode: 'prebuilt' | 'rotate';
  /** Quantity per order; the service rate is 0.001. */
  quantity: number;
  seed: 'admin' | 'direct';
  seedConcurrency?: number;
  syncMode?: string | null;
  serverEntry?: string;
  profDir?: string | null;
  keepData?: boolean;
  readyTimeoutMs?: number;
  /** A receiver URL: each load account registers one webhook endpoint (order.updated) there before the runs. */
  webhooks?: string | null;
  /** Only this many load accounts (spread evenly) register one; null or absent: all. */
  webhookAccounts?: number | null;
  /** Register the endpoints disabled: the same admin requests, no messages. */
  webhooksDisabled?: boolean;
}

export interface Session {
  options: SessionOptions;
  dataDir: string;
  server: ServerProcess;
  runner: Runner;
  seeded: Seeded;
  /** Accounts the load generator uses. */
  loadAccounts: number;
  /** Seconds spent placing the mixed scenario's first orders (0 otherwise). */
  primeS: number;
  chargeMicro: bigint;
  /** Unmeasured load; throws if no order succeeded. */
  warmup(durationS: number, connections?: number): Promise<LoadResult>;
  measure(label: string, durationS: number, quiet: QuietOptions, extra?: { connections?: number; ledger?: boolean }): Promise<RunReport>;
  /** Closes the load generator and stops the server with SIGTERM. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number; finalMemory: Memory | null }>;
  /** Kills whatever is left and removes the data directory (unless kept). Always call it. */
  dispose(): Promise<void>;
}

/** Places one order per account (64 at a time) and records each account's order id. */
async function primeOrders(server: ServerProcess, serviceId: number, quantity: number, accounts: RunnerAccount[]): Promise<void> {
  await many(
    accounts.length,
    (i) => ({
      method: 'POST',
      url: `${server.baseUrl}/api/v1/order`,
      headers: { 'Content-Type': 'application/json', 'X-API-Key': accounts[i]!.key, 'X-API-Secret': accounts[i]!.secret },
      body: JSON.stringify({ service: serviceId, target: `https://example.com/prime/${i}`, quantity }),
    }),
    (i, reply) => {
      if (reply.status !== 201) throw new Error(`placing the first order of an account answered ${reply.status}: ${reply.text.slice(0, 300)}`);
      accounts[i]!.orderId = (JSON.parse(reply.text) as { order: string }).order;
    },
  );
}

/** One webhook endpoint per account (64 registrations at a time), through the admin API; `enabled: false` for the control. */
async function registerWebhooks(server: ServerProcess, url: string, ids: number[], enabled: boolean): Promise<void> {
  await many(
    ids.length,
    (i) => ({
      method: 'POST',
      url: `${server.adminUrl}/admin/v1/accounts/${ids[i]!}/webhooks`,
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${server.token}` },
      body: JSON.stringify({ url, events: ['order.updated'], enabled }),
    }),
    (_i, reply) => {
      if (reply.status !== 201) throw new Error(`registering a webhook answered ${reply.status}: ${reply.text.slice(0, 300)}`);
    },
  );
}

export async function openSession(options: SessionOptions): Promise<Session> {
  const dataDir = mkdtempSync(join(tmpdir(), 'credit-order-bench-'));
  let server: ServerProcess | null = null;
  let runner: Runner | null = null;
  let configFile: string | null = null;
  const unregister = onInterrupt(() => {
    runner?.child.kill('SIGKILL');
    server?.child.kill('SIGKILL');
    if (configFile !== null) rmSync(configFile, { force: true });
    if (options.keepData !== true) rmSync(dataDir, { recursive: true, force: true });
  });
  const dispose = async (): Promise<void> => {
    if (runner !== null) runner.child.kill('SIGKILL');
    if (server !== null) await killServer(server);
    if (configFile !== null) rmSync(configFile, { force: true });
    if (options.keepData === true) log(`kept ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
    unregister();
  };
  try {
    const serverOptions = {
      syncMode: options.syncMode ?? null,
      ...(options.serverEntry === undefined ? {} : { serverEntry: options.serverEntry }),
      profDir: options.profDir ?? null,
      ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }),
    };
    let seeded: Seeded;
    if (options.seed === 'direct') {
      seeded = await seedDirect(dataDir, options.accounts);
      server = await startServer(dataDir, serverOptions);
    } else {
      server = await startServer(dataDir, serverOptions);
      seeded = await seedViaAdmin(server, options.accounts, options.seedConcurrency ?? 64);
    }
    log(
      `[${options.scenario}] server pid ${server.pid} ready in ${f0(server.readyMs)} ms; ${f0(seeded.count)} accounts seeded (${seeded.how}) in ${f1(seeded.seconds)} s; data ${dataDir}`,
    );
    const indexes = spreadIndexes(seeded.count, options.loadAccounts ?? seeded.count);
    const accounts: RunnerAccount[] = indexes.map((i) => {
      const a = seeded.account(i);
      return { key: a.key, secret: a.secret, v2Key: a.v2Key };
    });
    if (options.webhooks != null) {
      const started = performance.now();
      const hooked = spreadIndexes(indexes.length, options.webhookAccounts ?? indexes.length).map((j) => seeded.account(indexes[j]!).id);
      await registerWebhooks(server, options.webhooks, hooked, options.webhooksDisabled !== true);
      log(`[${options.scenario}] registered a${options.webhooksDisabled === true ? ' disabled' : ''} webhook endpoint for each of ${f0(hooked.length)} accounts in ${f1((performance.now() - started) / 1000)} s`);
    }
    let primeS = 0;
    if (options.scenario === 'mixed') {
      const started = performance.now();
      await primeOrders(server, seeded.serviceId, options.quantity, accounts);
      primeS = (performance.now() - started) / 1000;
      log(`[mixed] placed one order for each of ${f0(accounts.length)} accounts in ${f1(primeS)} s (the ids the status polls ask for)`);
    }
    configFile = `${dataDir}-runner.json`;
    const config: RunnerConfig = {
      baseUrl: server.baseUrl,
      connections: options.connections,
      rate: options.rate ?? null,
      serviceId: seeded.serviceId,
      quantity: options.quantity,
      mode: options.mode,
      scenario: options.scenario,
      accounts,
    };
    writeFileSync(configFile, JSON.stringify(config), { mode: 0o600 });
    runner = await startRunner(configFile);
    const chargeMicro = BigInt(options.quantity) * RATE_MICRO;
    const liveServer = server;
    const liveRunner = runner;
    return {
      options,
      dataDir,
      server: liveServer,
      runner: liveRunner,
      seeded,
      loadAccounts: accounts.length,
      primeS,
      chargeMicro,
      async warmup(durationS, connections) {
        const warm = await liveRunner.run('warm-up', durationS, connections ?? options.connections);
        log(`[${options.scenario}] warm-up: ${f0(warm.completed / warm.durationS)} req/s, ${f0(warm.non2xx)} non-2xx, ${f0(warm.errors)} errors`);
        if ((warm.byKind.order?.ok2xx ?? 0) === 0) throw new Error(`no order succeeded during the warm-up; status codes ${JSON.stringify(warm.statusCodes)}`);
        return warm;
      },
      measure(label, durationS, quiet, extra = {}) {
        return measureRun(liveServer, liveRunner, {
          ...quiet,
          label,
          scenario: options.scenario,
          durationS,
          connections: extra.connections ?? options.connections,
          chargeMicro: extra.ledger === false ? null : chargeMicro,
        });
      },
      async stop() {
        await liveRunner.close();
        runner = null;
        const finalMemory = memory(liveServer.pid);
        const stopped = await stopServer(liveServer);
        server = null;
        return { ...stopped, finalMemory };
      },
      dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}
