/**
 * Assembles one server: the LMDB store and its group-commit WAL, the
 * account registry with its wallet actors, the service catalogue, and the
 * two uWebSockets.js listeners (customer API and admin API). Used by
 * `main.ts` and by the tests, which start it on ephemeral ports.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { type Clock, createLogger, InvariantError, makePrivateDirectory, systemClock, VERSION } from '../platform/index.js';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Catalog, Registry, type Account, type ActorContext } from '../actors/index.js';
import { ForceJoinVerifier } from '../forcejoin/index.js';
import { Metrics, OperatorJobs } from '../ops/index.js';
import { OrderIds, OrderNumbers } from '../ids/index.js';
import type { Config } from './config.js';
import { AbuseLog, type AppContext, AuthFailureLimiter, buildOpenApi, closeListenSocket, createApp, type ListenSocket, localPort, mountAdmin, mountApi, renderAnswer, SCAN_ENTRIES_MAX, type TemplatedApp } from '../http/index.js';
import { CommitLog, commitLogPresent, FileReserve, IdempotencySweeper, LmdbGroupCommit, LogFirstWal, lastOrderNumber, openStore, recoverCommitLog, removeCommitLog, type Store, type Wal } from '../wal/index.js';
import type { ForceJoinVerdict, IdempotencyRecord, OrderRecord } from '../ledger/index.js';
import { Webhooks } from '../webhooks/index.js';

async function verdictFor(verifier: ForceJoinVerifier, account: Account): Promise<ForceJoinVerdict> {
  const p = account.profile;
  const status = await verifier.status({
    id: p.id,
    telegramUserId: p.telegramUserId ?? null,
    verified: p.forceJoinVerified ?? false,
    exempt: p.forceJoinExempt ?? false,
  });
  if (status.kind === 'joined') return { joined: true };
  return { joined: false, message: status.message, joinLink: status.joinLink, transient: status.kind === 'unavailable' };
}

export interface ServerOptions {
  clock?: Clock;
  log?: Logger;
  /** Called when a commit fails or an invariant breaks; the default logs and exits (fail-stop). */
  onFatal?: (error: unknown) => void;
  /** How the default fail-stop handler ends the process (tests observe it instead). */
  exit?: (code: number) => void;
  /** Replace the WAL (fault injection in tests). */
  wal?: (store: ReturnType<typeof openStore>, onFatal: (error: unknown) => void) => Wal;
  /**
   * How often the Idempotency-Key sweep runs (wall time; 60 s). Null: never
   * by itself (tests on an injected clock call `sweeper.runOnce()`).
   */
  sweepEveryMs?: number | null;
  /**
   * How often (wall time) the webhook dispatcher looks for retries that are
   * due on the clock (250 ms). New messages are sent as soon as they are
   * durable, whatever this is.
   */
  webhookPollMs?: number;
  /** The jitter source of webhook retries, in [0, 1) (tests make it exact). */
  random?: () => number;
  /** Webhook deliveries take only the order path's spare capacity (delivery-allowance.ts; default true; tests that count deliveries turn it off). */
  webhookYield?: boolean;
  /** Queue messages the webhook dispatcher reads ahead (default QUEUE_WINDOW_MAX; tests make it small). */
  webhookWindowMax?: number;
  /** Index entries one filtered admin listing examines (default SCAN_ENTRIES_MAX; tests make it small). */
  adminScanEntriesMax?: number;
}

export interface Server {
  port: number;
  adminPort: number;
  adminToken: string;
  adminTokenGenerated: boolean;
  context: AppContext;
  sweeper: IdempotencySweeper;
  webhooks: Webhooks;
  close(): Promise<void>;
}

function listen(app: TemplatedApp, host: string, port: number): Promise<ListenSocket> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (socket === false) reject(new Error(`cannot listen on ${host}:${port}; is the port in use?`));
      else resolve(socket);
    });
  });
}

/**
 * The secret that turns order storage keys into public ids. Created once,
 * synced before first use, and kept in the store so snapshots carry it.
 */
async function orderIdSecret(store: ReturnType<typeof openStore>): Promise<Buffer> {
  const existing = store.tables.meta.get('orderIdSecret') as Buffer | Uint8Array | undefined;
  if (existing !== undefined) return Buffer.from(existing);
  const secret = OrderIds.newSecret();
  store.tables.meta.putSync('orderIdSecret', secret);
  // With lmdb-js overlapping sync (sync modes other than 'commit') putSync
  // commits without syncing: wait for the flush before any id is given out.
  if (store.syncMode !== 'commit') await store.root.flushed;
  return secret;
}

/** ADMIN_TOKEN, else the token file in the data directory, else a new one written there (0600). */
function adminToken(config: Config): { token: string; generated: boolean } {
  if (config.adminToken !== null) return { token: config.adminToken, generated: false };
  const file = join(config.dataDir, 'admin-token');
  if (existsSync(file)) return { token: readFileSync(file, 'utf8').trim(), generated: false };
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, token + '\n', { mode: 0o600, flag: 'wx' });
  return { token, generated: true };
}

/** Storage and its commit path: the store, the zero-filled reserve, the commit log (sync mode 'log') and the WAL. */
interface Storage {
  store: Store;
  reserve: FileReserve | null;
  commitLog: CommitLog | null;
  wal: Wal;
}

async function openStorage(config: Config, options: ServerOptions, log: Logger, metrics: Metrics, onFatal: (error: unknown) => void): Promise<Storage> {
  if (config.syncMode !== 'log' && commitLogPresent(config.dataDir)) {
    // Acknowledged orders may be in the log alone, and LMDB may hold a
    // commit it never flushed: only sync mode 'log' opens this safely.
    throw new Error(
      `${config.dataDir} holds a commit log: it was last run with WAL_SYNC_MODE=log and did not stop cleanly. Start it with WAL_SYNC_MODE=log (which applies the log and, on a clean stop, removes it), then with any mode.`,
    );
  }
  const store = openStore(config.dataDir, { syncMode: config.syncMode });
  const reserve =
    config.walPreallocateMb === 0
      ? null
      : new FileReserve(store, {
          bytes: config.walPreallocateMb * 1024 * 1024,
          onError: (error) => log.warn({ err: error }, 'could not keep zero-filled space ahead of the data file; commits go on without it'),
        });
  reserve?.fill();
  const observe = (entries: number, syncMs: number): void => metrics.observeBatch(entries, syncMs / 1000);
  if (options.wal !== undefined) return { store, reserve, commitLog: null, wal: options.wal(store, onFatal) };
  if (config.syncMode !== 'log') {
    const wal = new LmdbGroupCommit(store, { onFatal, onBatch: observe, onIdle: () => reserve?.idle() });
    return { store, reserve, commitLog: null, wal };
  }
  // The commit log first, LMDB behind it (src/wal/log-first.ts). LMDB's
  // failures stop the whole path, as the log's do.
  let logFirst: LogFirstWal | null = null;
  const lmdb = new LmdbGroupCommit(store, { onFatal: (error) => (logFirst === null ? onFatal(error) : logFirst.fail(error)), onIdle: () => reserve?.idle() });
  const commitLog = new CommitLog(config.dataDir, { whenApplied: (position) => logFirst!.whenApplied(position) });
  const recovered = await recoverCommitLog(store, commitLog, lmdb);
  if (recovered.replayed > 0) log.info({ records: recovered.replayed, position: recovered.position }, 'applied the commit log\'s tail to LMDB');
  logFirst = new LogFirstWal(commitLog, lmdb, recovered.position, { onFatal, onBatch: observe });
  return { store, reserve, commitLog, wal: logFirst };
}

/** The parts the listeners serve: actors, catalogue, sweeper, force-join, and the context that ties them to HTTP. */
interface Parts {
  context: AppContext;
  registry: Registry;
  sweeper: IdempotencySweeper;
  webhooks: Webhooks;
  /** Set when shutdown begins: new requests are refused with 503. */
  startDraining(): void;
}

function buildParts(config: Config, options: ServerOptions, storage: Storage, secret: Buffer, clock: Clock, log: Logger, metrics: Metrics, adminTokenValue: string, onFatal: (error: unknown) => void): Parts {
  const { store, wal } = storage;
  const webhooks = new Webhooks(
    store,
    wal,
    clock,
    config.dataDir,
    {
      allowHttp: config.webhooksAllowHttp,
      allowPrivate: config.webhooksAllowPrivate,
      secretKey: config.webhooksSecretKey,
      retryHours: config.webhooksRetryHours,
      concurrency: config.webhooksConcurrency,
      timeoutMs: config.webhooksTimeoutMs,
      connectTimeoutMs: config.webhooksConnectTimeoutMs,
      perAccount: config.webhooksPerAccount,
      logKeep: config.webhooksLogKeep,
      busyPercent: config.webhooksBusyPercent,
      busyMinPerSecond: config.webhooksBusyMinPerSecond,
      heldMax: config.webhooksHeldMax,
    },
    {
      ...(options.random === undefined ? {} : { random: options.random }),
      ...(options.webhookWindowMax === undefined ? {} : { windowMax: options.webhookWindowMax }),
      yieldWhenBusy: options.webhookYield ?? true,
      onError: (error, what) => (error instanceof InvariantError ? onFatal(error) : log.error({ err: error }, what)),
    },
  );
  const orderIds = new OrderIds(secret);
  let nextRefillId = 1;
  for (const key of store.tables.refills.getKeys({ reverse: true, limit: 1 })) nextRefillId = Number(key) + 1;
  const readOrder = (id: string): OrderRecord | undefined => {
    const key = orderIds.storageKey(id);
    return key === null ? undefined : (store.tables.orders.get(key) as OrderRecord | undefined);
  };
  const actorContext: ActorContext = {
    wal,
    clock,
    mailboxMax: config.mailboxMax,
    idempotencyRetentionMs: config.idempotencyRetentionHours * 3_600_000,
    readIdempotency: (key) => store.tables.idempotency.get(key) as IdempotencyRecord | undefined,
    readOrder,
    orderKey: (id) => orderIds.storageKey(id) ?? id,
    // The catalogue is created just below; commands reach actors only after start-up.
    readService: (id) => catalog.get(id),
    newOrderId: () => {
      const next = orderIds.next(clock.wallMs());
      return { orderId: next.id, seq: next.seq };
    },
    // Positive and growing; an id given to a refused refill is not reused.
    newRefillId: () => nextRefillId++,
    orderNumbers: new OrderNumbers(lastOrderNumber(store)),
    renderAnswer,
    withWebhookMessages: (events, account, order, refill, atMs) => webhooks.outbox.withMessages(events, account, order, refill, atMs),
  };
  const registry = new Registry(store, wal, clock, actorContext, config.defaultRateLimitPerMinute);
  const sweeper = new IdempotencySweeper(store, wal, clock, actorContext.idempotencyRetentionMs, (tableKey) => registry.idempotencyKeyPending(tableKey));
  const catalog = new Catalog(store, wal, clock);
  const verifier =
    config.forceJoin === null
      ? null
      : new ForceJoinVerifier(config.forceJoin, clock, undefined, {
          onUnavailable: (error) => log.warn({ reason: error.reason }, 'Telegram could not be asked about a force-join membership'),
        });
  let draining = false;
  const context: AppContext = {
    registry,
    catalog,
    store,
    wal,
    clock,
    log,
    limits: {
      bodyBytesMax: config.bodyBytesMax,
      headerBytesMax: config.headerBytesMax,
      targetCharsMax: config.targetCharsMax,
      scanEntriesMax: options.adminScanEntriesMax ?? SCAN_ENTRIES_MAX,
    },
    authFailures: new AuthFailureLimiter(clock, config.authFailuresPerMinute),
    abuse: new AbuseLog(log, clock),
    adminToken: adminTokenValue,
    metrics,
    ops: new OperatorJobs(store.path, (job, memory) => log.info({ job, ...memory }, `${job} finished in its own process`)),
    orderIds,
    readOrder,
    readOrderByNumber: (number) => {
      const id = store.tables.numbers.get(number) as string | undefined;
      return id === undefined ? undefined : readOrder(id);
    },
    openapiBody: JSON.stringify(buildOpenApi(VERSION)),
    currency: config.currency,
    forceJoinVerdict: verifier === null ? null : (account) => verdictFor(verifier, account),
    forceJoinChanged: (id) => verifier?.invalidate(id),
    draining: () => draining,
    idempotencyStats: () => sweeper.stats(),
    webhooks,
    onFatal,
  };
  return {
    context,
    registry,
    sweeper,
    webhooks,
    startDraining: () => {
      draining = true;
    },
  };
}

/** The background work: idle-account eviction and the Idempotency-Key sweep. */
function startBackgroundWork(parts: Parts, options: ServerOptions, log: Logger, onFatal: (error: unknown) => void): void {
  parts.registry.startEviction(60_000);
  // Every minute: each sweep removes what expired since the last one, in
  // steps of 1,000 (about 50,000 records a second beside a keyed load), so it keeps up with any keyed order rate the server takes.
  const sweepEveryMs = options.sweepEveryMs === undefined ? 60_000 : options.sweepEveryMs;
  if (sweepEveryMs !== null) parts.sweeper.start(sweepEveryMs, (error) => (error instanceof InvariantError ? onFatal(error) : log.error({ err: error }, 'idempotency sweep failed')));
  parts.webhooks.start(options.webhookPollMs ?? 250);
}

/** The customer listener and the admin listener, each its own uWS app. */
interface Listeners {
  api: TemplatedApp;
  admin: TemplatedApp;
  apiSocket: ListenSocket;
  adminSocket: ListenSocket;
}

async function startListeners(config: Config, context: AppContext): Promise<Listeners> {
  const api = createApp();
  mountApi(api, context);
  const admin = createApp();
  mountAdmin(admin, context);
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
  parts.context.ops.close();
  await parts.sweeper.stop();
  parts.registry.stopEviction();
  // Attempts in flight finish (or time out) and their results are committed; held messages wait for the next start.
  await parts.webhooks.stop();
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

/** The composition root: the data directory and admin token, storage, the parts, background work, then the listeners. */
export async function startServer(config: Config, options: ServerOptions = {}): Promise<Server> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.logLevel);
  const onFatal =
    options.onFatal ??
    ((error: unknown) => {
      const what = error instanceof InvariantError ? 'an invariant is broken' : 'a commit failed';
      log.fatal({ err: error }, `${what}; stopping so that a restart recovers exactly the durable state`);
      (options.exit ?? process.exit)(1);
    });
  makePrivateDirectory(config.dataDir);
  const token = adminToken(config);
  const metrics = new Metrics({ routes: ['/api/v1/balance', '/api/v1/services', '/api/v1/order', '/api/v1/status'] });
  const storage = await openStorage(config, options, log, metrics, onFatal);
  const parts = buildParts(config, options, storage, await orderIdSecret(storage.store), clock, log, metrics, token.token, onFatal);
  startBackgroundWork(parts, options, log, onFatal);
  const listeners = await startListeners(config, parts.context);
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
    webhooks: parts.webhooks,
    close() {
      closed ??= shutDown(storage, parts, listeners);
      return closed;
    },
  };
}
