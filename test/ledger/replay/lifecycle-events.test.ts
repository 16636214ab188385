/**
 * The lifecycle events that move no money, as the replay checks them: no
 * amount, an order of their account, a valid time, and progress and
 * cancel requests only where the actor accepts them.
 */
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../../src/ledger/index.js';
import { CREDIT, Ledger } from '../../helpers/ledger.js';
import { replayImage } from '../../helpers/ledger-image.js';

/** Service 1 allows cancel; order p1 is in progress, order q1 pending. */
function base(cancel = true): Ledger {
  return new Ledger().service({ cancel }).account(1).credit(1, 10 * CREDIT).place(1, 'p1', 10, 100_000).move('p1', 'in_progress').place(1, 'q1', 10, 100_000);
}

function push(ledger: Ledger, event: Record<string, unknown>): Ledger {
  ledger.events.push({ atMs: 1_700_000_100_000, account: 1, ...event } as unknown as LogEvent);
  return ledger;
}

describe('what every lifecycle event must be', () => {
  it('carries no money, names an order of its account, and a valid time', () => {
    expect(replayImage(push(base(), { type: 'order.progress', order: 'p1', startCount: 1, remains: 2, balance: 0 })).firstBroken).toMatch(/order.progress carries balance 0 credits; it must move no money/);
    expect(replayImage(push(base(), { type: 'order.progress', order: 'zz', startCount: 1, remains: 2 })).firstBroken).toMatch(/order.progress names an order that no earlier order.placed created/);
    expect(replayImage(push(base().account(2), { type: 'order.progress', account: 2, order: 'p1', startCount: 1, remains: 2 })).firstBroken).toMatch(/names account 2 but the order belongs to account 1/);
    expect(replayImage(push(base(), { type: 'order.progress', order: 'p1', startCount: 1, remains: 2, atMs: 'later' })).broken).toMatchObject({ invariant: 'lifecycle', seq: 7, order: 'p1' });
    expect(replayImage(push(base(), { type: 'order.cancel_requested' })).firstBroken).toMatch(/order.cancel_requested does not carry an order id/);
  });
});

describe('order.progress', () => {
  it('is accepted while the order is in_progress, with remains within the units ordered', () => {
    expect(replayImage(push(base(), { type: 'order.progress', order: 'p1', startCount: 100, remains: 10 })).firstBroken).toBeNull();
    expect(replayImage(push(base(), { type: 'order.progress', order: 'q1', startCount: 1, remains: 1 })).firstBroken).toMatch(/the actor refuses order.progress here: progress is recorded only while the order is in_progress, and it is pending/);
    expect(replayImage(push(base(), { type: 'order.progress', order: 'p1', startCount: -1, remains: 1 })).firstBroken).toMatch(/start_count must be 0 or more/);
  });
});

describe('order.cancel_requested', () => {
  it('is accepted once per order whose service allows it', () => {
    expect(replayImage(push(base(), { type: 'order.cancel_requested', order: 'p1' })).firstBroken).toBeNull();
    const twice = push(push(base(), { type: 'order.cancel_requested', order: 'p1' }), { type: 'order.cancel_requested', order: 'p1' });
    expect(replayImage(twice).broken).toMatchObject({ invariant: 'lifecycle', seq: 8, order: 'p1' });
  });

  it('stays open through a move that is not final, so a second request after it is still refused', () => {
    const claimed = new Ledger().service({ cancel: true }).account(1).credit(1, 10 * CREDIT).place(1, 'p1', 10, 100_000).move('p1', 'processing');
    const again = push(push(claimed, { type: 'order.cancel_requested', order: 'p1' }).move('p1', 'in_progress'), { type: 'order.cancel_requested', order: 'p1' });
    expect(replayImage(again).firstBroken).toBe(
      'Lifecycle check failed at seq 8 (account 1, order p1): the actor refuses order.cancel_requested here: A cancel request for this order is already open; the operator will resolve it.',
    );
  });

  it('is refused for a pending order (canceled at once instead) and where the service allows no cancel', () => {
    expect(replayImage(push(base(), { type: 'order.cancel_requested', order: 'q1' })).firstBroken).toMatch(/a pending order is canceled at once \(order.status\), never by request/);
    expect(replayImage(push(base(false), { type: 'order.cancel_requested', order: 'p1' })).firstBroken).toMatch(/the actor refuses order.cancel_requested here/);
  });
});

describe('the sentences of refused lifecycle events', () => {
  it('name the lifecycle check, the seq, the account and the order', () => {
    expect(replayImage(push(base(), { type: 'order.cancel_requested' })).firstBroken).toBe('Lifecycle check failed at seq 7 (account 1): order.cancel_requested does not carry an order id.');
    expect(replayImage(push(base(), { type: 'order.progress', order: 'zz', startCount: 1, remains: 2 })).firstBroken).toBe(
      'Lifecycle check failed at seq 7 (account 1, order zz): order.progress names an order that no earlier order.placed created.',
    );
    expect(replayImage(push(base().account(2), { type: 'order.progress', account: 2, order: 'p1', startCount: 1, remains: 2 })).firstBroken).toBe(
      'Lifecycle check failed at seq 8 (account 2, order p1): order.progress names account 2 but the order belongs to account 1.',
    );
    expect(replayImage(push(base(), { type: 'order.progress', order: 'p1', startCount: 1, remains: 2, atMs: 'later' })).firstBroken).toBe(
      'Lifecycle check failed at seq 7 (account 1, order p1): order.progress carries an invalid time (later).',
    );
  });
});
