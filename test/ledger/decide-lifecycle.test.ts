import { describe, expect, it } from 'vitest';
import type { RefillRecord } from '../../src/ledger/index.js';
import { CREDIT, WALL_MS, WALLET_ID, decideAt, eventOf, order, refusalOf, service, stateOf } from './decide-fixture.js';

/**
 * An order's life after it is placed, decided in process: the operator's and
 * the workers' status moves, progress, leases, and the customer's cancel and
 * refill. Refunds are worked out here from the order's fields: 100 units at
 * 100,000 micro-credits a unit, debited 10 credits.
 */

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
const held = { status: 'processing', worker: 'w1', leaseExpiresMs: WALL_MS + 5 * MINUTE_MS } as const;

describe('set-status', () => {
  it('an unknown order, or one of another account, is NOT_FOUND', () => {
    const sentence = { code: 'NOT_FOUND', message: 'No order with id ord-9.' };
    expect(refusalOf(decideAt(stateOf(), { kind: 'set-status', orderId: 'ord-9', order: null, to: 'completed', remains: null }))).toEqual(sentence);
    const theirs = order({ id: 'ord-9', account: WALLET_ID + 1 });
    expect(refusalOf(decideAt(stateOf(), { kind: 'set-status', orderId: 'ord-9', order: theirs, to: 'completed', remains: null }))).toEqual(sentence);
  });

  it('a worker moves only an order it holds; the operator moves any', () => {
    const o = order(held);
    const other = decideAt(stateOf(), { kind: 'set-status', orderId: o.id, order: o, to: 'in_progress', remains: null, worker: 'w2' });
    expect(refusalOf(other)).toEqual({ code: 'CONFLICT', message: 'Order ord-1 is held by w1, not by w2.' });
    expect(other.events).toEqual([]);
    const byHolder = decideAt(stateOf(), { kind: 'set-status', orderId: o.id, order: o, to: 'in_progress', remains: null, worker: 'w1' });
    expect(byHolder.order?.status).toBe('in_progress');
    const byOperator = decideAt(stateOf(), { kind: 'set-status', orderId: o.id, order: o, to: 'in_progress', remains: null });
    expect(byOperator.order?.status).toBe('in_progress');
  });

  it('a final order never moves; any other moves only forward', () => {
    const done = order({ status: 'completed' });
    expect(refusalOf(decideAt(stateOf(), { kind: 'set-status', orderId: done.id, order: done, to: 'canceled', remains: null }))).toEqual({
      code: 'CONFLICT',
      message: 'Order ord-1 is already completed, a final state; it cannot move again.',
    });
    const running = order({ status: 'in_progress' });
    expect(refusalOf(decideAt(stateOf(), { kind: 'set-status', orderId: running.id, order: running, to: 'processing', remains: null }))).toEqual({
      code: 'CONFLICT',
      message: 'Order ord-1 is in_progress; it can only move forward, not to processing.',
    });
  });

  it('partial needs remains from 1 to units − 1, counted over a drip-feed order\'s runs', () => {
    const single = order({ status: 'in_progress' });
    expect(refusalOf(decideAt(stateOf(), { kind: 'set-status', orderId: single.id, order: single, to: 'partial', remains: null }))).toEqual({
      code: 'VALIDATION',
      message: 'A partial order needs remains, an integer from 1 to 99 (units not delivered).',
    });
    const drip = order({ status: 'in_progress', extras: { runs: 3, interval: 10 }, charge: 30 * CREDIT, debit: 30 * CREDIT });
    expect(refusalOf(decideAt(stateOf(), { kind: 'set-status', orderId: drip.id, order: drip, to: 'partial', remains: 300 }))).toEqual({
      code: 'VALIDATION',
      message: 'A partial order needs remains, an integer from 1 to 299 (units not delivered, of the 300 ordered over its runs).',
    });
    const accepted = decideAt(stateOf(), { kind: 'set-status', orderId: drip.id, order: drip, to: 'partial', remains: 299 });
    expect(accepted.outcome).toMatchObject({ kind: 'moved', refund: 299 * 100_000 });
  });

  it('remains is refused on any move but partial', () => {
    const running = order({ status: 'in_progress' });
    expect(refusalOf(decideAt(stateOf(), { kind: 'set-status', orderId: running.id, order: running, to: 'completed', remains: 5 }))).toEqual({
      code: 'VALIDATION',
      message: 'remains is only accepted when the status is partial.',
    });
  });

  it('a partial move refunds remains × rate in its event; the event names a reason only when one was given', () => {
    const running = order({ status: 'in_progress', cancelRequested: true });
    const d = decideAt(stateOf(), { kind: 'set-status', orderId: running.id, order: running, to: 'partial', remains: 40 });
    const refund = 40 * 100_000;
    expect(eventOf(d)).toStrictEqual({
      type: 'order.status',
      atMs: WALL_MS,
      account: WALLET_ID,
      order: 'ord-1',
      from: 'in_progress',
      to: 'partial',
      remains: 40,
      refund,
      balance: 100 * CREDIT + refund,
    });
    expect(d.outcome).toEqual({ kind: 'moved', order: d.order, refund, balance: 100 * CREDIT + refund });
    expect(d.state.wallet.credits).toBe(100 * CREDIT + refund);
    expect(d.order).toMatchObject({ status: 'partial', remains: 40, finishedAtMs: WALL_MS });
    expect(d.order).not.toHaveProperty('cancelRequested');
    const withReason = decideAt(stateOf(), { kind: 'set-status', orderId: running.id, order: running, to: 'canceled', remains: null, reason: 'out of stock' });
    expect(eventOf(withReason)).toMatchObject({ reason: 'out of stock', refund: 10 * CREDIT });
  });

  it('a refund the wallet cannot hold is a broken invariant: the decision stops', () => {
    const running = order({ status: 'in_progress' });
    const full = stateOf({ credits: Number.MAX_SAFE_INTEGER - 5 * CREDIT });
    expect(() => decideAt(full, { kind: 'set-status', orderId: running.id, order: running, to: 'canceled', remains: null })).toThrow('invariant: a refund must fit in the wallet');
  });

  it('a claim starts a lease for its worker; a later move ends it', () => {
    const pending = order();
    const claim = { worker: 'w1', leaseExpiresMs: WALL_MS + 5 * MINUTE_MS };
    const claimed = decideAt(stateOf(), { kind: 'set-status', orderId: pending.id, order: pending, to: 'processing', remains: null, claim });
    expect(claimed.order).toMatchObject({ status: 'processing', worker: 'w1', leaseExpiresMs: claim.leaseExpiresMs });
    expect(eventOf(claimed)).toMatchObject({ worker: 'w1', leaseExpiresMs: claim.leaseExpiresMs, refund: 0 });
    const started = decideAt(stateOf(), { kind: 'set-status', orderId: pending.id, order: claimed.order!, to: 'in_progress', remains: null });
    expect(started.order).not.toHaveProperty('leaseExpiresMs');
    expect(started.order?.worker).toBe('w1');
  });
});

describe('progress', () => {
  const running = order({ status: 'in_progress', worker: 'w1', startCount: 500, progressRemains: 40 });

  it('an unknown order is NOT_FOUND', () => {
    expect(refusalOf(decideAt(stateOf(), { kind: 'progress', orderId: 'ord-9', order: null, remains: 3 }))).toEqual({ code: 'NOT_FOUND', message: 'No order with id ord-9.' });
  });

  it('a worker records progress only on an order it holds; the operator on any', () => {
    expect(refusalOf(decideAt(stateOf(), { kind: 'progress', orderId: running.id, order: running, remains: 3, worker: 'w2' }))).toEqual({
      code: 'CONFLICT',
      message: 'Order ord-1 is held by w1, not by w2.',
    });
    expect(decideAt(stateOf(), { kind: 'progress', orderId: running.id, order: running, remains: 3, worker: 'w1' }).order?.progressRemains).toBe(3);
    expect(decideAt(stateOf(), { kind: 'progress', orderId: running.id, order: running, remains: 3 }).order?.progressRemains).toBe(3);
  });

  it('each refusal has its code and sentence', () => {
    const cases = [
      [running, {}, 'VALIDATION', 'Send at least one of start_count, remains.'],
      [order({ status: 'processing' }), { remains: 3 }, 'CONFLICT', 'Order ord-1 is processing; progress is recorded only while it is in_progress.'],
      [running, { startCount: -1 }, 'VALIDATION', 'start_count must be a non-negative integer or null.'],
      [running, { remains: 101 }, 'VALIDATION', 'remains must be an integer from 0 to 100 (units not delivered) or null.'],
    ] as const;
    for (const [o, fields, code, message] of cases) {
      const d = decideAt(stateOf(), { kind: 'progress', orderId: o.id, order: o, ...fields });
      expect(refusalOf(d)).toEqual({ code, message });
      expect(d.events).toEqual([]);
    }
  });

  it('a field left out keeps its recorded value; null clears it', () => {
    const remainsOnly = decideAt(stateOf(), { kind: 'progress', orderId: running.id, order: running, remains: 30 });
    expect(eventOf(remainsOnly)).toStrictEqual({ type: 'order.progress', atMs: WALL_MS, account: WALLET_ID, order: 'ord-1', startCount: 500, remains: 30 });
    expect(remainsOnly.order).toMatchObject({ startCount: 500, progressRemains: 30 });
    const startOnly = decideAt(stateOf(), { kind: 'progress', orderId: running.id, order: running, startCount: null });
    expect(eventOf(startOnly)).toMatchObject({ startCount: null, remains: 40 });
    const fresh = order({ status: 'in_progress' });
    const first = decideAt(stateOf(), { kind: 'progress', orderId: fresh.id, order: fresh, startCount: 7 });
    expect(eventOf(first)).toMatchObject({ startCount: 7, remains: null });
    expect(first.order).toMatchObject({ startCount: 7, progressRemains: null });
    const second = decideAt(stateOf(), { kind: 'progress', orderId: fresh.id, order: fresh, remains: 9 });
    expect(eventOf(second)).toMatchObject({ startCount: null, remains: 9 });
  });
});

describe('leases', () => {
  it('expiring refuses an order whose lease has not ended', () => {
    const o = order(held);
    expect(refusalOf(decideAt(stateOf(), { kind: 'expire-lease', orderId: o.id, order: o }))).toEqual({ code: 'CONFLICT', message: 'Order ord-1 holds no lease that has ended.' });
  });

  it('an ended lease puts the order back in the queue, pending and held by no one', () => {
    const o = order({ ...held, leaseExpiresMs: WALL_MS });
    const d = decideAt(stateOf(), { kind: 'expire-lease', orderId: o.id, order: o });
    expect(eventOf(d)).toStrictEqual({ type: 'order.released', atMs: WALL_MS, account: WALLET_ID, order: 'ord-1', worker: 'w1', cause: 'expired' });
    expect(d.order?.status).toBe('pending');
    expect(d.order).not.toHaveProperty('worker');
    expect(d.order).not.toHaveProperty('leaseExpiresMs');
  });

  it('an ended lease without a worker is a broken record: the decision stops', () => {
    const o = order({ status: 'processing', leaseExpiresMs: WALL_MS });
    expect(() => decideAt(stateOf(), { kind: 'expire-lease', orderId: o.id, order: o })).toThrow('invariant: an order under a lease names the worker holding it');
  });

  it('only the holder releases or extends', () => {
    const o = order(held);
    expect(refusalOf(decideAt(stateOf(), { kind: 'release', orderId: o.id, order: o, worker: 'w2' }))).toEqual({ code: 'CONFLICT', message: 'Order ord-1 is held by w1, not by w2.' });
    const released = decideAt(stateOf(), { kind: 'release', orderId: o.id, order: o, worker: 'w1' });
    expect(eventOf(released)).toMatchObject({ type: 'order.released', worker: 'w1', cause: 'released' });
    const leaseExpiresMs = WALL_MS + 9 * MINUTE_MS;
    const extended = decideAt(stateOf(), { kind: 'extend-lease', orderId: o.id, order: o, worker: 'w1', leaseExpiresMs });
    expect(eventOf(extended)).toStrictEqual({ type: 'order.lease_extended', atMs: WALL_MS, account: WALLET_ID, order: 'ord-1', worker: 'w1', leaseExpiresMs });
    expect(extended.order).toMatchObject({ status: 'processing', worker: 'w1', leaseExpiresMs });
    expect(extended.outcome).toEqual({ kind: 'changed' });
  });
});

describe('cancel', () => {
  const cancellable = service({ cancel: true });

  it('a pending order is canceled at once with its whole debit back', () => {
    const o = order();
    const d = decideAt(stateOf(), { kind: 'cancel', orderId: o.id, order: o, service: cancellable });
    expect(eventOf(d)).toMatchObject({ type: 'order.status', to: 'canceled', refund: 10 * CREDIT, balance: 110 * CREDIT, reason: 'canceled by the customer' });
  });

  it('a processing order gets a request the operator resolves', () => {
    const o = order(held);
    const d = decideAt(stateOf(), { kind: 'cancel', orderId: o.id, order: o, service: cancellable });
    expect(eventOf(d)).toStrictEqual({ type: 'order.cancel_requested', atMs: WALL_MS, account: WALLET_ID, order: 'ord-1' });
    expect(d.order?.cancelRequested).toBe(true);
    expect(d.outcome).toEqual({ kind: 'cancel-requested', order: d.order });
    expect(d.state.wallet.credits).toBe(100 * CREDIT);
  });

  it('a final order is refused', () => {
    const o = order({ status: 'completed' });
    expect(refusalOf(decideAt(stateOf(), { kind: 'cancel', orderId: o.id, order: o, service: cancellable }))).toEqual({
      code: 'CONFLICT',
      message: 'The order is already completed; a final order cannot be canceled.',
    });
  });
});

describe('refill', () => {
  const refillable = service({ refill: true, refillDays: 30 });
  const finished = order({ status: 'completed', finishedAtMs: WALL_MS - DAY_MS });

  it('is refused when the service is unknown or offers none, and after the window', () => {
    expect(refusalOf(decideAt(stateOf(), { kind: 'refill', orderId: finished.id, order: finished, service: null, refillId: 5 }))).toEqual({
      code: 'CONFLICT',
      message: "This order's service does not offer refills.",
    });
    const old = order({ status: 'completed', finishedAtMs: WALL_MS - 31 * DAY_MS });
    expect(refusalOf(decideAt(stateOf(), { kind: 'refill', orderId: old.id, order: old, service: refillable, refillId: 5 }))).toEqual({
      code: 'CONFLICT',
      message: 'The refill window of 30 days after completion has closed.',
    });
  });

  it('opens a pending refill and records it on the order; no money moves', () => {
    const d = decideAt(stateOf(), { kind: 'refill', orderId: finished.id, order: finished, service: refillable, refillId: 5 });
    const refill: RefillRecord = { id: 5, order: 'ord-1', account: WALLET_ID, status: 'pending', createdAtMs: WALL_MS, updatedAtMs: WALL_MS };
    expect(d.refill).toStrictEqual(refill);
    expect(d.outcome).toEqual({ kind: 'refill-opened', refill });
    expect(d.order?.refill).toEqual({ id: 5, status: 'pending', createdAtMs: WALL_MS });
    expect(eventOf(d)).toStrictEqual({ type: 'refill.requested', atMs: WALL_MS, account: WALLET_ID, order: 'ord-1', refill: 5 });
    expect(d.state.wallet.credits).toBe(100 * CREDIT);
  });
});

describe('refill-status', () => {
  const openedMs = WALL_MS - DAY_MS;
  const row = (status: RefillRecord['status']): RefillRecord => ({ id: 5, order: 'ord-1', account: WALLET_ID, status, createdAtMs: openedMs, updatedAtMs: openedMs });
  const withRefill = (status: RefillRecord['status'], id = 5) => order({ status: 'completed', finishedAtMs: openedMs, refill: { id, status, createdAtMs: openedMs } });

  it('an unknown order is NOT_FOUND', () => {
    expect(refusalOf(decideAt(stateOf(), { kind: 'refill-status', stored: row('pending'), orderId: 'ord-9', order: null, to: 'in_progress' }))).toEqual({
      code: 'NOT_FOUND',
      message: 'No order with id ord-9.',
    });
  });

  it('moves the latest refill forward, from the status the order holds, and records it on the order', () => {
    const d = decideAt(stateOf(), { kind: 'refill-status', stored: row('pending'), orderId: 'ord-1', order: withRefill('in_progress'), to: 'completed' });
    expect(eventOf(d)).toStrictEqual({ type: 'refill.status', atMs: WALL_MS, account: WALLET_ID, order: 'ord-1', refill: 5, from: 'in_progress', to: 'completed' });
    expect(d.refill).toStrictEqual({ ...row('pending'), status: 'completed', updatedAtMs: WALL_MS });
    expect(d.order?.refill).toEqual({ id: 5, status: 'completed', createdAtMs: openedMs });
    expect(d.outcome).toEqual({ kind: 'changed' });
  });

  it('a reason is kept on the event and the refill', () => {
    const d = decideAt(stateOf(), { kind: 'refill-status', stored: row('pending'), orderId: 'ord-1', order: withRefill('pending'), to: 'rejected', reason: 'link removed' });
    expect(eventOf(d)).toMatchObject({ from: 'pending', to: 'rejected', reason: 'link removed' });
    expect(d.refill?.reason).toBe('link removed');
  });

  it('a final refill and a backward move are refused', () => {
    expect(refusalOf(decideAt(stateOf(), { kind: 'refill-status', stored: row('pending'), orderId: 'ord-1', order: withRefill('completed'), to: 'rejected' }))).toEqual({
      code: 'CONFLICT',
      message: 'Refill 5 is already completed, a final state; it cannot move again.',
    });
    expect(refusalOf(decideAt(stateOf(), { kind: 'refill-status', stored: row('in_progress'), orderId: 'ord-1', order: withRefill('in_progress'), to: 'pending' }))).toEqual({
      code: 'CONFLICT',
      message: 'Refill 5 is in_progress; it can only move forward, not to pending.',
    });
  });

  it('a closed refill of an order that holds no refill reads its own row', () => {
    const bare = order({ status: 'completed', finishedAtMs: openedMs });
    expect(refusalOf(decideAt(stateOf(), { kind: 'refill-status', stored: row('rejected'), orderId: 'ord-1', order: bare, to: 'completed' }))).toEqual({
      code: 'CONFLICT',
      message: 'Refill 5 is already rejected, a final state; it cannot move again.',
    });
  });

  it('an earlier refill whose row still reads open is closed', () => {
    expect(refusalOf(decideAt(stateOf(), { kind: 'refill-status', stored: row('pending'), orderId: 'ord-1', order: withRefill('pending', 6), to: 'in_progress' }))).toEqual({
      code: 'CONFLICT',
      message: 'Refill 5 is closed: order ord-1 has a later refill; it cannot move again.',
    });
  });
});
