/**
 * Claims and their leases as the replay checks them: a claim's lease within
 * its bounds, extensions and releases by the holder while the lease runs,
 * expiries only once it has ended, rows and the lease index agreeing with
 * the log. None moves money.
 */
import { describe, expect, it } from 'vitest';
import { CREDIT, Ledger } from '../../helpers/ledger.js';
import { replayImage } from '../../helpers/ledger-image.js';

/** Orders o1 and o2 of account 1, pending. */
function base(): Ledger {
  return new Ledger().service().account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000).place(1, 'o2', 10, 100_000);
}

describe('claim leases in the replay', () => {
  it('accepts a claim, an extension, a release, a new claim, an expiry, and the order finished by its last worker', () => {
    const ledger = base().claim('o1', 'w1').extend('o1', 120).release('o1', 'released').claim('o1', 'w2', 30).release('o1', 'expired').claim('o1', 'w3').move('o1', 'completed');
    ledger.claim('o2', 'w1', 600);
    const report = replayImage(ledger);
    expect(report.firstBroken).toBeNull();
    // Two orders of 1 credit each, debited once; claims, releases and expiries move nothing.
    expect(report.totals).toMatchObject({ debited: BigInt(2 * CREDIT), refunded: 0n });
  });

  it('refuses a lease outside the bounds from the claim', () => {
    expect(replayImage(base().claim('o1', 'w1', 9)).firstBroken).toMatch(/the claim's lease ends at .*, not 10 s to 86400 s after the claim at/);
    expect(replayImage(base().claim('o1', 'w1', 86_401)).broken).toMatchObject({ invariant: 'order-status', order: 'o1' });
  });

  it('refuses an extension or a release by a worker that does not hold the order', () => {
    const other = base().claim('o1', 'w1').extend('o1');
    (other.last('order.lease_extended') as { worker: string }).worker = 'w2';
    expect(replayImage(other).firstBroken).toMatch(/the actor refuses order.lease_extended here: Order o1 is held by w1, not by w2/);
    const twice = base().claim('o1', 'w1').release('o1', 'released');
    twice.events.push({ ...twice.last('order.released') });
    expect(replayImage(twice).firstBroken).toMatch(/Order o1 is pending, back in the claim queue: w1 no longer holds it/);
  });

  it('refuses an expiry before the lease has ended, and a release after it has', () => {
    const early = base().claim('o1', 'w1').release('o1', 'expired');
    early.last('order.released').atMs -= 1000;
    expect(replayImage(early).firstBroken).toMatch(/the order holds no lease of w1 that had ended by/);
    const late = base().claim('o1', 'w1').release('o1', 'expired');
    late.last('order.released').cause = 'released';
    expect(replayImage(late).firstBroken).toMatch(/The lease of w1 on order o1 ended at/);
  });

  it('holds the orders rows and the lease index to the lease the log leaves', () => {
    const row = base().claim('o1', 'w1');
    row.order('o1').leaseExpiresMs! += 1000;
    expect(replayImage(row).broken).toMatchObject({ invariant: 'order-status', order: 'o1' });
    const unleased = base().claim('o1', 'w1');
    unleased.unleased.add('o1');
    expect(replayImage(unleased).firstBroken).toMatch(/the lease index holds 0 leases but the log leaves 1 processing orders under a lease/);
    const released = base().claim('o1', 'w1').release('o1', 'released');
    expect(replayImage(released).firstBroken).toBeNull();
  });
});

const iso = (ms: number): string => new Date(ms).toISOString();

describe('what a move, an extension and a release must name', () => {
  const moved = (to: 'processing' | 'in_progress', fields: Record<string, unknown>, from = base()): string | null => {
    const ledger = from.move('o1', to);
    Object.assign(ledger.last('order.status'), fields);
    return replayImage(ledger).firstBroken;
  };

  it('only a claim, pending to processing, names a worker, and the worker is a name', () => {
    const AT = 'Order status check failed at seq 6 (account 1, order o1): ';
    expect(moved('in_progress', { worker: 'w1' })).toBe(`${AT}order.status names worker w1 on a move from pending to in_progress; only a claim (pending to processing) names one.`);
    expect(moved('processing', { worker: 5 })).toBe(`${AT}order.status names worker 5 on a move from pending to processing; only a claim (pending to processing) names one.`);
    const claimed = base().claim('o1', 'w1');
    expect(moved('in_progress', { worker: 'w1' }, claimed)).toBe(
      'Order status check failed at seq 7 (account 1, order o1): order.status names worker w1 on a move from processing to in_progress; only a claim (pending to processing) names one.',
    );
  });

  it('a lease names the worker that holds it', () => {
    const ledger = base().claim('o1', 'w1');
    delete (ledger.last('order.status') as { worker?: string }).worker;
    delete ledger.order('o1').worker;
    expect(replayImage(ledger).firstBroken).toBe('Order status check failed at seq 6 (account 1, order o1): order.status sets a lease without naming the worker that holds it.');
  });

  it('a claim logged without a lease, then released, leaves no lease behind', () => {
    const ledger = base().claim('o1', 'w1');
    delete (ledger.last('order.status') as { leaseExpiresMs?: number }).leaseExpiresMs;
    delete ledger.order('o1').leaseExpiresMs;
    ledger.events.push({ type: 'order.released', atMs: ledger.last('order.status').atMs + 1000, account: 1, order: 'o1', worker: 'w1', cause: 'released' });
    Object.assign(ledger.order('o1'), { status: 'pending' });
    delete ledger.order('o1').worker;
    expect(replayImage(ledger).firstBroken).toBeNull();
  });

  it('an extension sets a lease within the bounds, and names its worker', () => {
    const short = base().claim('o1', 'w1').extend('o1', 9);
    const { atMs, leaseExpiresMs } = short.last('order.lease_extended');
    expect(replayImage(short).firstBroken).toBe(
      `Lifecycle check failed at seq 7 (account 1, order o1): the actor refuses order.lease_extended here: the lease it sets ends at ${iso(leaseExpiresMs)}, not 10 s to 86400 s after ${iso(atMs)}.`,
    );
    const nameless = base().claim('o1', 'w1').extend('o1');
    delete (nameless.last('order.lease_extended') as { worker?: string }).worker;
    expect(replayImage(nameless).firstBroken).toBe('Lifecycle check failed at seq 7 (account 1, order o1): the actor refuses order.lease_extended here: it names no worker.');
  });

  it('a release is released or expired, and an expiry is of the lease of the worker that held it', () => {
    const cause = base().claim('o1', 'w1').release('o1', 'released');
    (cause.last('order.released') as { cause: string }).cause = 'forgot';
    expect(replayImage(cause).firstBroken).toBe('Lifecycle check failed at seq 7 (account 1, order o1): the actor refuses order.released here: its cause "forgot" is neither released nor expired.');
    const other = base().claim('o1', 'w1').release('o1', 'expired');
    const released = other.last('order.released');
    released.worker = 'w2';
    expect(replayImage(other).firstBroken).toBe(
      `Lifecycle check failed at seq 7 (account 1, order o1): the actor refuses order.released here: the order holds no lease of w2 that had ended by ${iso(released.atMs)}.`,
    );
  });
});
