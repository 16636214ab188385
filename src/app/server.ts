/**
 * Running one server: storage opened (storage.ts), the parts wired
 * (parts.ts), then the background work and the two uWebSockets.js
 * listeners (customer API and admin API), and the shutdown that stops them
 * in order. Used by `main.ts` and by the tests, which start it on ephemeral
 * ports.
 */
import type { Logger } from 'pino';
import { type AppContext, closeListenSocket, createApp, type ListenSocket, listenExclusive, localPort, mountAdmin, mountCustomerApi, type TemplatedApp } from '../http/index.js';
import { Metrics, type SnapshotSchedule } from '../ops/index.js';
import { createLogger, InvariantError, makePrivateDirectory, reportFault, systemClock } from '../platform/index.js';
import { ACCOUNT_EVICT_EVERY_MS, LEASE_SWEEP_EVERY_MS, SUBSCRIPTION_SWEEP_EVERY_MS, type LeaseSweeper, type SubscriptionSweeper } from '../actors/index.js';
import { type IdempotencySweeper, removeCommitLog, SWEEP_EVERY_MS } from '../wal/index.js';
import { POLL_EVERY_MS, type Webhooks } from '../webhooks/index.js';
import { adminToken } from './admin-token.js';
import type { Config } from './config.js';
import type { ServerOptions } from './options.js';
import { type Availability, buildParts, type Parts } from './parts.js';
import { exitWhenStoreSettles, type SettlingStore } from './fatal-exit.js';
import { FATAL_SETTLE_MS, FOLLOWER_VIEW_REFRESH_MS } from './limits.js';
import { openStorage, type Storage } from './storage.js';

export type { ServerOptions } from './options.js';

export interface Server {
  port: number;
  adminPort: number;
  adminToken: string;
  adminTokenGenerated: boolean;
  context: AppContext;
  sweeper: IdempotencySweeper;
  leases: LeaseSweeper;
  subscriptionSweeper: SubscriptionSweeper;
  webhooks: Webhooks;
  /** The highest log position this node's LMDB has flushed (replicated mode; 0 standalone). */
  flushedTo(): number;
  /** Scheduled snapshots; null when SNAPSHOT_EVERY is not set. */
  snapshots: SnapshotSchedule | null;
  /** The store this server writes to, as a fail-stop waits on it (fatal-exit.ts): a replicated node settles the store of the server it runs at the time of its fault. */
  store: SettlingStore;
  close(): Promise<void>;
}

const FOLLOWING = 'This node follows the leader and does not take requests; send them to the leader (the load balancer does). Retry shortly.';
const LEASE_LAPSED = 'This node cannot confirm its leadership with PostgreSQL right now; retry shortly.';

/** Standalone: always serving. Replicated: the leader while its lease is current; a follower never. */
function availability(config: Config, options: ServerOptions): Availability {
  const node = config.nodeName;
  const replica = options.replica;
  if (replica === undefined) return { unavailable: () => null, readiness: () => ({ ok: true, role: 'standalone', node }) };
  if (replica.kind === 'follower') return { unavailable: () => FOLLOWING, readiness: () => ({ ok: false, role: 'follower', node }) };
  const { leadership } = replica;
  return {
    unavailable: () => (leadership.valid() ? null : LEASE_LAPSED),
    readiness: () => ({ ok: leadership.valid(), role: 'leader', node, synchronous_standby: replica.synchronousStandby() }),
  };
}

/**
 * A follower's admin reads: its parts rebuilt on the store as the log
 * moves (at most every FOLLOWER_VIEW_REFRESH_MS), since the accounts,
 * services and webhook endpoints a server keeps in memory change only
 * through its own wallets otherwise.
 */
function followerView(build: () => Parts, first: Parts): () => AppContext {
  let parts = first;
  let builtMs = performance.now();
  return () => {
    if (performance.now() - builtMs >= FOLLOWER_VIEW_REFRESH_MS) {
      parts.context.ops.close();
      parts = build();
      builtMs = performance.now();
    }
    return parts.context;
  };
}

function listen(app: TemplatedApp, host: string, port: number): Promise<ListenSocket> {
  return new Promise((resolve, reject) => {
    listenExclusive(app, host, port, (socket) => {
      if (socket === false) reject(new Error(`cannot listen on ${host}:${port}; is the port in use?`));
      else resolve(socket);
    });
  });
}

/** The background work: idle-account eviction, the Idempotency-Key sweep and the lease sweep. */
function startBackgroundWork(parts: Parts, options: ServerOptions, log: Logger, onFatal: (error: unknown) => void): void {
  parts.registry.startEviction(ACCOUNT_EVICT_EVERY_MS);
  // Every minute: each sweep removes what expired since the last one, in
  // steps of 1,000 (about 50,000 records a second beside a keyed load), so it keeps up with any keyed order rate the server takes.
  const sweepEveryMs = options.sweepEveryMs === undefined ? SWEEP_EVERY_MS : options.sweepEveryMs;
  if (sweepEveryMs !== null) parts.sweeper.start(sweepEveryMs, (error) => void reportFault({ log, onFatal }, error, 'idempotency sweep failed'));
  const leaseSweepEveryMs = options.leaseSweepEveryMs === undefined ? LEASE_SWEEP_EVERY_MS : options.leaseSweepEveryMs;
  if (leaseSweepEveryMs !== null) parts.leases.start(leaseSweepEveryMs, (error) => void reportFault({ log, onFatal }, error, 'lease sweep failed'));
  const subscriptionSweepEveryMs = options.subscriptionSweepEveryMs === undefined ? SUBSCRIPTION_SWEEP_EVERY_MS : options.subscriptionSweepEveryMs;
  if (subscriptionSweepEveryMs !== null) parts.subscriptionSweeper.start(subscriptionSweepEveryMs, (error) => void reportFault({ log, onFatal }, error, 'subscription sweep failed'));
  parts.webhooks.start(options.webhookPollMs ?? POLL_EVERY_MS);
  parts.snapshots?.start();
}

/** The customer listener and the admin listener, each its own uWS app. */
interface Listeners {
  api: TemplatedApp;
  admin: TemplatedApp;
  apiSocket: ListenSocket;
  adminSocket: ListenSocket;
}

async function startListeners(config: Config, context: AppContext, adminView: AppContext | (() => AppContext)): Promise<Listeners> {
  const api = createApp();
  mountCustomerApi(api, context);
  const admin = createApp();
  mountAdmin(admin, adminView);
  const apiSocket = await listen(api, config.host, config.port);
  const adminSocket = await listen(admin, config.adminHost, config.adminPort);
  return { api, admin, apiSocket, adminSocket };
}

/**
 * Stops accepting, lets every waiting reply go out once its sync is done,
 * then drops the remaining connections and closes LMDB.
 */
async function shutDown(storage: Storage, parts: Parts, listeners: Listeners): Promise<void> {
  parts.startDraining();
  parts.snapshots?.stop();
  parts.context.ops.close();
  await parts.sweeper.stop();
  await parts.leases.stop();
  await parts.subscriptionSweeper.stop();
  parts.registry.stopEviction();
  // Attempts in flight finish (or time out) and their results are committed; held messages wait for the next start.
  await parts.webhooks.stop();
  await storage.replica?.follower?.stop();
  closeListenSocket(listeners.apiSocket);
  closeListenSocket(listeners.adminSocket);
  await storage.wal.close();
  storage.reserve?.close();
  storage.commitLog?.close();
  await new Promise((resolve) => setImmediate(resolve));
  listeners.api.close();
  listeners.admin.close();
  if (storage.commitLog !== null) await storage.store.root.flushed;
  await storage.store.close();
  // LMDB has synced everything on close: the log is no longer needed.
  if (storage.commitLog !== null) removeCommitLog(storage.commitLog.dir);
}

/**
 * The parts, and the webhook sealing key settled before anything is served
 * (a key that cannot open the stored secrets refuses the start). On a
 * refusal the store is closed again, so the caller may retry in-process.
 */
async function prepareParts(build: () => Parts, following: boolean, storage: Storage, log: Logger): Promise<Parts> {
  try {
    const parts = build();
    // A follower changes nothing: the leader adopts the key and its changes reach the follower through the log.
    if (following) return parts;
    for (const endpoint of await parts.webhooks.adoptSealingKey()) {
      log.warn({ webhook: endpoint.id, account: endpoint.account }, 'webhook endpoint given a new secret and disabled: its secret was sealed with a key this server does not have');
    }
    return parts;
  } catch (error) {
    await storage.wal.close();
    storage.reserve?.close();
    storage.commitLog?.close();
    await storage.store.close();
    throw error;
  }
}

/** The composition root: the data directory and admin token, storage, the parts, background work, then the listeners. */
export async function startServer(config: Config, options: ServerOptions = {}): Promise<Server> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.logLevel);
  // Set once the store is open: the fail-stop then lets LMDB's write thread settle before the exit (fatal-exit.ts).
  let opened: Storage['store'] | null = null;
  const onFatal =
    options.onFatal ??
    ((error: unknown) => {
      const what = error instanceof InvariantError ? 'an invariant is broken' : 'a commit failed';
      log.fatal({ err: error }, `${what}; stopping so that a restart recovers exactly the durable state`);
      exitWhenStoreSettles(opened, options.exit ?? process.exit, FATAL_SETTLE_MS);
    });
  makePrivateDirectory(config.dataDir);
  const token = adminToken(config);
  const metrics = new Metrics({ routes: ['/api/v1/balance', '/api/v1/services', '/api/v1/order', '/api/v1/status'] });
  const storage = await openStorage(config, options, log, metrics, onFatal);
  opened = storage.store;
  const serving = availability(config, options);
  const build = (): Parts => buildParts(config, options, storage, clock, log, metrics, token.token, serving, onFatal);
  // The leader's work (sweeps, webhook deliveries, eviction of idle wallets, sealing-key adoption) runs where the wallets are.
  const following = options.replica?.kind === 'follower';
  const parts = await prepareParts(build, following, storage, log);
  if (!following) startBackgroundWork(parts, options, log, onFatal);
  const listeners = await startListeners(config, parts.context, following ? followerView(build, parts) : parts.context);
  log.info(
    { host: config.host, port: localPort(listeners.apiSocket), adminPort: localPort(listeners.adminSocket), accounts: parts.registry.size },
    'listening',
  );
  let closed: Promise<void> | null = null;
  return {
    port: localPort(listeners.apiSocket),
    adminPort: localPort(listeners.adminSocket),
    adminToken: token.token,
    adminTokenGenerated: token.generated,
    context: parts.context,
    sweeper: parts.sweeper,
    leases: parts.leases,
    subscriptionSweeper: parts.subscriptionSweeper,
    webhooks: parts.webhooks,
    flushedTo: () => storage.replica?.flushedTo() ?? 0,
    snapshots: parts.snapshots,
    store: storage.store,
    close() {
      closed ??= shutDown(storage, parts, listeners);
      return closed;
    },
  };
}
