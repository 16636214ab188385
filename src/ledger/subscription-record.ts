/**
 * A subscription: the customer's standing order to deliver to every new
 * post of an account (`username`) between `min` and `max` units, for up to
 * `posts` posts (0: no limit) and until `expiry` (null: no end). It
 * reserves and charges nothing itself; each post the operator's processing
 * system reports becomes an order of its own, charged then at the rate the
 * subscription fixed when it was placed (see subscription-decide.ts). Its
 * id is a number from the orders' sequence, so API v2's `status` finds a
 * subscription by the same kind of id as an order.
 */

export const SUBSCRIPTION_STATUSES = ['Active', 'Paused', 'Completed', 'Expired', 'Canceled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** The statuses a subscription never leaves. */
export const FINAL_SUBSCRIPTION_STATUSES: ReadonlySet<SubscriptionStatus> = new Set(['Completed', 'Expired', 'Canceled']);

export function isSubscriptionStatus(value: unknown): value is SubscriptionStatus {
  return (SUBSCRIPTION_STATUSES as readonly unknown[]).includes(value);
}

/** What a subscription asks for, as its customer sent it (checked). */
export interface SubscriptionTerms {
  service: number;
  username: string;
  min: number;
  max: number;
  /** New posts to deliver to; 0 for no limit. */
  posts: number;
  /** Posts already made when it was placed that the processing system also delivers to. */
  oldPosts: number;
  delayMinutes: number;
  /** When it ends (Unix ms, the end of the expiry day in UTC); null for no end. */
  expiryMs: number | null;
}

export interface SubscriptionRecord extends SubscriptionTerms {
  id: number;
  account: number;
  /** The service's rate when it was placed: every post's order is charged at it. */
  rate: number;
  status: SubscriptionStatus;
  /** Posts delivered to so far: each one an order. */
  postsDone: number;
  /** The numbers of its latest orders, oldest first (at most SUBSCRIPTION_ORDERS_KEPT). */
  orders: number[];
  channel: 'api' | 'panel';
  createdAtMs: number;
  updatedAtMs: number;
}

/** How many posts it takes in all: its new posts and its old ones, or null when `posts` is 0 (no limit). */
export function postsAllowed(terms: Pick<SubscriptionTerms, 'posts' | 'oldPosts'>): number | null {
  return terms.posts === 0 ? null : terms.posts + terms.oldPosts;
}

/**
 * Why a subscription may not move from `from` to `to`, or null: a final
 * subscription never moves again; Active and Paused move to each other and
 * to any final status. Completed and Expired have conditions of their own
 * (the posts taken, the clock), which the decision and the replay check.
 */
export function subscriptionMoveRefusal(from: SubscriptionStatus, to: SubscriptionStatus): 'final' | 'same' | null {
  if (FINAL_SUBSCRIPTION_STATUSES.has(from)) return 'final';
  if (from === to) return 'same';
  return null;
}

/** Whether the subscription's expiry has come at `wallMs` (it ends at its instant). */
export function subscriptionExpired(sub: Pick<SubscriptionTerms, 'expiryMs'>, wallMs: number): boolean {
  return sub.expiryMs !== null && wallMs >= sub.expiryMs;
}
