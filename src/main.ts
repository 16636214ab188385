#!/usr/bin/env node
/**
 * `npm start`: runs the server with configuration from the environment and
 * flags, seeds an empty data directory outside production (SEED_DEMO, never
 * with NODE_ENV=production), prints how to try it, and shuts down cleanly
 * on SIGTERM and SIGINT.
 */
import { join } from 'node:path';
import { DEMO_CREDITS, loadConfig, SHUTDOWN_DEADLINE_MS, seedIfEmpty, startReplicatedNode, startServer } from './app/index.js';
import { createLogger, lowerThreadPoolPriority, MS_PER_SECOND } from './platform/index.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.argv.slice(2), process.env);
  } catch (error) {
    process.stderr.write(`credit-order-api: ${(error as Error).message}\n`);
    process.exit(2);
  }
  const priority = await lowerThreadPoolPriority(config.threadpoolNice);
  const log = createLogger(config.logLevel);
  if ('skipped' in priority) log.info({ reason: priority.skipped }, 'thread pool priority left as it is');
  else log.info({ nice: priority.nice, threads: priority.threads }, 'thread pool (LMDB write transactions) runs at a lower priority than the event loop');
  if (config.replicationUrl !== null) return runReplicated(config, log);
  const server = await startServer(config, { log });
  const base = `http://${config.host}:${server.port}`;
  const admin = `http://${config.adminHost}:${server.adminPort}`;
  const out: string[] = [];
  if (server.adminTokenGenerated) {
    // Where, never what: supervisors and terminals keep what a process prints.
    out.push(`Admin token generated into ${join(config.dataDir, 'admin-token')} (mode 0600, readable only by this user).`);
  }
  const seed = config.seedDemo ? await seedIfEmpty(server.context) : null;
  if (seed !== null) {
    const auth = `-H 'X-API-Key: ${seed.apiKey}' -H 'X-API-Secret: ${seed.apiSecret}'`;
    out.push(
      '',
      `Seeded a demo account with ${DEMO_CREDITS} credits. Its secret and API v2 key are shown only this once:`,
      `  API key:    ${seed.apiKey}`,
      `  API secret: ${seed.apiSecret}`,
      `  API v2 key: ${seed.v2Key}`,
      '',
      'Try it:',
      `  curl -s ${base}/api/v1/balance ${auth}`,
      `  curl -s ${base}/api/v1/services ${auth}`,
      `  curl -s -X POST ${base}/api/v1/order ${auth} -H 'Content-Type: application/json' -H 'Idempotency-Key: demo-1' -d '{"service":1,"target":"https://instagram.com/example","quantity":100}'`,
      `  curl -s '${base}/api/v1/status?order=ORDER_ID' ${auth}`,
      `  curl -s ${base}/api/v2 -d key=${seed.v2Key} -d action=add -d service=1 -d link=https://instagram.com/example -d quantity=100`,
    );
  }
  out.push('', `Customer API: ${base}/api/v1   Admin API: ${admin}   OpenAPI: ${base}/api/v1/openapi.json`, '');
  process.stderr.write(out.join('\n') + '\n');

  stopOnSignals(log, () => server.close());
}

/**
 * Replicated mode: this node joins its group as a follower and takes over
 * when the leader's lease runs out; no demo account is seeded (an operator
 * creates accounts through the admin API of the leader).
 */
async function runReplicated(config: ReturnType<typeof loadConfig>, log: ReturnType<typeof createLogger>): Promise<void> {
  const node = await startReplicatedNode(config, { log });
  process.stderr.write(`Node ${config.nodeName} joined its group as a follower. Customer API: http://${config.host}:${config.port}/readyz   Admin API: http://${config.adminHost}:${config.adminPort}\n`);
  void node.leading.then(() => log.info({ node: config.nodeName }, 'serving as the leader'));
  stopOnSignals(log, () => node.close());
}

/** SIGTERM and SIGINT: a clean stop within SHUTDOWN_DEADLINE_MS, else exit 1. */
function stopOnSignals(log: ReturnType<typeof createLogger>, close: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests and syncing');
    const deadline = setTimeout(() => {
      log.error(`shutdown took longer than ${SHUTDOWN_DEADLINE_MS / MS_PER_SECOND} s; exiting`);
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    close().then(
      () => {
        clearTimeout(deadline);
        log.info('stopped cleanly');
        process.exit(0);
      },
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`credit-order-api: ${(error as Error).message}\n`);
  process.exit(1);
});
