/**
 * The table rows a subscription's change writes in its commit: its record
 * (`subscriptions`, by id), its entry in the expiry index while it is
 * Active or Paused with an expiry (`subscriptionExpiry`), and, for a
 * post's new order, the post's row (`subscriptionPosts`) that makes a
 * repeated report find that order.
 */
import { assert } from '../platform/index.js';
import { FINAL_SUBSCRIPTION_STATUSES, type Command, type OrderRecord, type SubscriptionRecord } from '../ledger/index.js';
import { subscriptionExpiryKey, subscriptionPostKey, type TableName, type TablePut } from '../wal/index.js';

/** What the actor reads of the durable subscriptions (synchronous LMDB reads). */
export interface SubscriptionStore {
  read(id: number): SubscriptionRecord | undefined;
  /** The id of the order a reported post placed, or undefined. */
  postOrder(subscription: number, post: string): string | undefined;
}

type Remove = { table: TableName; key: (string | number)[] };

function inExpiryIndex(sub: SubscriptionRecord | null): boolean {
  return sub !== null && sub.expiryMs !== null && !FINAL_SUBSCRIPTION_STATUSES.has(sub.status);
}

/** The rows of `after`, the subscription a decision of `command` left; `nextNumber` is the number a placement takes. */
export function subscriptionRows(
  command: Command,
  after: SubscriptionRecord,
  order: OrderRecord | null,
  nextNumber: number,
): { puts: TablePut[]; removes: Remove[]; numberTaken: number | null } {
  const before = command.kind === 'subscription-post' || command.kind === 'subscription-status' ? command.subscription : null;
  const puts: TablePut[] = [{ table: 'subscriptions', key: after.id, value: after }];
  const removes: Remove[] = [];
  if (inExpiryIndex(before) && !inExpiryIndex(after)) removes.push({ table: 'subscriptionExpiry', key: subscriptionExpiryKey(before!) });
  if (!inExpiryIndex(before) && inExpiryIndex(after)) puts.push({ table: 'subscriptionExpiry', key: subscriptionExpiryKey(after), value: after.account });
  if (command.kind === 'subscription-post' && order !== null) puts.push({ table: 'subscriptionPosts', key: subscriptionPostKey(after.id, command.post), value: order.id });
  if (command.kind !== 'subscribe') return { puts, removes, numberTaken: null };
  assert(command.number === nextNumber && after.id === command.number, 'a new subscription gets the number peeked in the same turn', command.number);
  return { puts, removes, numberTaken: command.number };
}
