/**
 * Subscriptions, invariant (h) of `replayLedger`: subscription.placed moves
 * no money and carries terms its service took at that point of the log
 * (subscriptionTermsProblem) at the service's rate then, under a number of
 * the orders' sequence; each subscription.status moves from the status the
 * log left it in, never out of a final one, to Completed only when its
 * posts are all taken and to Expired only once its expiry has passed; each
 * order.placed naming a subscription is one of its posts, placed while it
 * is Active and not expired, at the rate it fixed, within its min..max,
 * for its username, and not beyond its posts (its money is then checked
 * like any order's by order-placed.ts). Once the log is replayed, every
 * `subscriptions` row is what the log leaves, and each replayed
 * subscription has its row.
 */
import { isSubscriptionStatus, postsAllowed, subscriptionExpired, subscriptionMoveRefusal, type SubscriptionTerms } from '../subscription-record.js';
import { subscriptionTermsProblem } from '../subscription-terms.js';
import { fail } from './finding.js';
import { asRaw, isInt, type Raw } from './raw.js';
import type { ReplayState, ReplaySubscription } from './replay-state.js';
import { credits } from './wording.js';


const TERM_FIELDS = ['service', 'min', 'max', 'posts', 'oldPosts', 'delayMinutes'] as const;

function terms(seq: number, account: number, e: Raw): SubscriptionTerms {
  for (const field of TERM_FIELDS) {
    if (!isInt(e[field])) fail('subscription', seq, account, null, `subscription.placed carries an invalid ${field} (${String(e[field])}).`);
  }
  if (typeof e.username !== 'string') fail('subscription', seq, account, null, 'subscription.placed carries no username.');
  if (e.expiryMs !== null && !isInt(e.expiryMs)) fail('subscription', seq, account, null, `subscription.placed carries an invalid expiry (${String(e.expiryMs)}).`);
  const t = e as unknown as SubscriptionTerms;
  return { service: t.service, username: t.username, min: t.min, max: t.max, posts: t.posts, oldPosts: t.oldPosts, delayMinutes: t.delayMinutes, expiryMs: t.expiryMs };
}

/** subscription.placed: a fresh number, terms its service took then, at its rate then. */
export function subscriptionPlaced(state: ReplayState, seq: number, account: number, e: Raw): void {
  const id = e.subscription;
  if (!isInt(id) || id <= state.lastNumber) {
    fail('subscription', seq, account, null, `subscription.placed carries id ${String(id)}, not above the previous number ${state.lastNumber}; subscriptions take numbers of the orders' sequence.`);
  }
  state.lastNumber = id;
  const placed = terms(seq, account, e);
  if (!isInt(e.atMs)) fail('subscription', seq, account, null, 'subscription.placed carries no valid time.');
  const versions = state.services.seen(placed.service);
  const problems = versions.map((service) => (service === null ? `service ${placed.service} does not exist` : subscriptionTermsProblem(placed, service, e.atMs as number)?.message ?? null));
  if (!problems.includes(null)) fail('subscription', seq, account, null, `subscription ${id}'s terms were not acceptable when placed: ${problems[0]}`);
  if (!versions.some((service) => service !== null && service.rate === e.rate)) {
    fail('subscription', seq, account, null, `subscription ${id} fixed the rate ${credits(e.rate)}, which is not its service's rate at that point of the log.`);
  }
  state.subscriptions.set(id, { ...placed, account, rate: e.rate as number, status: 'Active', postsDone: 0 });
}

function known(state: ReplayState, seq: number, account: number, order: string | null, id: unknown): ReplaySubscription {
  const sub = isInt(id) ? state.subscriptions.get(id) : undefined;
  if (sub === undefined || sub.account !== account) fail('subscription', seq, account, order, `the event names subscription ${String(id)}, which this account did not place earlier in the log.`);
  return sub;
}

/** subscription.status: a move the actor's rules allow at this point of the log. */
export function subscriptionStatus(state: ReplayState, seq: number, account: number, e: Raw): void {
  const sub = known(state, seq, account, null, e.subscription);
  const { from, to } = e;
  if (!isSubscriptionStatus(to) || from !== sub.status) {
    fail('subscription', seq, account, null, `subscription ${String(e.subscription)} moves from ${String(from)} to ${String(to)}, but the log leaves it ${sub.status}.`);
  }
  const refusal = subscriptionMoveRefusal(sub.status, to);
  if (refusal !== null) fail('subscription', seq, account, null, `subscription ${String(e.subscription)} is ${sub.status}; it cannot move to ${to}.`);
  if (to === 'Completed' && sub.postsDone !== postsAllowed(sub)) {
    fail('subscription', seq, account, null, `subscription ${String(e.subscription)} completes after ${sub.postsDone} posts, not the ${String(postsAllowed(sub) ?? 'unlimited')} it takes.`);
  }
  if (to === 'Expired' && !(isInt(e.atMs) && subscriptionExpired(sub, e.atMs))) {
    fail('subscription', seq, account, null, `subscription ${String(e.subscription)} expires before its expiry.`);
  }
  // What is left are moves between Active and Paused, in either direction:
  // `from` is the status the log leaves, which is neither final nor `to`.
  sub.status = to;
}

/**
 * An order.placed of type Subscriptions: a post of an Active subscription
 * of the account, within its terms, at its rate; its row names the same
 * subscription and post.
 */
export function subscriptionOrder(state: ReplayState, seq: number, account: number, orderId: string, e: Raw, row: Raw): void {
  if (e.orderType !== 'Subscriptions' || e.subscription === undefined) {
    if (e.orderType === 'Subscriptions' || e.subscription !== undefined) fail('subscription', seq, account, orderId, 'an order of type Subscriptions must name its subscription, and only such an order may.');
    return;
  }
  const sub = known(state, seq, account, orderId, e.subscription);
  const problem = postProblem(sub, e);
  if (problem !== null) fail('subscription', seq, account, orderId, `the post's order breaks subscription ${String(e.subscription)}: ${problem}`);
  if (row.subscription !== e.subscription || row.post !== e.post) fail('subscription', seq, account, orderId, "the orders row does not name the post's subscription and post as order.placed does.");
  sub.postsDone++;
}

function postProblem(sub: ReplaySubscription, e: Raw): string | null {
  if (sub.status !== 'Active') return `it is ${sub.status}.`;
  if (!isInt(e.atMs) || subscriptionExpired(sub, e.atMs)) return 'its expiry had passed.';
  if (e.service !== sub.service) return `the order is for service ${String(e.service)}, not ${sub.service}.`;
  if (e.rate !== sub.rate) return `the order's rate ${credits(e.rate)} is not the fixed ${credits(sub.rate)}.`;
  if (!isInt(e.quantity) || e.quantity < sub.min || e.quantity > sub.max) return `quantity ${String(e.quantity)} is outside ${sub.min}..${sub.max}.`;
  if (asRaw(e.extras).username !== sub.username) return `the order is for ${String(asRaw(e.extras).username)}, not ${sub.username}.`;
  if (typeof e.post !== 'string' || e.post === '') return 'it names no post.';
  const allowed = postsAllowed(sub);
  if (allowed !== null && sub.postsDone >= allowed) return `it takes ${allowed} posts and had them all.`;
  return null;
}

/** Every `subscriptions` row against the replay, both ways. */
export function checkSubscriptionRows(state: ReplayState): void {
  const rows = state.source.subscriptions?.();
  if (rows === undefined) return;
  let seen = 0;
  for (const { key, value } of rows) {
    const r = asRaw(value);
    const sub = isInt(key) ? state.subscriptions.get(key) : undefined;
    if (sub === undefined) fail('subscription', null, isInt(r.account) ? r.account : null, null, `the subscriptions row ${String(key)} has no subscription.placed in the log.`);
    seen++;
    for (const field of ['account', 'status', 'postsDone', 'rate', 'min', 'max', 'posts', 'expiryMs'] as const) {
      if (r[field] !== sub[field]) fail('subscription', null, sub.account, null, `subscription ${key}'s row has ${field} ${String(r[field])} but the log leaves ${String(sub[field])}.`);
    }
  }
  if (seen !== state.subscriptions.size) fail('subscription', null, null, null, `the log places ${state.subscriptions.size} subscriptions but the subscriptions table holds ${seen}.`);
}
