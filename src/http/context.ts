/**
 * What the HTTP handlers need from the rest of the process: the services
 * the wallet actors are given (ActorContext: the WAL, the clock, the orders
 * table, the catalogue's services, …), which handlers use too, and what only
 * the front end needs besides. One bag: a service both sides use is
 * declared once, in ActorContext.
 */
import type { Logger } from 'pino';
import type { Account, ActorContext, Catalog, LeaseSweeper, Registry } from '../actors/index.js';
import type { ForceJoinVerdict } from '../ledger/index.js';
import type { IdempotencyTableStats, Store, StoredOrders } from '../wal/index.js';
import type { Metrics, OperatorJobs } from '../ops/index.js';
import type { AuthFailureLimiter } from './guards/auth-failures.js';
import type { AbuseLog } from './guards/abuse-log.js';
import type { Webhooks } from '../webhooks/index.js';
import type { RateLimitHeaders } from './transport/rate-headers.js';

/** The body of GET /readyz (200 when `ok`, else 503). */
export interface Readiness {
  ok: boolean;
  role: 'standalone' | 'leader' | 'follower' | 'starting' | 'stopping';
  node: string;
  /** Replicated leader: whether PostgreSQL has a synchronous standby streaming (null: not known yet). */
  synchronous_standby?: boolean | null;
}

export interface HttpLimits {
  bodyBytesMax: number;
  headerBytesMax: number;
  targetCharsMax: number;
  /**
   * Index entries one filtered admin listing may examine (src/http/admin/
   * scan.ts): SCAN_ENTRIES_MAX, or the server option adminScanEntriesMax
   * (tests make it small).
   */
  scanEntriesMax: number;
}

export interface AppContext extends ActorContext {
  registry: Registry;
  catalog: Catalog;
  store: Store;
  /** The durable orders, by public id and by number (API v2's order id). */
  orders: StoredOrders;
  log: Logger;
  limits: HttpLimits;
  authFailures: AuthFailureLimiter;
  abuse: AbuseLog;
  adminToken: string;
  metrics: Metrics;
  /** Verify and snapshot, one at a time, each in a child process. */
  ops: OperatorJobs;
  openapiBody: string;
  /** CURRENCY: shown in API v2's balance and status answers. */
  currency: string;
  /** RATE_LIMIT_HEADERS: the rate-limit header families every counted answer carries. */
  rateLimitHeaders: RateLimitHeaders;
  /**
   * The force-join verdict for an account's order, or null (synchronously,
   * so the order path stays synchronous) when no channel is required.
   */
  forceJoinVerdict: ((account: Account) => Promise<ForceJoinVerdict> | null) | null;
  /** The operator changed an account's force-join settings: forget cached answers. */
  forceJoinChanged: (accountId: number) => void;
  /** True while the server is shutting down: new requests get 503. */
  draining: () => boolean;
  /**
   * Why this node does not take requests that change state or read a
   * wallet now (shutting down, a follower, a leader whose lease is not
   * current), as the 503's sentence; null when it does.
   */
  unavailable: () => string | null;
  /** What GET /readyz answers: whether this node serves, its role and its name. */
  readiness: () => Readiness;
  /** Idempotency-Key records kept and the oldest one's age (metrics). */
  idempotencyStats: () => IdempotencyTableStats;
  /** Puts claimed orders whose lease has ended back in the claim queue (claims run a step first). */
  leases: Pick<LeaseSweeper, 'step'>;
  /** Webhook endpoints, the outbox and its dispatcher. */
  webhooks: Webhooks;
  /**
   * The fail-stop handler (the one a failed commit calls): a broken
   * invariant (InvariantError) met while serving a request goes here, never
   * into a 500 that carries on. It logs the error and stops the process.
   */
  onFatal(error: unknown): void;
}
