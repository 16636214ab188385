/**
 * order.status as the replay checks it: forward only, never out of a final
 * state, remains only on partial, and the refund due, once.
 */
import { describe, expect, it } from 'vitest';
import { CREDIT, Ledger } from '../../helpers/ledger.js';
import { replayImage } from '../../helpers/ledger-image.js';

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
