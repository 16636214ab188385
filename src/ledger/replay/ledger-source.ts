/**
 * What the ledger replay reads: the log and the tables of one store, through
 * an interface, so the same replay checks an LMDB store (verify, snapshots,
 * the CLI) and the simulator's in-memory image.
 */
import { ORDER_STATUSES } from '../rules.js';
import type { OrderStatus } from '../records.js';

/** One stored row: its key and its value, as the store returns them. */
export interface SourceRow<K = unknown> {
  key: K;
  value: unknown;
}

/** How many orders are in each status. */
export type StatusCounts = Record<OrderStatus, number>;

/**
 * What the replay reads. Every method reads the same consistent moment of
 * the store (one read transaction for LMDB). Iterables are consumed lazily,
 * so a source streams from disk.
 */
export interface LedgerSource {
  /** The log, in seq order: key = seq. */
  events(): Iterable<SourceRow>;
  wallets(): Iterable<SourceRow>;
  /** The `orders` table in storage-key order (the order `compareOrderKeys` defines). */
  orderRows(): Iterable<SourceRow<string>>;
  /** The storage key an order's row is kept under, from its public id. */
  orderKey(id: string): string;
  /** One `orders` row by storage key, or undefined. */
  orderRow(key: string): unknown;
  /** The sort order of `orderRows`. */
  compareOrderKeys(a: string, b: string): number;
  idempotency(): Iterable<SourceRow>;
  /** The lease index: key = [leaseExpiresMs, order id], in key order. */
  leases(): Iterable<SourceRow>;
  /** Orders per status in the status index. */
  indexCounts(): StatusCounts;
  /** The counts row stats and metrics read, or undefined when the store has none. */
  countsRow(): unknown;
  /** The `subscriptions` table (key = id); absent where a source keeps none (the simulator places no subscriptions). */
  subscriptions?(): Iterable<SourceRow>;
}

/** Whether a stored row is a count of orders per status, each a safe integer. */
export function isCounts(row: unknown): row is StatusCounts {
  // Stryker disable next-line ConditionalExpression: equivalent: a primitive other than null holds no status fields, so the check below refuses it as well
  if (row === null || typeof row !== 'object') return false;
  return ORDER_STATUSES.every((s) => Number.isSafeInteger((row as Record<string, unknown>)[s]));
}

/** Counts of zero orders in every status. */
export function noOrders(): StatusCounts {
  return { pending: 0, processing: 0, in_progress: 0, completed: 0, partial: 0, canceled: 0 };
}
