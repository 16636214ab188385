/**
 * order.status as the replay checks it: forward only, never out of a final
 * state, remains only on partial, and the refund due, once.
 */
import { describe, expect, it } from 'vitest';
import { CREDIT, Ledger } from '../../helpers/ledger.js';
import { applyEvent } from '../../../src/ledger/replay/known-events.js';
import { replayImage, replayStateOf } from '../../helpers/ledger-image.js';

const placed = (): Ledger => new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000);

describe('status moves', () => {
  it('moves forward with their refunds verify, and the totals hold each refund once', () => {
    const report = replayImage(placed().move('o1', 'in_progress').move('o1', 'partial', 4));
    expect(report.firstBroken).toBeNull();
    expect(report.totals.refunded).toBe(400_000n);
  });

  it('a move out of a final state is refused, even to the same status', () => {
    const ledger = placed().move('o1', 'canceled');
    ledger.events.push({ ...ledger.last('order.status'), from: 'canceled', refund: 0 });
    expect(replayImage(ledger).broken).toMatchObject({ invariant: 'order-status', seq: 5, account: 1, order: 'o1' });
    expect(replayImage(ledger).firstBroken).toMatch(/the order is already canceled, a final state, and cannot move again \(here to canceled\)/);
  });

  it('a move backwards is refused, and so is one that misstates where it moves from', () => {
    const backwards = placed().move('o1', 'in_progress');
    backwards.events.push({ ...backwards.last('order.status'), from: 'in_progress', to: 'processing' });
    backwards.order('o1').status = 'processing';
    expect(replayImage(backwards).firstBroken).toMatch(/the order moves backwards or sideways, from in_progress to processing/);
    const misstated = placed().move('o1', 'processing');
    misstated.last('order.status').from = 'in_progress';
    expect(replayImage(misstated).firstBroken).toMatch(/order.status says it moves from in_progress but the order is pending/);
  });

  it('remains belong on partial only, within the units ordered', () => {
    const none = placed().move('o1', 'partial', 10);
    expect(replayImage(none).firstBroken).toMatch(/a partial order needs remains from 1 to 9, not 10/);
    const stray = placed().move('o1', 'completed');
    stray.last('order.status').remains = 3;
    expect(replayImage(stray).firstBroken).toMatch(/remains is set \(3\) on a move to completed; only partial carries it/);
  });

  it('a move of an order never placed, or of another account\'s order, is refused', () => {
    const unknown = placed();
    unknown.events.push({ type: 'order.status', atMs: 1, account: 1, order: 'nope', from: 'pending', to: 'processing', remains: null, refund: 0, balance: 9 * CREDIT });
    expect(replayImage(unknown).firstBroken).toMatch(/order.status moves an order that no earlier order.placed created/);
    const foreign = placed().account(2).move('o1', 'processing');
    foreign.last('order.status').account = 2;
    foreign.last('order.status').balance = 0;
    expect(replayImage(foreign).firstBroken).toMatch(/order.status names account 2 but the order belongs to account 1/);
  });
});

describe('the sentences of refused moves', () => {
  const AT = 'Order status check failed at seq 4 (account 1, order o1): ';

  it('name the order status check and what is wrong', () => {
    const nameless = placed().move('o1', 'processing');
    delete (nameless.last('order.status') as { order?: string }).order;
    expect(replayImage(nameless).firstBroken).toBe('Order status check failed at seq 4 (account 1): order.status does not carry an order id.');
    const foreign = placed().account(2).move('o1', 'processing');
    Object.assign(foreign.last('order.status'), { account: 2, balance: 0 });
    expect(replayImage(foreign).firstBroken).toBe('Order status check failed at seq 5 (account 2, order o1): order.status names account 2 but the order belongs to account 1.');
    const unknown = placed().move('o1', 'processing');
    (unknown.last('order.status') as { to: string }).to = 'shipped';
    expect(replayImage(unknown).firstBroken).toBe(`${AT}order.status moves to an unknown status "shipped".`);
    expect(replayImage(placed().move('o1', 'partial', 10)).firstBroken).toBe(`${AT}a partial order needs remains from 1 to 9, not 10.`);
    const stray = placed().move('o1', 'completed');
    stray.last('order.status').remains = 3;
    expect(replayImage(stray).firstBroken).toBe(`${AT}remains is set (3) on a move to completed; only partial carries it.`);
  });

  it('a move whose balance is not the one its refund leaves is named with the move', () => {
    const ledger = placed().move('o1', 'canceled');
    ledger.last('order.status').balance += 1;
    ledger.wallet(1).credits += 1;
    expect(replayImage(ledger).firstBroken).toBe(
      'Balance replay failed at seq 4 (account 1, order o1): order.status to canceled refunding 1 credits leaves a replayed balance of 10 credits but the event records 10.000001 credits.',
    );
  });
});

describe('what a final move leaves in the replay', () => {
  it('resolves the open cancel request, and an order held open keeps the time it finished', () => {
    const ledger = new Ledger().service({ cancel: true }).account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000).move('o1', 'processing');
    ledger.events.push({ type: 'order.cancel_requested', atMs: ledger.last('order.status').atMs + 1000, account: 1, order: 'o1' });
    ledger.move('o1', 'canceled');
    // The row ends elsewhere, so the order stays open to the end of the log.
    ledger.order('o1').remains = 1;
    const state = replayStateOf(ledger);
    ledger.events.forEach((event, i) => applyEvent(state, i + 1, event));
    expect(state.cancelRequests.has('o1')).toBe(false);
    expect(state.orders.find('o1')?.finishedAtMs).toBe(ledger.last('order.status').atMs);
  });

  it('keeps no finishing time from a final move whose time is not an instant', () => {
    const ledger = placed().move('o1', 'completed');
    (ledger.last('order.status') as { atMs: unknown }).atMs = 'noon';
    ledger.order('o1').remains = 1;
    const state = replayStateOf(ledger);
    ledger.events.forEach((event, i) => applyEvent(state, i + 1, event));
    expect(state.orders.find('o1')?.finishedAtMs).toBeUndefined();
  });
});
