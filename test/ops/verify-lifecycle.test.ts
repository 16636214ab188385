/**
 * verify's lifecycle checks (f) and the drip-feed charge (c), on hand-made
 * logs: a consistent lifecycle passes; each broken rule alone is named.
 */
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/ledger/index.js';
import { MS_PER_DAY } from '../../src/platform/index.js';
import { CREDIT, Ledger, useLedgerStores } from '../helpers/ledger.js';

const { verify } = useLedgerStores();

/** Service 1 allows cancel and refills (30 days); account 1 with 100 credits; order d1 completed, order p1 in progress. */
function base(): Ledger {
  return new Ledger()
    .service({ cancel: true, refill: true })
    .account(1)
    .credit(1, 100 * CREDIT)
    .place(1, 'd1', 10, 100_000)
    .move('d1', 'completed')
    .place(1, 'p1', 10, 100_000)
    .move('p1', 'in_progress');
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
    expect(report.firstBroken).toMatch(/the actor refuses refill.requested here: The order is in_progress; only completed or partial orders can be refilled/);
  });

  it('a refill moving backwards or out of a final state is reported', () => {
    const ledger = base();
    push(ledger, { type: 'refill.requested', order: 'd1', refill: 1 });
    push(ledger, { type: 'refill.status', order: 'd1', refill: 1, from: 'rejected', to: 'completed' });
    expect(verify(ledger).firstBroken).toMatch(/refill 1 moves from rejected to completed/);
  });

  it('progress outside in_progress and remains beyond the quantity are reported', () => {
    expect(verify(push(base(), { type: 'order.progress', order: 'd1', startCount: 1, remains: 0 })).firstBroken).toMatch(/progress is recorded only while the order is in_progress, and it is completed/);
    expect(verify(push(base(), { type: 'order.progress', order: 'p1', startCount: 1, remains: 11 })).firstBroken).toMatch(/remains must lie in 0..10/);
  });

  it('a cancel request on a final order is reported', () => {
    expect(verify(push(base(), { type: 'order.cancel_requested', order: 'd1' })).firstBroken).toMatch(/order.cancel_requested here: The order is already completed/);
  });
});

describe('verify: lifecycle events follow the order and refill state the actor tracks', () => {
  /** `events` pushed after base(); the report names the last one. */
  function lastBroken(...events: Record<string, unknown>[]): { seq: number | null; sentence: string | undefined } {
    const ledger = base();
    for (const event of events) push(ledger, event);
    const report = verify(ledger);
    expect(report.broken).toMatchObject({ invariant: 'lifecycle', seq: ledger.events.length, account: 1 });
    return { seq: report.broken!.seq, sentence: report.firstBroken ?? undefined };
  }

  it('a second cancel request for the same order is reported', () => {
    const cancel = { type: 'order.cancel_requested', order: 'p1' };
    expect(lastBroken(cancel, cancel).sentence).toMatch(/order p1\): the actor refuses order.cancel_requested here: A cancel request for this order is already open/);
  });

  it("a cancel request on a service that does not allow cancel is reported, judged by the service as saved before the request", () => {
    const ledger = new Ledger().service({ cancel: false }).account(1).credit(1, CREDIT).place(1, 'p1', 1, 100_000).move('p1', 'processing');
    push(ledger, { type: 'order.cancel_requested', order: 'p1' });
    expect(verify(ledger).firstBroken).toMatch(/seq 6 .*refuses order.cancel_requested here: This order's service does not allow cancellation/);
    // Allowed once a save turns cancel on (the flag as of the request, not as the order was placed).
    const allowed = new Ledger().service({ cancel: false }).account(1).credit(1, CREDIT).place(1, 'p1', 1, 100_000).move('p1', 'processing').service({ cancel: true });
    push(allowed, { type: 'order.cancel_requested', order: 'p1' });
    expect(verify(allowed).firstBroken).toBeNull();
  });

  it('a request logged just after a save may have been decided on the version that save replaced, never on an older one', () => {
    // The catalogue applies a save only once durable: a cancel logged right after the save that turned cancel off was decided on the old version.
    const ledger = base().service({ cancel: false });
    push(ledger, { type: 'order.cancel_requested', order: 'p1' });
    expect(verify(ledger).firstBroken).toBeNull();
    // Once another save is logged, the one before it was applied: the request was refused.
    const later = base().service({ cancel: false }).service({}, 2);
    push(later, { type: 'order.cancel_requested', order: 'p1' });
    expect(verify(later).firstBroken).toMatch(/does not allow cancellation/);
  });

  it('a refill requested while one is open is reported', () => {
    const refill = { type: 'refill.requested', order: 'd1', refill: 1 };
    expect(lastBroken(refill, { ...refill, refill: 2 }).sentence).toMatch(/order d1\): the actor refuses refill.requested here: This order already has an open refill/);
  });

  it('a refill of a service without refills, or after its window, is reported', () => {
    const none = new Ledger().service({ refill: false }).account(1).credit(1, CREDIT).place(1, 'd1', 1, 100_000).move('d1', 'completed');
    push(none, { type: 'refill.requested', order: 'd1', refill: 1 });
    expect(verify(none).firstBroken).toMatch(/seq 6 .*refuses refill.requested here: This order's service does not offer refills/);
    const late = base();
    const finished = late.order('d1').finishedAtMs!;
    late.events.push({ type: 'refill.requested', atMs: finished + 30 * MS_PER_DAY, account: 1, order: 'd1', refill: 1 });
    expect(verify(late).firstBroken).toBeNull();
    late.last('refill.requested').atMs += 1;
    expect(verify(late).firstBroken).toMatch(/refill window of 30 days after completion has closed/);
  });

  it('a refill moves from the status it is in: completed then rejected, or from a status it never had, is reported', () => {
    const requested = { type: 'refill.requested', order: 'd1', refill: 1 };
    const twice = lastBroken(requested, { type: 'refill.status', order: 'd1', refill: 1, from: 'pending', to: 'completed' }, { type: 'refill.status', order: 'd1', refill: 1, from: 'pending', to: 'rejected' });
    expect(twice.sentence).toMatch(/refill 1 moves from pending to rejected but the order has no open refill/);
    const skipped = lastBroken(requested, { type: 'refill.status', order: 'd1', refill: 1, from: 'in_progress', to: 'completed' });
    expect(skipped.sentence).toMatch(/refill 1 moves from in_progress to completed but the order's open refill is 1, pending/);
    const backwards = lastBroken(requested, { type: 'refill.status', order: 'd1', refill: 1, from: 'pending', to: 'in_progress' }, { type: 'refill.status', order: 'd1', refill: 1, from: 'in_progress', to: 'pending' });
    expect(backwards.sentence).toMatch(/refill 1 moves from in_progress to pending; refills move forward only/);
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
