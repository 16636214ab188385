/**
 * order.placed as the replay checks it: the charge is quantity × rate ×
 * runs, the debit is the charge outside an unlimited-plan window and 0
 * inside one, order numbers grow, and the order's row agrees with the event.
 */
import { describe, expect, it } from 'vitest';
import { CREDIT, Ledger } from '../../helpers/ledger.js';
import { replayImage } from '../../helpers/ledger-image.js';

const oneOrder = (): Ledger => new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000);

describe('the charge and the debit', () => {
  it('an order as the actor places it, drip-feed runs included, verifies and is counted as pending', () => {
    const report = replayImage(oneOrder().place(1, 'd1', 10, 100_000, { extras: { runs: 3, interval: 30 } }));
    expect(report.firstBroken).toBeNull();
    expect(report.counts.orders).toBe(2);
    expect(report.totals.debited).toBe(4_000_000n);
  });

  it('an order whose inputs break its type is named at its placement: a drip-feed order keeps its interval', () => {
    const ledger = oneOrder().place(1, 'd1', 10, 100_000, { extras: { runs: 3 } });
    expect(replayImage(ledger).firstBroken).toMatch(/order d1\): order.placed: its inputs break the Default type's rules: Field 'interval' must be an integer/);
  });

  it('a charge that is not quantity × rate × runs is named with the product', () => {
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'd1', 10, 100_000, { extras: { runs: 3, interval: 30 } });
    ledger.last('order.placed').charge = 1_000_000;
    expect(replayImage(ledger).firstBroken).toBe(
      'Order charge check failed at seq 3 (account 1, order d1): the charge is 1 credits but quantity 10 × rate 0.1 credits × runs 3 is 3 credits.',
    );
  });

  it('inside an unlimited-plan window the debit must be 0, outside it the whole charge', () => {
    const covered = new Ledger().account(1).plan(1).place(1, 'u1', 10, 100_000);
    expect(replayImage(covered).firstBroken).toBeNull();
    const debited = new Ledger().account(1).credit(1, 10 * CREDIT).plan(1).place(1, 'u1', 10, 100_000);
    Object.assign(debited.last('order.placed'), { debit: 1_000_000, balance: 9 * CREDIT });
    Object.assign(debited.order('u1'), { debit: 1_000_000 });
    debited.wallet(1).credits = 9 * CREDIT;
    expect(replayImage(debited).firstBroken).toMatch(/the order was debited 1 credits but an unlimited-plan window to .* covered its time; it must be debited 0/);
    const free = oneOrder();
    Object.assign(free.last('order.placed'), { debit: 0, balance: 10 * CREDIT });
    Object.assign(free.order('o1'), { debit: 0 });
    free.wallet(1).credits = 10 * CREDIT;
    expect(replayImage(free).firstBroken).toMatch(/the order was not debited \(charge 1 credits\) but no unlimited-plan window covered its time/);
  });
});

describe('numbers and rows', () => {
  it('an order number not above the previous order\'s is refused', () => {
    const ledger = oneOrder().place(1, 'o2', 10, 100_000);
    (ledger.events[2] as { number?: number }).number = 5;
    (ledger.events[3] as { number?: number }).number = 5;
    ledger.order('o1').number = 5;
    ledger.order('o2').number = 5;
    expect(replayImage(ledger).broken).toMatchObject({ invariant: 'order-charge', seq: 4, order: 'o2' });
    expect(replayImage(ledger).firstBroken).toMatch(/carries number 5, not above the previous order's 5/);
  });

  it('a row that disagrees with its placement is named by the first field that differs', () => {
    const ledger = oneOrder();
    ledger.order('o1').extras = { runs: 2 };
    expect(replayImage(ledger).firstBroken).toMatch(/the orders row has extras \{runs: 2\} but order.placed says none/);
    const flagged = oneOrder();
    flagged.order('o1').unlimited = true;
    expect(replayImage(flagged).firstBroken).toMatch(/the orders row has unlimited true but the order was placed outside an unlimited-plan window/);
  });

  it('a placement without a row is reported at its seq', () => {
    const ledger = oneOrder();
    ledger.rows.orders.delete('o1');
    ledger.unindexed.add('o1');
    expect(replayImage(ledger).broken).toMatchObject({ invariant: 'order-charge', seq: 3, order: 'o1' });
    expect(replayImage(ledger).firstBroken).toMatch(/order.placed has no row in the orders table/);
  });
});
