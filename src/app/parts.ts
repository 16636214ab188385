/**
 * Wiring the parts: the webhooks, the wallet actors' services, the account
 * registry, the catalogue, the Idempotency-Key and lease sweeps, force-join, and the
 * one context that hands them to the HTTP handlers. Nothing here runs per
 * request: each service is an object of the part it belongs to.
 */
import type { Logger } from 'pino';
import { Catalog, LeaseSweeper, Registry, SubscriptionSweeper, type Account, type ActorContext } from '../actors/index.js';
import { ForceJoinVerifier } from '../forcejoin/index.js';
import { AbuseLog, type AppContext, AuthFailureLimiter, buildOpenApi, type HttpLimits, type Readiness, renderAnswer, SCAN_ENTRIES_MAX } from '../http/index.js';
import { OrderIds, OrderNumbers, RefillIds } from '../ids/index.js';
import type { ForceJoinVerdict, IdempotencyRecord } from '../ledger/index.js';
import { type Metrics, OperatorJobs, SnapshotSchedule } from '../ops/index.js';
import { BYTES_PER_MIB, type Clock, MS_PER_HOUR, reportFault, VERSION } from '../platform/index.js';
import { IdempotencySweeper, lastOrderNumber, lastRefillId, lastSubscriptionNumber, StoredOrders, storedSubscriptions } from '../wal/index.js';
import { Webhooks } from '../webhooks/index.js';
import type { Config } from './config.js';
import type { ServerOptions } from './options.js';
import type { Storage } from './storage.js';

/** The parts the listeners serve: actors, catalogue, sweeper, force-join, and the context that ties them to HTTP. */
export interface Parts {
  context: AppContext;
  registry: Registry;
  sweeper: IdempotencySweeper;
  leases: LeaseSweeper;
  subscriptionSweeper: SubscriptionSweeper;
  webhooks: Webhooks;
  /** Scheduled snapshots; null when SNAPSHOT_EVERY is not set. */
  snapshots: SnapshotSchedule | null;
  /** Set when shutdown begins: new requests are refused with 503. */
  startDraining(): void;
}

function newWebhooks(config: Config, options: ServerOptions, storage: Storage, clock: Clock, log: Logger, onFatal: (error: unknown) => void): Webhooks {
  return new Webhooks(
    storage.store,
    storage.wal,
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
      rotateSecrets: config.webhooksRotateSecrets,
    },
    {
      ...(options.random === undefined ? {} : { random: options.random }),
      ...(options.webhookWindowMax === undefined ? {} : { windowMax: options.webhookWindowMax }),
      yieldWhenBusy: options.webhookYield ?? true,
      onError: (error, what) => void reportFault({ log, onFatal }, error, what),
    },
  );
}

/** The force-join verdict of an account's order, and forgetting an account's cached answer; no verdict when no channel is required. */
function forceJoin(config: Config, clock: Clock, log: Logger): Pick<AppContext, 'forceJoinVerdict' | 'forceJoinChanged'> {
  if (config.forceJoin === null) return { forceJoinVerdict: null, forceJoinChanged: () => {} };
  const verifier = new ForceJoinVerifier(config.forceJoin, clock, undefined, {
    onUnavailable: (error) => log.warn({ reason: error.reason }, 'Telegram could not be asked about a force-join membership'),
  });
  const verdict = async (account: Account): Promise<ForceJoinVerdict> => {
    const p = account.profile;
    const status = await verifier.status({
      id: p.id,
      telegramUserId: p.telegramUserId ?? null,
      verified: p.forceJoinVerified ?? false,
      exempt: p.forceJoinExempt ?? false,
    });
    if (status.kind === 'joined') return { joined: true };
    return { joined: false, message: status.message, joinLink: status.joinLink, transient: status.kind === 'unavailable' };
  };
  return { forceJoinVerdict: verdict, forceJoinChanged: (id) => verifier.invalidate(id) };
}

/** Whether this node serves: standalone always; replicated, the leader while its lease is current (src/app/replica-wal.ts). */
export interface Availability {
  /** The 503 sentence while this node does not take requests that change state; null when it does. */
  unavailable(): string | null;
  readiness(): Readiness;
}

function httpLimits(config: Config, options: ServerOptions): HttpLimits {
  return {
    bodyBytesMax: config.bodyBytesMax,
    headerBytesMax: config.headerBytesMax,
    targetCharsMax: config.targetCharsMax,
    scanEntriesMax: options.adminScanEntriesMax ?? SCAN_ENTRIES_MAX,
  };
}

function snapshotSchedule(config: Config, context: AppContext, clock: Clock, log: Logger, onFatal: (error: unknown) => void): SnapshotSchedule | null {
  if (config.snapshotEveryMs === null || config.snapshotDir === null) return null;
  return new SnapshotSchedule(context.ops, { everyMs: config.snapshotEveryMs, dir: config.snapshotDir, keep: config.snapshotKeep }, clock, {
    beforeSnapshot: () => context.wal.flushed(),
    onResult: (result, removed) => {
      if (result.error === null) log.info({ path: result.path, bytes: result.bytes, durationMs: result.durationMs, removed }, 'scheduled snapshot taken and verified');
      else log.error({ path: result.path, durationMs: result.durationMs, message: result.error }, 'scheduled snapshot failed');
    },
    onError: (error) => void reportFault({ log, onFatal }, error, 'scheduled snapshot failed'),
  });
}

export function buildParts(config: Config, options: ServerOptions, storage: Storage, clock: Clock, log: Logger, metrics: Metrics, adminToken: string, availability: Availability, onFatal: (error: unknown) => void): Parts {
  const { store, wal } = storage;
  const webhooks = newWebhooks(config, options, storage, clock, log, onFatal);
  const orders = new StoredOrders(store, new OrderIds(storage.orderIdSecret));
  const catalog = new Catalog(store, wal, clock);
  const actorContext: ActorContext = {
    wal,
    clock,
    mailboxMax: config.mailboxMax,
    idempotencyRetentionMs: config.idempotencyRetentionHours * MS_PER_HOUR,
    readIdempotency: (key) => store.tables.idempotency.get(key) as IdempotencyRecord | undefined,
    orders,
    services: catalog,
    refillIds: new RefillIds(lastRefillId(store)),
    // Subscriptions take their ids from the same numbers (src/wal/subscription-numbers.ts).
    orderNumbers: new OrderNumbers(Math.max(lastOrderNumber(store), lastSubscriptionNumber(store))),
    subscriptions: storedSubscriptions(store),
    renderAnswer,
    withWebhookMessages: (events, account, order, refill, atMs) => webhooks.outbox.withMessages(events, account, order, refill, atMs),
    serviceTimes: catalog.times,
  };
  const registry = new Registry(store, wal, clock, actorContext, config.defaultRateLimitPerMinute, options.verifiedSecretsMax);
  const sweeper = new IdempotencySweeper(store, wal, clock, actorContext.idempotencyRetentionMs, (tableKey) => registry.idempotencyKeyPending(tableKey));
  // A standalone server is the only node of its group, so always its leader.
  const leases = new LeaseSweeper(store, registry, clock, () => true);
  const subscriptionSweeper = new SubscriptionSweeper(store, registry, clock, () => true);
  let draining = false;
  const context: AppContext = {
    ...actorContext,
    orders,
    registry,
    catalog,
    store,
    log,
    limits: httpLimits(config, options),
    authFailures: new AuthFailureLimiter(clock, config.authFailuresPerMinute),
    abuse: new AbuseLog(log, clock),
    adminToken,
    metrics,
    ops: new OperatorJobs(store.path, {
      pace: { bytesPerSecond: config.snapshotMbPerSecond * BYTES_PER_MIB },
      clock,
      onDone: (job, memory) => log.info({ job, ...memory }, `${job} finished in its own process`),
    }),
    openapiBody: JSON.stringify(buildOpenApi(VERSION)),
    currency: config.currency,
    rateLimitHeaders: config.rateLimitHeaders,
    ...forceJoin(config, clock, log),
    draining: () => draining,
    unavailable: () => (draining ? 'The server is shutting down; retry shortly.' : availability.unavailable()),
    readiness: () => (draining ? { ...availability.readiness(), ok: false, role: 'stopping' } : availability.readiness()),
    idempotencyStats: () => sweeper.stats(),
    leases,
    webhooks,
    onFatal,
  };
  return {
    context,
    registry,
    sweeper,
    leases,
    subscriptionSweeper,
    webhooks,
    snapshots: snapshotSchedule(config, context, clock, log, onFatal),
    startDraining: () => {
      draining = true;
    },
  };
}
