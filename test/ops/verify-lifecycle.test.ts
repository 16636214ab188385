/**
 * verify's lifecycle checks (f) and the drip-feed charge (c), on hand-made
 * logs: a consistent lifecycle passes; each broken rule alone is named.
 */
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/ledger/index.js';
import { CREDIT, Ledger, useLedgerStores } from '../helpers/ledger.js';

const { verify } = useLedgerStores();

/** Account 1 with 100 credits; order d1 completed, order p1 in progress. */
function base(): Ledger {
  return new Ledger().account(1).credit(1, 100 * CREDIT).place(1, 'd1', 10, 100_000).move('d1', 'completed').place(1, 'p1', 10, 100_000).move('p1', 'in_progress');
}

function push(ledger: Ledger, event: Record<string, unknown>): Ledger {
  ledger.events.push({ atMs: 1_700_000_100_000, account: 1, ...event } as unknown as LogEvent);
  return ledger;
}

describe('verify: lifecycle events move no money and happen only where allowed', () => {
  it('a consistent lifecycle passes: progress, a cancel request, a refill and its moves', () => {
    const ledger = base();
    push(ledger, { type: 'order.progress', order: 'p1', startCount: 100, remains: 4 });
    push(ledger, { type: 'order.cancel_requested', order: 'p1' });
    push(ledger, { type: 'refill.requested', order: 'd1', refill: 1 });
    push(ledger, { type: 'refill.status', order: 'd1', refill: 1, from: 'pending', to: 'in_progress' });
    push(ledger, { type: 'refill.status', order: 'd1', refill: 1, from: 'in_progress', to: 'completed' });
    expect(verify(ledger).firstBroken).toBeNull();
  });

  it('a refill that carries money is reported', () => {
    const report = verify(push(base(), { type: 'refill.requested', order: 'd1', refill: 1, refund: 1_000_000 }));
    expect(report.broken).toMatchObject({ invariant: 'lifecycle', order: 'd1' });
    expect(report.firstBroken).toMatch(/refill.requested carries refund 1 credits; it must move no money/);
  });

  it('a refill of an order that is not completed or partial is reported', () => {
    const report = verify(push(base(), { type: 'refill.requested', order: 'p1', refill: 1 }));
    expect(report.firstBroken).toMatch(/refill.requested happens while the order is in_progress; it is allowed only while completed or partial/);
  });

  it('a refill moving backwards or out of a final state is reported', () => {
    const ledger = base();
    push(ledger, { type: 'refill.requested', order: 'd1', refill: 1 });
    push(ledger, { type: 'refill.status', order: 'd1', refill: 1, from: 'rejected', to: 'completed' });
    expect(verify(ledger).firstBroken).toMatch(/refill 1 moves from rejected to completed/);
  });

  it('progress outside in_progress and remains beyond the quantity are reported', () => {
    expect(verify(push(base(), { type: 'order.progress', order: 'd1', startCount: 1, remains: 0 })).firstBroken).toMatch(/order.progress happens while the order is completed/);
    expect(verify(push(base(), { type: 'order.progress', order: 'p1', startCount: 1, remains: 11 })).firstBroken).toMatch(/remains must lie in 0..10/);
  });

  it('a cancel request on a final order is reported', () => {
    expect(verify(push(base(), { type: 'order.cancel_requested', order: 'd1' })).firstBroken).toMatch(/order.cancel_requested happens while the order is completed/);
  });
});

describe('verify: drip-feed charges', () => {
  it('charge = quantity × rate × runs passes; one run short is reported', () => {
    // Five runs of 10 at 0.1: 5 credits, not 1.
    const good = new Ledger().account(1).credit(1, 100 * CREDIT).place(1, 'r1', 10, 100_000, { extras: { runs: 5, interval: 30 } });
    expect(good.last('order.placed').charge).toBe(5 * CREDIT);
    expect(verify(good).firstBroken).toBeNull();
    good.last('order.placed').extras = { runs: 4, interval: 30 };
    expect(verify(good).firstBroken).toMatch(/quantity 10 × rate 0.1 credits × runs 4 is 4 credits/);
  });
});
