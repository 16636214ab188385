/**
 * The wallet's decisions about subscriptions, called in process: placing
 * one (no money moves, the rate is fixed), each post the processing system
 * reports (an order charged quantity × the fixed rate, refused and pausing
 * the subscription without funds, resuming it when a post finds them, the
 * last post completing it), the clock ending it, and cancels. Each case
 * compares the whole verdict (wallet, events, outcome, rows) with one
 * written out in the test; charges are computed with plain integer
 * arithmetic (test/helpers/plain-money.ts), never with the ledger's rules.
 */
import { describe, expect, it } from 'vitest';
import { withServiceDefaults, type LogEvent, type OrderRecord, type ServiceRecord, type SubscriptionRecord, type SubscriptionTerms, type WalletRecord } from '../../src/ledger/index.js';
import { decidePost, decideSubscribe, decideSubscriptionStatus, type PostReport, type SubscriptionVerdict } from '../../src/ledger/subscription-decide.js';
import { InvariantError } from '../../src/platform/assert.js';
import { plainCharge } from '../helpers/plain-money.js';

/** 0.25 credits a unit, in micro-credits. */
const RATE_MICRO = 250_000;
const CREDIT_MICRO = 1_000_000;
const NOW_MS = Date.UTC(2030, 0, 10, 15, 30);
/** The end of 15/03/2030 (UTC), the expiry day used below. */
const EXPIRY_MS = Date.UTC(2030, 2, 16);

function wallet(over: Partial<WalletRecord> = {}): WalletRecord {
  return { id: 42, credits: 10 * CREDIT_MICRO, banned: false, rateLimitPerMinute: 60, unlimitedExpiresMs: null, ...over };
}

function service(over: Partial<ServiceRecord> = {}): ServiceRecord {
  return withServiceDefaults({ id: 7, platform: 'instagram', name: 'Auto likes', rate: RATE_MICRO, min: 10, max: 1000, enabled: true, type: 'Subscriptions', ...over });
}

function terms(over: Partial<SubscriptionTerms> = {}): SubscriptionTerms {
  return { service: 7, username: 'natgeo', min: 20, max: 40, posts: 2, oldPosts: 0, delayMinutes: 30, expiryMs: EXPIRY_MS, ...over };
}

function sub(over: Partial<SubscriptionRecord> = {}): SubscriptionRecord {
  return {
    ...terms(),
    id: 5,
    account: 42,
    rate: RATE_MICRO,
    status: 'Active',
    postsDone: 0,
    orders: [],
    channel: 'api',
    createdAtMs: NOW_MS - 1000,
    updatedAtMs: NOW_MS - 1000,
    ...over,
  };
}

function report(over: Partial<PostReport> = {}): PostReport {
  return { post: 'C1abc', link: 'https://instagram.com/p/C1abc', quantity: 30, prior: null, orderId: 'ord-9', seq: 11, number: 1001, ...over };
}

/** A refusal that changes nothing: the wallet as it was, no events, no rows. */
function refused(w: WalletRecord, code: string, status: number, message: string, extra?: Record<string, string | number>): SubscriptionVerdict {
  const error = extra === undefined ? { code, status, message } : { code, status, message, extra };
  return { wallet: w, events: [], outcome: { kind: 'error', error }, subscription: null, order: null } as SubscriptionVerdict;
}

function statusEvent(from: string, to: string, reason: string, atMs = NOW_MS): LogEvent {
  return { type: 'subscription.status', atMs, account: 42, subscription: 5, from, to, reason } as LogEvent;
}

/** The order a post of sub() places for report(), before `over`. */
function postOrder(over: Partial<OrderRecord> = {}): OrderRecord {
  const charge = plainCharge(30, RATE_MICRO);
  return {
    id: 'ord-9',
    account: 42,
    service: 7,
    target: 'https://instagram.com/p/C1abc',
    quantity: 30,
    rate: RATE_MICRO,
    charge,
    debit: charge,
    status: 'pending',
    remains: null,
    channel: 'api',
    unlimited: false,
    createdAtMs: NOW_MS,
    seq: 11,
    number: 1001,
    type: 'Subscriptions',
    extras: { username: 'natgeo' },
    subscription: 5,
    post: 'C1abc',
    ...over,
  };
}

function placedEventOf(order: OrderRecord, balance: number): LogEvent {
  return {
    type: 'order.placed',
    atMs: NOW_MS,
    account: 42,
    order: order.id,
    number: order.number,
    service: 7,
    quantity: order.quantity,
    rate: order.rate,
    charge: order.charge,
    debit: order.debit,
    balance,
    channel: order.channel,
    idempotencyKey: null,
    orderType: 'Subscriptions',
    extras: { username: 'natgeo' },
    subscription: 5,
    post: order.post,
  } as LogEvent;
}

describe('placing a subscription', () => {
  it('moves no money, fixes the service rate, starts Active with no posts, and logs its terms', () => {
    const w = wallet();
    const verdict = decideSubscribe(w, terms(), service(), 5, 'panel', NOW_MS, null);
    const placed: SubscriptionRecord = { ...terms(), id: 5, account: 42, rate: RATE_MICRO, status: 'Active', postsDone: 0, orders: [], channel: 'panel', createdAtMs: NOW_MS, updatedAtMs: NOW_MS };
    expect(verdict).toStrictEqual({
      wallet: w,
      events: [{ type: 'subscription.placed', atMs: NOW_MS, account: 42, subscription: 5, ...terms(), rate: RATE_MICRO, channel: 'panel' }],
      outcome: { kind: 'subscribed', subscription: placed },
      subscription: placed,
      order: null,
    });
    expect(verdict.wallet).toBe(w);
  });

  it('names the Idempotency-Key it was placed with in its event', () => {
    const verdict = decideSubscribe(wallet(), terms(), service(), 5, 'api', NOW_MS, 'key-1');
    expect(verdict.events).toStrictEqual([{ type: 'subscription.placed', atMs: NOW_MS, account: 42, subscription: 5, ...terms(), rate: RATE_MICRO, channel: 'api', idempotencyKey: 'key-1' }]);
  });

  it('refuses an unknown or disabled service as SERVICE, naming the id the terms asked for', () => {
    const w = wallet();
    expect(decideSubscribe(w, terms({ service: 8 }), null, 5, 'api', NOW_MS, null)).toStrictEqual(refused(w, 'SERVICE', 422, 'Service 8 does not exist or is disabled.'));
    expect(decideSubscribe(w, terms(), service({ enabled: false }), 5, 'api', NOW_MS, null)).toStrictEqual(refused(w, 'SERVICE', 422, 'Service 7 does not exist or is disabled.'));
  });

  it('refuses terms outside the service range as QTY without an order quantity range, and bad terms as VALIDATION', () => {
    const w = wallet();
    expect(decideSubscribe(w, terms({ min: 5 }), service(), 5, 'api', NOW_MS, null)).toStrictEqual(refused(w, 'QTY', 422, "Fields 'min' and 'max' must lie between 10 and 1000 for service 7."));
    expect(decideSubscribe(w, terms(), service({ type: 'Default' }), 5, 'api', NOW_MS, null)).toStrictEqual(
      refused(w, 'VALIDATION', 400, 'Service 7 is a Default service, not a Subscriptions one.'),
    );
    expect(decideSubscribe(w, terms({ expiryMs: Date.UTC(2030, 0, 10) }), service(), 5, 'api', NOW_MS, null)).toStrictEqual(
      refused(w, 'VALIDATION', 400, "Field 'expiry' is a day already past; send a later date, or none."),
    );
  });
});

describe('a post of a subscription', () => {
  it('is an order charged quantity × the fixed rate, whatever the service charges now', () => {
    const w = wallet();
    const order = postOrder();
    const balance = 10 * CREDIT_MICRO - plainCharge(30, RATE_MICRO);
    expect(order.charge).toBe(7_500_000);
    expect(decidePost(w, 5, sub(), report(), NOW_MS)).toStrictEqual({
      wallet: { ...w, credits: balance },
      events: [placedEventOf(order, balance)],
      outcome: { kind: 'placed', order, balance },
      subscription: sub({ postsDone: 1, orders: [1001], updatedAtMs: NOW_MS }),
      order,
    });
  });

  it('carries the channel the subscription was placed through, and keeps at most the last 100 order numbers', () => {
    const numbers = Array.from({ length: 100 }, (_, i) => i + 1);
    const verdict = decidePost(wallet(), 5, sub({ posts: 0, postsDone: 100, orders: numbers, channel: 'panel' }), report(), NOW_MS);
    expect(verdict.order).toMatchObject({ channel: 'panel' });
    expect(verdict.subscription).toStrictEqual(sub({ posts: 0, postsDone: 101, orders: [...numbers.slice(1), 1001], channel: 'panel', updatedAtMs: NOW_MS }));
  });

  it('takes quantities from min to max of the subscription, and refuses others as QTY with the range', () => {
    const w = wallet();
    for (const quantity of [20, 40]) expect(decidePost(w, 5, sub(), report({ quantity }), NOW_MS).outcome.kind, String(quantity)).toBe('placed');
    for (const quantity of [19, 41, 0, -20, 30.5, Number.NaN, 2 ** 53]) {
      expect(decidePost(w, 5, sub(), report({ quantity }), NOW_MS), String(quantity)).toStrictEqual(refused(w, 'QTY', 422, 'Quantity must be between 20 and 40 for subscription 5.', { min: 20, max: 40 }));
    }
  });

  it('debits nothing while the unlimited plan runs, and the whole charge from the instant it ends', () => {
    const charge = plainCharge(30, RATE_MICRO);
    const during = decidePost(wallet({ credits: 0, unlimitedExpiresMs: NOW_MS + 1 }), 5, sub(), report(), NOW_MS);
    const free = postOrder({ debit: 0, unlimited: true });
    expect(during.outcome).toStrictEqual({ kind: 'placed', order: free, balance: 0 });
    expect(during.wallet.credits).toBe(0);
    expect(during.events).toStrictEqual([placedEventOf(free, 0)]);
    const after = decidePost(wallet({ unlimitedExpiresMs: NOW_MS }), 5, sub(), report(), NOW_MS);
    expect(after.outcome).toStrictEqual({ kind: 'placed', order: postOrder(), balance: 10 * CREDIT_MICRO - charge });
  });

  it('stops on a charge beyond the safe integers, which terms within a service range cannot reach', () => {
    const huge = sub({ max: Number.MAX_SAFE_INTEGER, rate: 1_000_000 });
    expect(() => decidePost(wallet(), 5, huge, report({ quantity: 2 ** 40 }), NOW_MS)).toThrow(InvariantError);
    expect(() => decidePost(wallet(), 5, huge, report({ quantity: 2 ** 40 }), NOW_MS)).toThrow(
      /^invariant: a post's charge fits: its quantity is within the range its service allowed at the rate fixed then; got \{/,
    );
  });

  it('spends the wallet down to exactly 0', () => {
    const charge = plainCharge(30, RATE_MICRO);
    const verdict = decidePost(wallet({ credits: charge }), 5, sub(), report(), NOW_MS);
    expect(verdict.outcome).toStrictEqual({ kind: 'placed', order: postOrder(), balance: 0 });
    expect(verdict.wallet.credits).toBe(0);
  });

  it('that the wallet cannot pay for is refused as BALANCE and pauses an Active subscription in the same commit', () => {
    const w = wallet({ credits: plainCharge(30, RATE_MICRO) - 1 });
    const error = {
      code: 'BALANCE',
      status: 402,
      message: 'Post C1abc of subscription 5 costs 7.5 credits but the wallet holds 7.499999; the subscription is paused until a post finds enough credits.',
      extra: { charge: 'raw:7.5', balance: 'raw:7.499999' },
    };
    expect(decidePost(w, 5, sub(), report(), NOW_MS)).toStrictEqual({
      wallet: w,
      events: [statusEvent('Active', 'Paused', 'the wallet could not pay for a post')],
      outcome: { kind: 'error', error },
      subscription: sub({ status: 'Paused', updatedAtMs: NOW_MS }),
      order: null,
    });
    expect(decidePost(w, 5, sub({ status: 'Paused' }), report(), NOW_MS)).toStrictEqual({ wallet: w, events: [], outcome: { kind: 'error', error }, subscription: null, order: null });
  });

  it('that the wallet can pay for resumes a Paused subscription, logging the move before the order', () => {
    const w = wallet();
    const order = postOrder();
    const balance = 10 * CREDIT_MICRO - plainCharge(30, RATE_MICRO);
    expect(decidePost(w, 5, sub({ status: 'Paused', postsDone: 0 }), report(), NOW_MS)).toStrictEqual({
      wallet: { ...w, credits: balance },
      events: [statusEvent('Paused', 'Active', 'the wallet pays for a post again'), placedEventOf(order, balance)],
      outcome: { kind: 'placed', order, balance },
      subscription: sub({ status: 'Active', postsDone: 1, orders: [1001], updatedAtMs: NOW_MS }),
      order,
    });
  });

  it('that is the last of its new and old posts completes it in the same commit', () => {
    const order = postOrder();
    const balance = 10 * CREDIT_MICRO - plainCharge(30, RATE_MICRO);
    const verdict = decidePost(wallet(), 5, sub({ posts: 2, oldPosts: 1, postsDone: 2, orders: [998, 999] }), report(), NOW_MS);
    expect(verdict.events).toStrictEqual([placedEventOf(order, balance), statusEvent('Active', 'Completed', 'its last post was ordered')]);
    expect(verdict.subscription).toStrictEqual(sub({ posts: 2, oldPosts: 1, status: 'Completed', postsDone: 3, orders: [998, 999, 1001], updatedAtMs: NOW_MS }));
    const resumedLast = decidePost(wallet(), 5, sub({ status: 'Paused', posts: 1, postsDone: 0 }), report(), NOW_MS);
    expect(resumedLast.events.map((e) => (e.type === 'subscription.status' ? `${e.from}→${e.to}` : e.type))).toEqual(['Paused→Active', 'order.placed', 'Active→Completed']);
    expect(resumedLast.subscription?.status).toBe('Completed');
  });

  it('before the last stays Active, and never completes one without a limit', () => {
    expect(decidePost(wallet(), 5, sub({ posts: 2, oldPosts: 1, postsDone: 1 }), report(), NOW_MS).subscription).toMatchObject({ status: 'Active', postsDone: 2 });
    const unlimited = decidePost(wallet(), 5, sub({ posts: 0, oldPosts: 0, postsDone: 0 }), report(), NOW_MS);
    expect(unlimited.subscription).toMatchObject({ status: 'Active', postsDone: 1 });
    expect(unlimited.events.map((e) => e.type)).toEqual(['order.placed']);
  });

  it('reported again gets its first order back, charging and changing nothing, even once the subscription has ended', () => {
    const w = wallet({ credits: 0 });
    const prior = postOrder({ id: 'ord-1', number: 900 });
    const expected = { wallet: w, events: [], outcome: { kind: 'placed', order: prior, balance: 0 }, subscription: null, order: null };
    expect(decidePost(w, 5, sub(), report({ prior }), NOW_MS)).toStrictEqual(expected);
    expect(decidePost(w, 5, sub({ status: 'Completed' }), report({ prior, quantity: 1 }), EXPIRY_MS + 1)).toStrictEqual(expected);
  });

  it("of an unknown subscription or another wallet's is NOT_FOUND, naming the id asked for", () => {
    const w = wallet();
    expect(decidePost(w, 6, null, report(), NOW_MS)).toStrictEqual(refused(w, 'NOT_FOUND', 404, 'No subscription with id 6.'));
    expect(decidePost(w, 5, sub({ account: 43 }), report({ prior: postOrder() }), NOW_MS)).toStrictEqual(refused(w, 'NOT_FOUND', 404, 'No subscription with id 5.'));
  });

  it('of a final subscription is CONFLICT and changes nothing', () => {
    const w = wallet();
    for (const status of ['Completed', 'Expired', 'Canceled'] as const) {
      expect(decidePost(w, 5, sub({ status }), report(), NOW_MS)).toStrictEqual(refused(w, 'CONFLICT', 409, `Subscription 5 is ${status}; it takes no more posts.`));
    }
  });

  it('at or after its expiry is refused and logs the move to Expired, from Active or Paused', () => {
    const w = wallet();
    const message = 'Subscription 5 expired at the end of 15/03/2030; it takes no more posts.';
    for (const status of ['Active', 'Paused'] as const) {
      expect(decidePost(w, 5, sub({ status }), report({ quantity: 1 }), EXPIRY_MS)).toStrictEqual({
        wallet: w,
        events: [statusEvent(status, 'Expired', 'its expiry passed', EXPIRY_MS)],
        outcome: { kind: 'error', error: { code: 'CONFLICT', status: 409, message } },
        subscription: sub({ status: 'Expired', updatedAtMs: EXPIRY_MS }),
        order: null,
      });
    }
    expect(decidePost(w, 5, sub(), report(), EXPIRY_MS - 1).outcome.kind).toBe('placed');
  });
});

describe('cancel and expiry of a subscription', () => {
  it('cancels an Active or Paused one with the reason given, moving no money', () => {
    const w = wallet();
    for (const status of ['Active', 'Paused'] as const) {
      expect(decideSubscriptionStatus(w, 5, sub({ status }), 'Canceled', 'customer asked', NOW_MS)).toStrictEqual({
        wallet: w,
        events: [statusEvent(status, 'Canceled', 'customer asked')],
        outcome: { kind: 'changed' },
        subscription: sub({ status: 'Canceled', updatedAtMs: NOW_MS }),
        order: null,
      });
    }
    expect(decideSubscriptionStatus(w, 5, sub({ expiryMs: null }), 'Canceled', 'operator', NOW_MS).outcome).toStrictEqual({ kind: 'changed' });
  });

  it('logs the move to Expired instead of a cancel that comes at or after its expiry', () => {
    const w = wallet();
    expect(decideSubscriptionStatus(w, 5, sub(), 'Canceled', 'customer asked', EXPIRY_MS)).toStrictEqual({
      wallet: w,
      events: [statusEvent('Active', 'Expired', 'its expiry passed', EXPIRY_MS)],
      outcome: { kind: 'error', error: { code: 'CONFLICT', status: 409, message: 'Subscription 5 expired at the end of 15/03/2030; it takes no more posts.' } },
      subscription: sub({ status: 'Expired', updatedAtMs: EXPIRY_MS }),
      order: null,
    });
    expect(decideSubscriptionStatus(w, 5, sub(), 'Canceled', 'customer asked', EXPIRY_MS - 1).outcome).toStrictEqual({ kind: 'changed' });
  });

  it('expires one whose expiry has come, with the reason given', () => {
    const w = wallet();
    expect(decideSubscriptionStatus(w, 5, sub({ status: 'Paused' }), 'Expired', 'the sweep', EXPIRY_MS)).toStrictEqual({
      wallet: w,
      events: [statusEvent('Paused', 'Expired', 'the sweep', EXPIRY_MS)],
      outcome: { kind: 'changed' },
      subscription: sub({ status: 'Expired', updatedAtMs: EXPIRY_MS }),
      order: null,
    });
  });

  it('refuses to expire one before its expiry, or one without an expiry', () => {
    const w = wallet();
    const early = refused(w, 'CONFLICT', 409, 'Subscription 5 has not reached its expiry.');
    expect(decideSubscriptionStatus(w, 5, sub(), 'Expired', 'the sweep', EXPIRY_MS - 1)).toStrictEqual(early);
    expect(decideSubscriptionStatus(w, 5, sub({ expiryMs: null }), 'Expired', 'the sweep', EXPIRY_MS)).toStrictEqual(early);
  });

  it('refuses any move of a final one as CONFLICT, even one already expired', () => {
    const w = wallet();
    for (const status of ['Completed', 'Expired', 'Canceled'] as const) {
      const message = `Subscription 5 is already ${status}, a final state; it cannot move again.`;
      expect(decideSubscriptionStatus(w, 5, sub({ status }), 'Canceled', 'customer asked', NOW_MS)).toStrictEqual(refused(w, 'CONFLICT', 409, message));
      expect(decideSubscriptionStatus(w, 5, sub({ status }), 'Expired', 'the sweep', EXPIRY_MS)).toStrictEqual(refused(w, 'CONFLICT', 409, message));
    }
  });

  it("is NOT_FOUND for an unknown subscription or another wallet's", () => {
    const w = wallet();
    expect(decideSubscriptionStatus(w, 6, null, 'Canceled', 'customer asked', NOW_MS)).toStrictEqual(refused(w, 'NOT_FOUND', 404, 'No subscription with id 6.'));
    expect(decideSubscriptionStatus(w, 5, sub({ account: 43 }), 'Canceled', 'customer asked', NOW_MS)).toStrictEqual(refused(w, 'NOT_FOUND', 404, 'No subscription with id 5.'));
  });
});
