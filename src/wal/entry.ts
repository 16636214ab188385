/**
 * What one actor hands the log for a group commit: its events and the table
 * rows they change, written in one LMDB transaction. This is storage's
 * vocabulary; the records themselves are the ledger's (`src/ledger`).
 */
import type { LogEvent, OrderRecord } from '../ledger/index.js';

/** Every LMDB table, declared once: the store opens these, the simulation WAL mirrors them. */
export const TABLE_NAMES = ['profiles', 'wallets', 'keys', 'services', 'orders', 'orderIndex', 'idempotency', 'idempotencyExpiry', 'meta', 'refills', 'numbers', 'v2keys', 'webhooks', 'webhookOutbox', 'webhookLog', 'leases', 'subscriptions', 'subscriptionPosts', 'subscriptionExpiry'] as const;

export type TableName = (typeof TABLE_NAMES)[number];

/**
 * Key of an Idempotency-Key record in the expiry index (`idempotencyExpiry`,
 * written in the same commit as the record): the sweep reads the oldest
 * records first, whatever their keys.
 */
export function idempotencyExpiryKey(atMs: number, tableKey: string): [number, string] {
  return [atMs, tableKey];
}

/**
 * Key of a claimed order in the lease index (`leases`, written in the same
 * commit as the order's lease): the sweep reads the leases that end first,
 * whatever their orders.
 */
export function leaseKey(order: Pick<OrderRecord, 'leaseExpiresMs' | 'id'>): [number, string] {
  return [order.leaseExpiresMs!, order.id];
}

export interface TablePut {
  table: TableName;
  key: string | number | Buffer | (string | number)[];
  value: unknown;
}

/** One actor's contribution to a group commit: log events and table writes. */
export interface WalEntry {
  events: LogEvent[];
  puts: TablePut[];
  /** Rows to delete (a missing row is no error). */
  removes?: { table: TableName; key: string | number | (string | number)[] }[];
}

/** Key of an order in the status index: oldest first within a status. */
export function orderIndexKey(order: Pick<OrderRecord, 'status' | 'createdAtMs' | 'seq' | 'id'>): (string | number)[] {
  return [order.status, order.createdAtMs, order.seq, order.id];
}


/**
 * Key of a post in `subscriptionPosts` (value: the id of the order it
 * placed), written in the commit of that order: a repeated report of the
 * post finds its order instead of placing another.
 */
export function subscriptionPostKey(subscription: number, post: string): [number, string] {
  return [subscription, post];
}

/**
 * Key of a subscription in the expiry index (`subscriptionExpiry`, value:
 * its account), present while it is Active or Paused and has an expiry: the
 * sweep reads the subscriptions that end first.
 */
export function subscriptionExpiryKey(sub: { expiryMs: number | null; id: number }): [number, number] {
  return [sub.expiryMs!, sub.id];
}
