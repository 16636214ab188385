/** What the HTTP handlers need from the rest of the process. */
import type { Logger } from 'pino';
import type { Account, Catalog, Registry } from '../actors/index.js';
import { type ForceJoinVerdict, type OrderRecord } from '../ledger/index.js';
import type { Clock } from '../platform/index.js';
import type { IdempotencyTableStats, Store, Wal } from '../wal/index.js';
import type { OrderIds } from '../ids/index.js';
import type { Metrics, OperatorJobs } from '../ops/index.js';
import type { AuthFailureLimiter } from './guards/auth-failures.js';
import type { AbuseLog } from './guards/abuse-log.js';
import type { Webhooks } from '../webhooks/index.js';

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

export interface AppContext {
  registry: Registry;
  catalog: Catalog;
  store: Store;
  wal: Wal;
  clock: Clock;
  log: Logger;
  limits: HttpLimits;
  authFailures: AuthFailureLimiter;
  abuse: AbuseLog;
  adminToken: string;
  metrics: Metrics;
  /** Verify and snapshot, one at a time, each in a child process. */
  ops: OperatorJobs;
  orderIds: OrderIds;
  /** A durable order by its public id, or undefined (also for text that cannot be an id). */
  readOrder(id: string): OrderRecord | undefined;
  /** A durable order by its number (API v2's order id), or undefined. */
  readOrderByNumber(number: number): OrderRecord | undefined;
  openapiBody: string;
  /** CURRENCY: shown in API v2's balance and status answers. */
  currency: string;
  /**
   * The force-join verdict for an account's order, or null (synchronously,
   * so the order path stays synchronous) when no channel is required.
   */
  forceJoinVerdict: ((account: Account) => Promise<ForceJoinVerdict> | null) | null;
  /** The operator changed an account's force-join settings: forget cached answers. */
  forceJoinChanged: (accountId: number) => void;
  /** True while the server is shutting down: new requests get 503. */
  draining: () => boolean;
  /** Idempotency-Key records kept and the oldest one's age (metrics). */
  idempotencyStats: () => IdempotencyTableStats;
  /** Webhook endpoints, the outbox and its dispatcher. */
  webhooks: Webhooks;
  /**
   * The fail-stop handler (the one a failed commit calls): a broken
   * invariant (InvariantError) met while serving a request goes here, never
   * into a 500 that carries on. It logs the error and stops the process.
   */
  onFatal(error: unknown): void;
}

