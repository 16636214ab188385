/**
 * The durable subscriptions as the wallet actors read them: one by id, the
 * order a post placed, and the highest id (where a restart continues).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { lastSubscriptionNumber, storedSubscriptions, subscriptionPostKey, type Store } from '../../src/wal/index.js';
import { tempStores } from '../helpers/temp-store.js';

const { open, cleanup } = tempStores('credit-order-api-stored-subscriptions');
afterEach(cleanup);

/** A store holding a subscription row under each id of `ids`. */
function withSubscriptions(ids: number[]): Store {
  const { store } = open();
  for (const id of ids) store.tables.subscriptions.putSync(id, { id, account: 1, status: 'Active' });
  return store;
}

describe('storedSubscriptions', () => {
  it('reads a subscription by id, and nothing for an id none has', () => {
    const subscriptions = storedSubscriptions(withSubscriptions([3, 4]));
    expect(subscriptions.read(4)).toStrictEqual({ id: 4, account: 1, status: 'Active' });
    expect(subscriptions.read(5)).toBeUndefined();
  });

  it('finds the order a post of a subscription placed, and nothing for another post or subscription', () => {
    const store = withSubscriptions([3]);
    store.tables.subscriptionPosts.putSync(subscriptionPostKey(3, 'post-a'), 'order-a');
    const subscriptions = storedSubscriptions(store);
    expect(subscriptions.postOrder(3, 'post-a')).toBe('order-a');
    expect(subscriptions.postOrder(3, 'post-b')).toBeUndefined();
    expect(subscriptions.postOrder(4, 'post-a')).toBeUndefined();
  });
});

describe('lastSubscriptionNumber', () => {
  it('is 0 without subscriptions, and the highest id in numeric order otherwise', () => {
    expect(lastSubscriptionNumber(withSubscriptions([]))).toBe(0);
    expect(lastSubscriptionNumber(withSubscriptions([2, 10, 9]))).toBe(10);
  });
});
