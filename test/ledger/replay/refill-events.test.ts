/**
 * Refills as the replay checks them: requested for a finished order within
 * its service's window while none is open, then moved forward from the
 * status they are in until completed or rejected.
 */
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../../src/ledger/index.js';
import { CREDIT, Ledger } from '../../helpers/ledger.js';
import { replayImage } from '../../helpers/ledger-image.js';

/** Service 1 allows refills (30 days); order d1 is completed. */
function base(): Ledger {
  return new Ledger().service({ refill: true }).account(1).credit(1, 10 * CREDIT).place(1, 'd1', 10, 100_000).move('d1', 'completed');
}

function push(ledger: Ledger, ...events: Record<string, unknown>[]): Ledger {
  for (const event of events) ledger.events.push({ atMs: 1_700_000_100_000, account: 1, ...event } as unknown as LogEvent);
  return ledger;
}

const requested = (refill: unknown = 1): Record<string, unknown> => ({ type: 'refill.requested', order: 'd1', refill });
const moved = (from: string, to: string, refill = 1): Record<string, unknown> => ({ type: 'refill.status', order: 'd1', refill, from, to });

describe('refill.requested', () => {
  it('opens a refill; another may open once the first is final', () => {
    expect(replayImage(push(base(), requested(), moved('pending', 'rejected'), requested(2))).firstBroken).toBeNull();
  });

  it('is refused while a refill of the order is open, and with an invalid refill id', () => {
    expect(replayImage(push(base(), requested(), requested(2))).broken).toMatchObject({ invariant: 'lifecycle', seq: 7, order: 'd1' });
    expect(replayImage(push(base(), requested(0))).firstBroken).toMatch(/refill.requested carries an invalid refill id 0/);
  });
});

describe('refill.status', () => {
  it('moves forward from the status the refill is in, to completed', () => {
    expect(replayImage(push(base(), requested(), moved('pending', 'in_progress'), moved('in_progress', 'completed'))).firstBroken).toBeNull();
  });

  it('is refused when the order has no open refill, or another one', () => {
    expect(replayImage(push(base(), moved('pending', 'in_progress'))).firstBroken).toMatch(/refill 1 moves from pending to in_progress but the order has no open refill/);
    expect(replayImage(push(base(), requested(), moved('pending', 'in_progress', 2))).firstBroken).toMatch(/but the order's open refill is 1, pending/);
  });

  it('is refused backwards, and a final refill is closed', () => {
    expect(replayImage(push(base(), requested(), moved('pending', 'in_progress'), moved('in_progress', 'pending'))).firstBroken).toMatch(/refills move forward only and completed or rejected is final/);
    expect(replayImage(push(base(), requested(), moved('pending', 'completed'), moved('completed', 'rejected'))).firstBroken).toMatch(/but the order has no open refill/);
  });
});

describe('the sentences of refused refills', () => {
  it('name the lifecycle check at the request, also for an order of a service the log never saved', () => {
    expect(replayImage(push(base(), requested(0))).firstBroken).toBe('Lifecycle check failed at seq 6 (account 1, order d1): refill.requested carries an invalid refill id 0.');
    const unsaved = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'd1', 10, 100_000).move('d1', 'completed');
    expect(replayImage(push(unsaved, requested())).firstBroken).toBe("Lifecycle check failed at seq 5 (account 1, order d1): the actor refuses refill.requested here: This order's service does not offer refills.");
  });
});
