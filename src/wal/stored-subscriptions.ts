/**
 * The durable subscriptions, as the wallet actors read them: a
 * subscription by id, and the order a reported post placed (so a repeated
 * report finds it). Subscriptions take their ids from the orders' numbers
 * (src/ids/order-numbers.ts) but are not in the `numbers` table, so a
 * restart continues after the highest of both.
 */
import type { SubscriptionRecord } from '../ledger/index.js';
import { subscriptionPostKey } from './entry.js';
import type { Store } from './store.js';

export function storedSubscriptions(store: Pick<Store, 'tables'>): {
  read(id: number): SubscriptionRecord | undefined;
  postOrder(subscription: number, post: string): string | undefined;
} {
  return {
    read: (id) => store.tables.subscriptions.get(id) as SubscriptionRecord | undefined,
    postOrder: (subscription, post) => store.tables.subscriptionPosts.get(subscriptionPostKey(subscription, post)) as string | undefined,
  };
}

/** The highest subscription id in the `subscriptions` table, 0 when there is none (integer keys sort numerically). */
export function lastSubscriptionNumber(store: Pick<Store, 'tables'>): number {
  for (const key of store.tables.subscriptions.getKeys({ reverse: true, limit: 1 })) return key as number;
  return 0;
}
