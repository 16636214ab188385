/**
 * order.placed as the replay checks it: the charge is quantity × rate ×
 * runs, the debit is the charge outside an unlimited-plan window and 0
 * inside one, order numbers grow, and the order's row agrees with the event.
 */
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../../src/ledger/index.js';
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

const AT = 'Order charge check failed at seq 3 (account 1, order o1): ';
/** The one order with its placement's fields changed. */
function placedWith(fields: Record<string, unknown>): Ledger {
  const ledger = oneOrder();
  Object.assign(ledger.last('order.placed'), fields);
  return ledger;
}

describe('the amounts an order.placed carries', () => {
  it('refuses a placement without an order id', () => {
    for (const order of [undefined, '']) {
      expect(replayImage(placedWith({ order })).firstBroken).toBe('Order charge check failed at seq 3 (account 1): order.placed does not carry an order id.');
    }
  });

  it('refuses a quantity, rate, charge, debit or runs that is not a whole number of its range', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ quantity: 0 }, 'order.placed carries an invalid quantity (0).'],
      [{ quantity: '10' }, 'order.placed carries an invalid quantity (10).'],
      [{ rate: -1 }, 'order.placed carries an invalid rate -0.000001 credits.'],
      [{ rate: '1' }, 'order.placed carries an invalid rate 1 (not a whole number of micro-credits).'],
      [{ charge: -1 }, 'order.placed carries an invalid charge -0.000001 credits.'],
      [{ charge: 0.5 }, 'order.placed carries an invalid charge 0.5 (not a whole number of micro-credits).'],
      [{ debit: 'all' }, 'order.placed carries an invalid debit all (not a whole number of micro-credits).'],
      [{ extras: { runs: 0, interval: 30 } }, 'order.placed carries invalid drip-feed runs (0).'],
      [{ extras: { runs: '2', interval: 30 } }, 'order.placed carries invalid drip-feed runs (2).'],
      [{ quantity: 2 ** 52, charge: 0 }, 'quantity 4503599627370496 × rate 0.1 credits is beyond the largest supported charge.'],
    ];
    for (const [fields, sentence] of cases) expect(replayImage(placedWith(fields)).firstBroken).toBe(`${AT}${sentence}`);
  });

  it('accepts one unit, and a free order: rate 0, charge 0', () => {
    const ledger = new Ledger().account(1).credit(1, CREDIT).place(1, 'o1', 1, 100_000).place(1, 'f1', 10, 0);
    const report = replayImage(ledger);
    expect(report.firstBroken).toBeNull();
    // 1 unit at 0.1 credits, and 10 units at 0.
    expect(report.totals.debited).toBe(100_000n);
  });
});

describe('the orders row against its placement', () => {
  it('names each of account, charge, debit, quantity and number when only it differs', () => {
    const cases: [string, unknown, string][] = [
      ['account', 2, 'account 2 but order.placed says 1'],
      ['charge', 2, 'charge 2 but order.placed says 1000000'],
      ['debit', 2, 'debit 2 but order.placed says 1000000'],
      ['quantity', 11, 'quantity 11 but order.placed says 10'],
      ['number', 4, 'number 4 but order.placed says none'],
    ];
    for (const [field, value, says] of cases) {
      const ledger = oneOrder();
      (ledger.order('o1') as unknown as Record<string, unknown>)[field] = value;
      expect(replayImage(ledger).firstBroken).toBe(`${AT}the orders row has ${says}.`);
    }
  });

  it('compares extras field by field: none, a value that is not a record, and records of other fields differ', () => {
    const cases: [unknown, unknown, string][] = [
      [null, { runs: 3, interval: 30 }, 'extras null but order.placed says {runs: 3, interval: 30}'],
      [{}, null, 'extras {} but order.placed says null'],
      [5, {}, 'extras 5 but order.placed says {}'],
      [{}, { runs: 3, interval: 30 }, 'extras {} but order.placed says {runs: 3, interval: 30}'],
      [{ runs: 3, interval: 60 }, { runs: 3, interval: 30 }, 'extras {runs: 3, interval: 60} but order.placed says {runs: 3, interval: 30}'],
    ];
    for (const [rowExtras, placedExtras, says] of cases) {
      const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000, { extras: { runs: 3, interval: 30 } });
      const placement = ledger.last('order.placed') as unknown as Record<string, unknown>;
      placement.extras = placedExtras;
      placement.charge = placement.debit = (placedExtras as { runs?: number } | null)?.runs === 3 ? 3_000_000 : 1_000_000;
      placement.balance = 10 * CREDIT - (placement.charge as number);
      Object.assign(ledger.order('o1'), { extras: rowExtras, charge: placement.charge, debit: placement.debit });
      ledger.wallet(1).credits = placement.balance as number;
      expect(replayImage(ledger).firstBroken).toBe(`${AT}the orders row has ${says}.`);
    }
  });

  it('names a second placement of an order id with the seq of the first', () => {
    const ledger = oneOrder().place(1, 'o2', 10, 100_000).place(1, 'o1', 10, 100_000);
    expect(replayImage(ledger).firstBroken).toBe('Order charge check failed at seq 5 (account 1, order o1): the order id was already placed at seq 3; order ids must be unique.');
  });

  it('names the seq of the first order.placed, not of an earlier event that carries the same order field', () => {
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT);
    ledger.events.push({ type: 'order.rejected', atMs: 1_700_000_100_000, account: 1, idempotencyKey: 'k1', code: 'QTY', order: 'o1' } as LogEvent);
    ledger.place(1, 'o1', 10, 100_000).place(1, 'o1', 10, 100_000);
    expect(replayImage(ledger).firstBroken).toBe('Order charge check failed at seq 5 (account 1, order o1): the order id was already placed at seq 4; order ids must be unique.');
  });

  it('holds an order whose row ends elsewhere than pending, and names it when the log never takes it there', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ remains: 5 }, 'pending with remains 5'],
      [{ worker: 'w1' }, 'pending with remains null, worker w1'],
      [{ leaseExpiresMs: 0 }, 'pending with remains null, a lease ending 1970-01-01T00:00:00.000Z'],
    ];
    for (const [fields, says] of cases) {
      const ledger = oneOrder();
      Object.assign(ledger.order('o1'), fields);
      expect(replayImage(ledger).firstBroken).toBe(`Order status check failed at account 1, order o1: the orders row says ${says} but the log leaves it pending with remains null.`);
    }
  });
});
