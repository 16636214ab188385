/**
 * The rules of an order's life after placement (lifecycle.ts) at their
 * boundaries: what `remains` a status read shows, when progress may be
 * recorded, when a refill may be opened and moved. Expected units are
 * worked out here (quantity × runs), never with the rules under test.
 */
import { describe, expect, it } from 'vitest';
import { isRefillStatus, progressRefusal, refillMoveRefusal, refillRefusal, remainsShown, type OrderRecord, type RefillStatus } from '../../src/ledger/index.js';

const DAY_MS = 86_400_000;
const FINISHED_MS = 1_800_000_000_000;

type Shown = Parameters<typeof remainsShown>[0];

describe('remains a status read shows', () => {
  const dripFeed: Shown = { status: 'pending', quantity: 10, remains: null, extras: { runs: 3, interval: 5 } };

  it('shows nothing left once completed, whatever was recorded', () => {
    expect(remainsShown({ ...dripFeed, status: 'completed', remains: 4, progressRemains: 6 })).toBe(0);
  });

  it('shows the remains a partial order was closed with, or none when it names none', () => {
    expect(remainsShown({ ...dripFeed, status: 'partial', remains: 7 })).toBe(7);
    expect(remainsShown({ ...dripFeed, status: 'partial', remains: null })).toBe(0);
  });

  it("shows the operator's recorded progress while in progress, else every unit ordered", () => {
    expect(remainsShown({ ...dripFeed, status: 'in_progress', progressRemains: 12 })).toBe(12);
    expect(remainsShown({ ...dripFeed, status: 'in_progress', progressRemains: null })).toBe(30);
    expect(remainsShown({ ...dripFeed, status: 'in_progress' })).toBe(30);
  });

  it('shows every unit ordered (quantity × runs) before any is delivered, and after a cancel', () => {
    expect(remainsShown(dripFeed)).toBe(30);
    expect(remainsShown({ ...dripFeed, status: 'processing', progressRemains: 12 })).toBe(30);
    expect(remainsShown({ ...dripFeed, status: 'canceled' })).toBe(30);
    expect(remainsShown({ status: 'pending', quantity: 10, remains: null })).toBe(10);
  });
});

describe('recording progress', () => {
  const order: Pick<OrderRecord, 'status' | 'quantity' | 'extras'> = { status: 'in_progress', quantity: 10, extras: { runs: 3, interval: 5 } };

  it('refuses a request that names neither field, and takes either one alone', () => {
    expect(progressRefusal(order, undefined, undefined)).toBe('nothing');
    expect(progressRefusal(order, 5, undefined)).toBeNull();
    expect(progressRefusal(order, undefined, 5)).toBeNull();
    expect(progressRefusal({ ...order, status: 'processing' }, undefined, 5)).toBe('not-in-progress');
  });

  it('takes a start count of 0 or more, or null to clear it, and refuses a negative or fractional one', () => {
    expect(progressRefusal(order, 0, undefined)).toBeNull();
    expect(progressRefusal(order, null, undefined)).toBeNull();
    expect(progressRefusal(order, -1, undefined)).toBe('start-count-range');
    expect(progressRefusal(order, 1.5, undefined)).toBe('start-count-range');
  });

  it('takes remains from 0 to every unit ordered (quantity × runs), or null, and refuses one past either end or fractional', () => {
    expect(progressRefusal(order, undefined, 0)).toBeNull();
    expect(progressRefusal(order, undefined, 30)).toBeNull();
    expect(progressRefusal(order, undefined, null)).toBeNull();
    expect(progressRefusal(order, undefined, -1)).toBe('remains-range');
    expect(progressRefusal(order, undefined, 31)).toBe('remains-range');
    expect(progressRefusal(order, undefined, 2.5)).toBe('remains-range');
    expect(progressRefusal(order, 0, 31)).toBe('remains-range');
  });
});

describe('opening a refill', () => {
  const service = { refill: true, refillDays: 30 };

  it('opens one for a completed or a partial order of a refill service', () => {
    for (const status of ['completed', 'partial'] as const) {
      expect(refillRefusal({ status, finishedAtMs: FINISHED_MS }, service, FINISHED_MS + DAY_MS), status).toBeNull();
    }
    expect(refillRefusal({ status: 'in_progress' }, service, FINISHED_MS)).toBe('not-finished');
  });

  it('keeps the window open for exactly refill_days after the order finished', () => {
    const order = { status: 'completed' as const, finishedAtMs: FINISHED_MS };
    expect(refillRefusal(order, service, FINISHED_MS + 30 * DAY_MS)).toBeNull();
    expect(refillRefusal(order, service, FINISHED_MS + 30 * DAY_MS + 1)).toBe('window-closed');
    expect(refillRefusal({ status: 'completed' }, service, FINISHED_MS)).toBe('window-closed');
  });

  it('refuses a second refill while one is open, and opens one after the last was settled', () => {
    const order = (status: RefillStatus) => ({ status: 'completed' as const, finishedAtMs: FINISHED_MS, refill: { id: 1, status, createdAtMs: FINISHED_MS } });
    expect(refillRefusal(order('pending'), service, FINISHED_MS)).toBe('open-refill');
    expect(refillRefusal(order('in_progress'), service, FINISHED_MS)).toBe('open-refill');
    expect(refillRefusal(order('completed'), service, FINISHED_MS)).toBeNull();
    expect(refillRefusal(order('rejected'), service, FINISHED_MS)).toBeNull();
  });
});

describe('refill statuses', () => {
  it('knows the four statuses and nothing else', () => {
    for (const status of ['pending', 'in_progress', 'completed', 'rejected']) expect(isRefillStatus(status), status).toBe(true);
    for (const value of ['open', 'Pending', '', 0, null, undefined]) expect(isRefillStatus(value), String(value)).toBe(false);
  });

  it('moves a refill forward only, and never out of completed or rejected', () => {
    expect(refillMoveRefusal('pending', 'in_progress')).toBeNull();
    expect(refillMoveRefusal('pending', 'rejected')).toBeNull();
    expect(refillMoveRefusal('in_progress', 'completed')).toBeNull();
    expect(refillMoveRefusal('pending', 'pending')).toBe('backwards');
    expect(refillMoveRefusal('in_progress', 'in_progress')).toBe('backwards');
    expect(refillMoveRefusal('in_progress', 'pending')).toBe('backwards');
    expect(refillMoveRefusal('completed', 'rejected')).toBe('final');
    expect(refillMoveRefusal('rejected', 'completed')).toBe('final');
  });
});
