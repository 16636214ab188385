/**
 * What the replay keeps while it walks the log. Memory does not grow with
 * the number of orders: one small record per account, the open orders (see
 * `OpenOrders`), the rows the side-by-side walk of the `orders` table passed
 * before their placement (see `OrderRowCursor`), the open cancel requests
 * and refills, and the catalogue's services.
 */
import { ShardedMap } from '../sharded-map.js';
import type { OrderRecord } from '../records.js';
import { noOrders, type LedgerSource, type StatusCounts } from './ledger-source.js';
import { OpenOrders } from './open-orders.js';
import { OrderRowCursor } from './order-row-cursor.js';
import { ServiceVersions } from './service-versions.js';
import type { SubscriptionStatus, SubscriptionTerms } from '../subscription-record.js';

export interface AccountState {
  balance: number;
  /** Expiry of the unlimited-plan window from the latest plan.granted, if any: what the wallet row holds. */
  unlimitedExpiresMs: number | null;
  hasWallet: boolean;
}

/** A subscription as the log leaves it so far (subscription-events.ts). */
export interface ReplaySubscription extends SubscriptionTerms {
  account: number;
  rate: number;
  status: SubscriptionStatus;
  postsDone: number;
}

export interface ReplayState {
  readonly source: LedgerSource;
  /** The `orders` table, walked in key order beside the log. */
  readonly rows: OrderRowCursor;
  readonly accounts: Map<number, AccountState>;
  readonly orders: OpenOrders;
  readonly services: ServiceVersions;
  /** Orders with a cancel request open: until their move to a final state. */
  readonly cancelRequests: ShardedMap<true>;
  /** Each order's open refill, until it moves to completed or rejected (at most one per order). */
  readonly openRefills: ShardedMap<NonNullable<OrderRecord['refill']>>;
  /** What was examined so far. */
  readonly counts: { events: number; accounts: number; orders: number; idempotencyKeys: number };
  /** Orders per status, as the log leaves them so far. */
  readonly statuses: StatusCounts;
  /** Micro-credits moved so far (see `VerifyReport.totals`). */
  readonly totals: { credited: bigint; debited: bigint; refunded: bigint };
  /** The highest order number placed so far: numbers grow with each order, so each must be above it. */
  lastNumber: number;
  /** Processing orders under a claim's lease, as the log leaves them so far: the lease index holds one entry for each. */
  leases: number;
  /** Every subscription placed so far, as the log leaves it (one small record each: subscriptions are far fewer than orders). */
  readonly subscriptions: Map<number, ReplaySubscription>;
}

/** The state before the first event; it starts the walk of the `orders` table (its first read). */
export function newReplayState(source: LedgerSource): ReplayState {
  const rows = new OrderRowCursor(source);
  return {
    source,
    rows,
    accounts: new Map(),
    orders: new OpenOrders(source, rows),
    services: new ServiceVersions(),
    cancelRequests: new ShardedMap(),
    openRefills: new ShardedMap(),
    counts: { events: 0, accounts: 0, orders: 0, idempotencyKeys: 0 },
    statuses: noOrders(),
    totals: { credited: 0n, debited: 0n, refunded: 0n },
    lastNumber: 0,
    leases: 0,
    subscriptions: new Map(),
  };
}
