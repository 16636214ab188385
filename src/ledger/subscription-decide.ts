/**
 * The wallet's decisions about subscriptions, pure like decide.ts (which
 * runs the ban and rate-limit checks first and wraps these verdicts):
 *
 * - placing one reserves and charges nothing; it fixes the service's rate;
 * - each post the operator's processing system reports is an order of its
 *   own (order.placed naming the subscription and the post), charged
 *   quantity × the fixed rate, debited like any order (0 under the
 *   unlimited plan). A post the wallet cannot pay for is refused (BALANCE)
 *   and pauses the subscription; the next post the wallet can pay for
 *   resumes it, in the commit of that post's order. A post reported again
 *   gets its first order back and charges nothing;
 * - the post that reaches the posts asked for completes it, in its commit;
 * - the clock ends it: any command that finds its expiry passed logs the
 *   move to Expired (the sweep sends such a command for each one due);
 * - the customer or the operator cancels it.
 */
import { errorOutcome, type ErrorOutcome } from '../errors/index.js';
import { formatMicro } from '../money/index.js';
import { assert } from '../platform/index.js';
import { SUBSCRIPTION_ORDERS_KEPT } from './limits.js';
import { placedEvent } from './placed-event.js';
import type { Channel, LogEvent, OrderRecord, ServiceRecord, WalletRecord } from './records.js';
import { chargeFor, isUnlimited } from './rules.js';
import { FINAL_SUBSCRIPTION_STATUSES, postsAllowed, subscriptionExpired, subscriptionMoveRefusal, type SubscriptionRecord, type SubscriptionStatus, type SubscriptionTerms } from './subscription-record.js';
import { expiryText, subscriptionTermsProblem } from './subscription-terms.js';

export type SubscriptionOutcome =
  | { kind: 'error'; error: ErrorOutcome }
  | { kind: 'subscribed'; subscription: SubscriptionRecord }
  | { kind: 'placed'; order: OrderRecord; balance: number }
  | { kind: 'changed' };

export interface SubscriptionVerdict {
  wallet: WalletRecord;
  events: LogEvent[];
  outcome: SubscriptionOutcome;
  /** The subscription as the verdict leaves it, written in the same commit (null when unchanged). */
  subscription: SubscriptionRecord | null;
  /** A post's new order, written in the same commit. */
  order: OrderRecord | null;
}

/** A post as the processing system reports it, with what the actor gathered for it. */
export interface PostReport {
  post: string;
  link: string;
  quantity: number;
  /** Gathered: the order an earlier report of this post placed, or null. */
  prior: OrderRecord | null;
  /** Gathered: the new order's id, sequence and number, used only if it is placed. */
  orderId: string;
  seq: number;
  number: number;
}

function refusedWith(wallet: WalletRecord, error: ErrorOutcome, events: LogEvent[] = [], subscription: SubscriptionRecord | null = null): SubscriptionVerdict {
  return { wallet, events, outcome: { kind: 'error', error }, subscription, order: null };
}

const notFound = (wallet: WalletRecord, id: number): SubscriptionVerdict => refusedWith(wallet, errorOutcome('NOT_FOUND', `No subscription with id ${id}.`));

/** A subscription.status event and the record it leaves. */
function moved(sub: SubscriptionRecord, to: SubscriptionStatus, reason: string, atMs: number): { event: LogEvent; record: SubscriptionRecord } {
  return {
    event: { type: 'subscription.status', atMs, account: sub.account, subscription: sub.id, from: sub.status, to, reason },
    record: { ...sub, status: to, updatedAtMs: atMs },
  };
}

/** The move to Expired a command logs when it finds the expiry passed, refusing what it was asked. */
function expiredNow(wallet: WalletRecord, sub: SubscriptionRecord, atMs: number): SubscriptionVerdict {
  const { event, record } = moved(sub, 'Expired', 'its expiry passed', atMs);
  return refusedWith(wallet, errorOutcome('CONFLICT', `Subscription ${sub.id} expired at the end of ${expiryText(sub.expiryMs!)}; it takes no more posts.`), [event], record);
}

/**
 * Places a subscription: checks its terms against its service and the
 * date, fixes the rate; no money moves. Its event names the
 * Idempotency-Key it was placed with, as an order's does.
 */
export function decideSubscribe(
  wallet: WalletRecord,
  terms: SubscriptionTerms,
  service: ServiceRecord | null,
  number: number,
  channel: Channel,
  atMs: number,
  idempotencyKey: string | null,
): SubscriptionVerdict {
  if (service === null || !service.enabled) return refusedWith(wallet, errorOutcome('SERVICE', `Service ${terms.service} does not exist or is disabled.`));
  const problem = subscriptionTermsProblem(terms, service, atMs);
  // No min/max extra on QTY: API v2 then tells the sentence, which names both fields, not an order's quantity phrase.
  if (problem !== null) return refusedWith(wallet, errorOutcome(problem.code, problem.message));
  const subscription: SubscriptionRecord = {
    ...terms,
    id: number,
    account: wallet.id,
    rate: service.rate,
    status: 'Active',
    postsDone: 0,
    orders: [],
    channel,
    createdAtMs: atMs,
    updatedAtMs: atMs,
  };
  const event: Extract<LogEvent, { type: 'subscription.placed' }> = { type: 'subscription.placed', atMs, account: wallet.id, subscription: number, ...terms, rate: service.rate, channel };
  if (idempotencyKey !== null) event.idempotencyKey = idempotencyKey;
  return { wallet, events: [event], outcome: { kind: 'subscribed', subscription }, subscription, order: null };
}

/** A post reported by the processing system: its order, a repeat's first order, or a refusal (see the header). */
export function decidePost(wallet: WalletRecord, id: number, sub: SubscriptionRecord | null, report: PostReport, atMs: number): SubscriptionVerdict {
  if (sub === null || sub.account !== wallet.id) return notFound(wallet, id);
  if (report.prior !== null) return { wallet, events: [], outcome: { kind: 'placed', order: report.prior, balance: wallet.credits }, subscription: null, order: null };
  if (FINAL_SUBSCRIPTION_STATUSES.has(sub.status)) {
    return refusedWith(wallet, errorOutcome('CONFLICT', `Subscription ${sub.id} is ${sub.status}; it takes no more posts.`));
  }
  if (subscriptionExpired(sub, atMs)) return expiredNow(wallet, sub, atMs);
  const { quantity } = report;
  if (!Number.isSafeInteger(quantity) || quantity < sub.min || quantity > sub.max) {
    return refusedWith(wallet, errorOutcome('QTY', `Quantity must be between ${sub.min} and ${sub.max} for subscription ${sub.id}.`, { min: sub.min, max: sub.max }));
  }
  const charge = chargeFor(quantity, sub.rate);
  assert(charge !== null, "a post's charge fits: its quantity is within the range its service allowed at the rate fixed then", sub);
  const debit = isUnlimited(wallet, atMs) ? 0 : charge;
  if (debit > wallet.credits) return unpaid(wallet, sub, report.post, charge, atMs);
  return postPlaced(wallet, sub, report, charge, debit, atMs);
}

/** The wallet cannot pay for the post: refused, and an Active subscription pauses in the same commit. */
function unpaid(wallet: WalletRecord, sub: SubscriptionRecord, post: string, charge: number, atMs: number): SubscriptionVerdict {
  const error = errorOutcome(
    'BALANCE',
    `Post ${post} of subscription ${sub.id} costs ${formatMicro(charge)} credits but the wallet holds ${formatMicro(wallet.credits)}; the subscription is paused until a post finds enough credits.`,
    { charge: `raw:${formatMicro(charge)}`, balance: `raw:${formatMicro(wallet.credits)}` },
  );
  if (sub.status === 'Paused') return refusedWith(wallet, error);
  const { event, record } = moved(sub, 'Paused', 'the wallet could not pay for a post', atMs);
  return refusedWith(wallet, error, [event], record);
}

/** The post's order: resumes a Paused subscription first, and completes it when this post is its last. */
function postPlaced(wallet: WalletRecord, sub: SubscriptionRecord, report: PostReport, charge: number, debit: number, atMs: number): SubscriptionVerdict {
  const events: LogEvent[] = [];
  let record = sub;
  if (sub.status === 'Paused') {
    const resumed = moved(sub, 'Active', 'the wallet pays for a post again', atMs);
    events.push(resumed.event);
    record = resumed.record;
  }
  const paid: WalletRecord = { ...wallet, credits: wallet.credits - debit };
  const order: OrderRecord = {
    id: report.orderId,
    account: wallet.id,
    service: sub.service,
    target: report.link,
    quantity: report.quantity,
    rate: sub.rate,
    charge,
    debit,
    status: 'pending',
    remains: null,
    channel: sub.channel,
    unlimited: isUnlimited(wallet, atMs),
    createdAtMs: atMs,
    seq: report.seq,
    number: report.number,
    type: 'Subscriptions',
    extras: { username: sub.username },
    subscription: sub.id,
    post: report.post,
  };
  events.push(placedEvent(order, paid.credits, null, atMs));
  const orders = [...record.orders, report.number].slice(-SUBSCRIPTION_ORDERS_KEPT);
  record = { ...record, postsDone: record.postsDone + 1, orders, updatedAtMs: atMs };
  if (record.postsDone === postsAllowed(record)) {
    const done = moved(record, 'Completed', 'its last post was ordered', atMs);
    events.push(done.event);
    record = done.record;
  }
  return { wallet: paid, events, outcome: { kind: 'placed', order, balance: paid.credits }, subscription: record, order };
}

/** The customer or the operator cancels it, or the sweep expires it; a command that finds it expired logs that instead. */
export function decideSubscriptionStatus(wallet: WalletRecord, id: number, sub: SubscriptionRecord | null, to: 'Canceled' | 'Expired', reason: string, atMs: number): SubscriptionVerdict {
  if (sub === null || sub.account !== wallet.id) return notFound(wallet, id);
  if (subscriptionMoveRefusal(sub.status, to) === 'final') {
    return refusedWith(wallet, errorOutcome('CONFLICT', `Subscription ${sub.id} is already ${sub.status}, a final state; it cannot move again.`));
  }
  const expired = subscriptionExpired(sub, atMs);
  if (to === 'Canceled' && expired) return expiredNow(wallet, sub, atMs);
  if (to === 'Expired' && !expired) return refusedWith(wallet, errorOutcome('CONFLICT', `Subscription ${sub.id} has not reached its expiry.`));
  const { event, record } = moved(sub, to, reason, atMs);
  return { wallet, events: [event], outcome: { kind: 'changed' }, subscription: record, order: null };
}
