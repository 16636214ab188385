/**
 * A subscription's statuses and the small rules the decision and the
 * replay share: which statuses are final, which moves are refused, how
 * many posts it takes, and the instant its expiry comes.
 */
import { describe, expect, it } from 'vitest';
import {
  FINAL_SUBSCRIPTION_STATUSES,
  isSubscriptionStatus,
  postsAllowed,
  SUBSCRIPTION_STATUSES,
  subscriptionExpired,
  subscriptionMoveRefusal,
} from '../../src/ledger/subscription-record.js';

describe('subscription statuses', () => {
  it('are Active, Paused and the final Completed, Expired and Canceled', () => {
    expect(SUBSCRIPTION_STATUSES).toEqual(['Active', 'Paused', 'Completed', 'Expired', 'Canceled']);
    expect([...FINAL_SUBSCRIPTION_STATUSES].sort()).toEqual(['Canceled', 'Completed', 'Expired']);
  });

  it('are recognised by their exact names only', () => {
    for (const status of SUBSCRIPTION_STATUSES) expect(isSubscriptionStatus(status)).toBe(true);
    for (const value of ['active', 'ACTIVE', 'Active ', '', 'pending', 'canceled', 1, null, undefined, ['Active']]) expect(isSubscriptionStatus(value), String(value)).toBe(false);
  });
});

describe('moves between statuses', () => {
  it('never leave a final status, not even for itself', () => {
    for (const from of ['Completed', 'Expired', 'Canceled'] as const) {
      for (const to of SUBSCRIPTION_STATUSES) expect(subscriptionMoveRefusal(from, to), `${from} → ${to}`).toBe('final');
    }
  });

  it('refuse a move to the status it has, and allow Active and Paused to move anywhere else', () => {
    expect(subscriptionMoveRefusal('Active', 'Active')).toBe('same');
    expect(subscriptionMoveRefusal('Paused', 'Paused')).toBe('same');
    for (const to of ['Paused', 'Completed', 'Expired', 'Canceled'] as const) expect(subscriptionMoveRefusal('Active', to), to).toBe(null);
    for (const to of ['Active', 'Completed', 'Expired', 'Canceled'] as const) expect(subscriptionMoveRefusal('Paused', to), to).toBe(null);
  });
});

describe('posts a subscription takes', () => {
  it('are its new posts and its old ones, or no limit when posts is 0', () => {
    expect(postsAllowed({ posts: 5, oldPosts: 3 })).toBe(8);
    expect(postsAllowed({ posts: 1, oldPosts: 0 })).toBe(1);
    expect(postsAllowed({ posts: 0, oldPosts: 3 })).toBe(null);
    expect(postsAllowed({ posts: 0, oldPosts: 0 })).toBe(null);
  });
});

describe('expiry', () => {
  it('comes at its instant, not a millisecond before, and never without one', () => {
    const expiryMs = Date.UTC(2030, 2, 16);
    expect(subscriptionExpired({ expiryMs }, expiryMs - 1)).toBe(false);
    expect(subscriptionExpired({ expiryMs }, expiryMs)).toBe(true);
    expect(subscriptionExpired({ expiryMs }, expiryMs + 1)).toBe(true);
    expect(subscriptionExpired({ expiryMs: null }, Number.MAX_SAFE_INTEGER)).toBe(false);
    expect(subscriptionExpired({ expiryMs: null }, 0)).toBe(false);
  });
});
