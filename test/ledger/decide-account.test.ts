import { describe, expect, it } from 'vitest';
import { errorOutcome } from '../../src/errors/index.js';
import type { SubscribeRequest } from '../../src/ledger/decide.js';
import type { IdempotencyRecord, SubscriptionRecord, SubscriptionTerms } from '../../src/ledger/index.js';
import { CREDIT, WALL_MS, WALLET_ID, decideAt, drainedState, eventOf, refusalOf, service, stateOf } from './decide-fixture.js';

/**
 * The wallet's own commands, decided in process: the ban, the operator's
 * credits, account changes and plan grants, and the subscription commands
 * that reach the wallet. Amounts are worked out here in micro-credits.
 */

const PLAN_PRICE_INR = 9_999;
const MONTHS_MAX = 120;

describe('API access', () => {
  it('a banned account is refused with its sentence', () => {
    expect(refusalOf(decideAt(stateOf({ banned: true }), { kind: 'touch' }))).toEqual({
      code: 'BANNED',
      message: 'API access is disabled on this account; contact the operator.',
    });
  });
});

describe('credit', () => {
  it('a debit below zero and a top-up past the largest balance are refused with their sentences', () => {
    expect(refusalOf(decideAt(stateOf({ credits: 2 * CREDIT + 500_000 }), { kind: 'credit', amount: -3 * CREDIT, reason: 'fix' }))).toEqual({
      code: 'BALANCE',
      message: 'The wallet holds 2.5 credits; it cannot go below zero.',
    });
    expect(refusalOf(decideAt(stateOf({ credits: Number.MAX_SAFE_INTEGER - 1 }), { kind: 'credit', amount: 2, reason: 'top-up' }))).toEqual({
      code: 'VALIDATION',
      message: 'That amount would take the wallet beyond the largest supported balance.',
    });
  });

  it('a top-up to exactly the largest balance is accepted', () => {
    const d = decideAt(stateOf({ credits: Number.MAX_SAFE_INTEGER - 1 }), { kind: 'credit', amount: 1, reason: 'top-up' });
    expect(d.outcome).toEqual({ kind: 'credited', balance: Number.MAX_SAFE_INTEGER });
  });
});

describe('update', () => {
  it('a change of the limit alone leaves the ban as it was and logs only the limit', () => {
    const d = decideAt(stateOf(), { kind: 'update', rateLimitPerMinute: 120 });
    expect(eventOf(d)).toStrictEqual({ type: 'account.updated', atMs: WALL_MS, account: WALLET_ID, rateLimitPerMinute: 120 });
    expect(d.state.wallet).toStrictEqual({ id: WALLET_ID, credits: 100 * CREDIT, banned: false, rateLimitPerMinute: 120, unlimitedExpiresMs: null });
    expect(d.outcome).toEqual({ kind: 'changed' });
  });

  it('a ban with a reason logs both', () => {
    const d = decideAt(stateOf(), { kind: 'update', banned: true, reason: 'abuse' });
    expect(eventOf(d)).toStrictEqual({ type: 'account.updated', atMs: WALL_MS, account: WALLET_ID, banned: true, reason: 'abuse' });
    expect(d.state.wallet.banned).toBe(true);
  });
});

describe('grant-plan', () => {
  it.each([0, MONTHS_MAX + 1, 1.5, -1])('months %d is refused', (months) => {
    const d = decideAt(stateOf(), { kind: 'grant-plan', months });
    expect(refusalOf(d)).toEqual({ code: 'VALIDATION', message: `months must be an integer from 1 to ${MONTHS_MAX}.` });
    expect(d.events).toEqual([]);
  });

  it('one month from mid-January ends mid-February, priced at one month; no reason, no reason field', () => {
    const d = decideAt(stateOf(), { kind: 'grant-plan', months: 1 });
    const expiresMs = Date.UTC(2026, 1, 15, 12, 0, 0);
    expect(eventOf(d)).toStrictEqual({ type: 'plan.granted', atMs: WALL_MS, account: WALLET_ID, months: 1, priceInr: PLAN_PRICE_INR, expiresMs });
    expect(d.state.wallet.unlimitedExpiresMs).toBe(expiresMs);
  });

  it('the largest grant is accepted and keeps its reason', () => {
    const d = decideAt(stateOf(), { kind: 'grant-plan', months: MONTHS_MAX, reason: 'partner' });
    expect(eventOf(d)).toMatchObject({ months: MONTHS_MAX, priceInr: MONTHS_MAX * PLAN_PRICE_INR, expiresMs: Date.UTC(2036, 0, 15, 12, 0, 0), reason: 'partner' });
  });
});

describe('subscriptions', () => {
  const subsService = service({ id: 12, type: 'Subscriptions', min: 10, max: 1_000 });
  const terms: SubscriptionTerms = { service: 12, username: 'bob', min: 10, max: 100, posts: 0, oldPosts: 0, delayMinutes: 0, expiryMs: null };
  const record: SubscriptionRecord = {
    ...terms,
    id: 3,
    account: WALLET_ID,
    rate: 100_000,
    status: 'Active',
    postsDone: 0,
    orders: [],
    channel: 'api',
    createdAtMs: WALL_MS - 60_000,
    updatedAtMs: WALL_MS - 60_000,
  };
  const idem = { key: 'k1', fingerprint: 'f1' };
  const notJoined = { joined: false, message: 'Join the channel first.', joinLink: 'https://t.me/news', transient: false } as const;

  function subscribe(request: SubscribeRequest) {
    return decideAt(stateOf(), { kind: 'subscribe', requestId: 'req-1', channel: 'api', request, number: 3, prior: null });
  }

  it("the operator's and the processing system's commands skip the ban and the rate limit", () => {
    const canceled = decideAt(drainedState({ banned: true }), { kind: 'subscription-status', subscriptionId: 3, subscription: record, to: 'Canceled', reason: 'by the operator' });
    expect(canceled.outcome).toEqual({ kind: 'changed' });
    expect(canceled.subscription?.status).toBe('Canceled');
    const post = { post: 'p1', link: 'https://x.test/p1', quantity: 20, prior: null, orderId: 'ord-5', seq: 5, number: 5 };
    const placed = decideAt(drainedState({ banned: true }), { kind: 'subscription-post', subscriptionId: 3, subscription: record, ...post });
    expect(placed.outcome).toMatchObject({ kind: 'placed', balance: 100 * CREDIT - 20 * 100_000 });
  });

  it('a refused command changes no subscription', () => {
    const d = decideAt(stateOf(), { kind: 'subscription-status', subscriptionId: 9, subscription: null, to: 'Canceled', reason: 'x' });
    expect(refusalOf(d)).toEqual({ code: 'NOT_FOUND', message: 'No subscription with id 9.' });
    expect(d).not.toHaveProperty('subscription');
  });

  it('a request the front end could not read is refused with its reason', () => {
    const reason = errorOutcome('VALIDATION', "Field 'min' must be an integer.");
    expect(subscribe({ ok: false, reason }).outcome).toEqual({ kind: 'error', error: reason });
  });

  it('FORCEJOIN refuses a subscription that would be placed, and is remembered under its key', () => {
    const d = subscribe({ ok: true, terms, service: subsService, idempotency: idem, forceJoin: notJoined });
    expect(d.outcome).toEqual({ kind: 'error', error: errorOutcome('FORCEJOIN', 'Join the channel first.', { join_link: 'https://t.me/news' }) });
    expect(d.remember).toEqual(idem);
    expect(d).not.toHaveProperty('subscription');
  });

  it('SERVICE comes before FORCEJOIN', () => {
    const d = subscribe({ ok: true, terms, service: null, idempotency: null, forceJoin: notJoined });
    expect(refusalOf(d)).toEqual({ code: 'SERVICE', message: 'Service 12 does not exist or is disabled.' });
  });

  it('a joined customer gets the subscription, remembered under its key, which its placement event carries', () => {
    const d = subscribe({ ok: true, terms, service: subsService, idempotency: idem, forceJoin: { joined: true } });
    expect(d.outcome).toMatchObject({ kind: 'subscribed', subscription: { id: 3, status: 'Active', rate: 100_000 } });
    expect(d.remember).toEqual(idem);
    expect(eventOf(d)).toStrictEqual({ type: 'subscription.placed', atMs: WALL_MS, account: WALLET_ID, subscription: 3, ...terms, rate: 100_000, channel: 'api', idempotencyKey: 'k1' });
  });

  it('a subscription sent without a key is placed with no key in its event and nothing remembered', () => {
    const d = subscribe({ ok: true, terms, service: subsService, idempotency: null, forceJoin: null });
    expect(eventOf(d)).not.toHaveProperty('idempotencyKey');
    expect(d.remember).toBeNull();
  });

  describe('a retry under the same Idempotency-Key', () => {
    const prior: IdempotencyRecord = { fingerprint: 'f1', status: 201, body: '{"ok":true}', order: null, subscription: 3, atMs: WALL_MS - 1_000 };
    const retry = (fingerprint: string) =>
      decideAt(stateOf(), { kind: 'subscribe', requestId: 'req-2', channel: 'api', request: { ok: true, terms, service: subsService, idempotency: { key: 'k1', fingerprint }, forceJoin: null }, number: 4, prior });

    it('with the same terms replays the stored answer and places nothing', () => {
      const d = retry('f1');
      expect(d.outcome).toEqual({ kind: 'replay', record: prior });
      expect(d.events).toEqual([]);
      expect(d.remember).toBeNull();
      expect(d.state.wallet).toStrictEqual(stateOf().wallet);
    });

    it('a stored record without the key it is stored under is a broken command: the decision stops', () => {
      const keyless = { ok: true, terms, service: subsService, idempotency: null, forceJoin: null } as const;
      expect(() => decideAt(stateOf(), { kind: 'subscribe', requestId: 'req-2', channel: 'api', request: keyless, number: 4, prior })).toThrow(
        'invariant: a stored Idempotency-Key record is gathered only for a request that sent its key',
      );
    });

    it('with other terms is refused with IDEMPOTENCY and places nothing', () => {
      const d = retry('f2');
      expect(refusalOf(d)).toEqual({ code: 'IDEMPOTENCY', message: 'This Idempotency-Key was already used with a different payload; use a new key for a new subscription.' });
      expect(d.events).toEqual([]);
      expect(d.remember).toBeNull();
    });
  });

  it('a business refusal (QTY) is remembered under its key with an order.rejected event', () => {
    const d = subscribe({ ok: true, terms: { ...terms, max: 1_001 }, service: subsService, idempotency: idem, forceJoin: null });
    const qty = errorOutcome('QTY', "Fields 'min' and 'max' must lie between 10 and 1000 for service 12.");
    expect(d.outcome).toEqual({ kind: 'error', error: qty });
    expect(d.remember).toEqual(idem);
    expect(eventOf(d)).toStrictEqual({ type: 'order.rejected', atMs: WALL_MS, account: WALLET_ID, idempotencyKey: 'k1', code: 'QTY' });
  });

  it('a VALIDATION refusal of the catalogue (a service of another type) is not remembered, so a retry once the catalogue is corrected may place it', () => {
    const d = subscribe({ ok: true, terms, service: service({ id: 12 }), idempotency: idem, forceJoin: null });
    expect(d.outcome).toEqual({ kind: 'error', error: errorOutcome('VALIDATION', 'Service 12 is a Default service, not a Subscriptions one.') });
    expect(d.remember).toBeNull();
    expect(d.events).toEqual([]);
  });
});
