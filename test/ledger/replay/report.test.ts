/**
 * What a replay reports: the verdict, the first finding as a sentence and
 * as a record, what was examined up to it, and the money moved.
 */
import { describe, expect, it } from 'vitest';
import { CREDIT, Ledger } from '../../helpers/ledger.js';
import { replayImage } from '../../helpers/ledger-image.js';

describe('the report', () => {
  it('of a consistent ledger: ok, no finding, everything examined, the totals exact', () => {
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000, { idempotencyKey: 'k' }).move('o1', 'canceled');
    expect(replayImage(ledger)).toEqual({
      ok: true,
      firstBroken: null,
      broken: null,
      counts: { events: 4, accounts: 1, orders: 1, idempotencyKeys: 1 },
      totals: { credited: 10_000_000n, debited: 1_000_000n, refunded: 1_000_000n },
      retained: { openOrdersPeak: 1, passedRowsPeak: 0 },
    });
  });

  it('of a broken ledger: the finding twice (sentence and record), and what was examined up to it', () => {
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000).place(1, 'o2', 10, 100_000);
    ledger.last('order.placed').balance -= 1;
    const report = replayImage(ledger);
    expect(report.ok).toBe(false);
    expect(report.broken).toMatchObject({ invariant: 'balance', seq: 4, account: 1, order: 'o2' });
    expect(report.firstBroken).toBe(report.broken!.sentence);
    expect(report.counts).toEqual({ events: 4, accounts: 1, orders: 1, idempotencyKeys: 0 });
    expect(report.totals).toEqual({ credited: 10_000_000n, debited: 1_000_000n, refunded: 0n });
  });
});
