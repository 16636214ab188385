/**
 * The rules of a claim's lease (lease.ts) at their boundaries: the bounds
 * of a lease's length (10 s to 24 h, the contract's numbers written here),
 * when a lease has ended, who holds an order, and the sentences that refuse
 * a worker.
 */
import { describe, expect, it } from 'vitest';
import { holdRefusal, holdRefusalMessage, leaseEnded, leaseRefusal, leaseSecondsRefusal, leaseWithinBounds, onlyLeaseExtended, type LogEvent, type OrderRecord } from '../../src/ledger/index.js';

const MIN_S = 10;
const MAX_S = 86_400;
const AT_MS = 1_800_000_000_000;
const SENTENCE = 'lease_seconds must be an integer from 10 to 86400.';

type Held = Pick<OrderRecord, 'id' | 'status' | 'worker' | 'leaseExpiresMs'>;

function held(fields: Partial<Held>): Held {
  return { id: 'ord-1', status: 'processing', worker: 'w1', leaseExpiresMs: AT_MS + 60_000, ...fields };
}

describe('lease length', () => {
  it('takes every whole number of seconds from 10 to 86400 and refuses one past either end', () => {
    expect(leaseSecondsRefusal(MIN_S)).toBeNull();
    expect(leaseSecondsRefusal(MAX_S)).toBeNull();
    expect(leaseSecondsRefusal(300)).toBeNull();
    expect(leaseSecondsRefusal(MIN_S - 1)).toBe(SENTENCE);
    expect(leaseSecondsRefusal(MAX_S + 1)).toBe(SENTENCE);
  });

  it('refuses a length that is not a whole number, with the same sentence', () => {
    for (const value of [10.5, '60', null, undefined, Number.NaN, 2 ** 53]) {
      expect(leaseSecondsRefusal(value), String(value)).toBe(SENTENCE);
    }
  });

  it("accepts a logged lease's end only from 10 s to 24 h after the event, in whole milliseconds", () => {
    expect(leaseWithinBounds(AT_MS, AT_MS + MIN_S * 1000)).toBe(true);
    expect(leaseWithinBounds(AT_MS, AT_MS + MAX_S * 1000)).toBe(true);
    expect(leaseWithinBounds(AT_MS, AT_MS + MIN_S * 1000 - 1)).toBe(false);
    expect(leaseWithinBounds(AT_MS, AT_MS + MAX_S * 1000 + 1)).toBe(false);
    expect(leaseWithinBounds(AT_MS, AT_MS + 60_000.5)).toBe(false);
    expect(leaseWithinBounds(AT_MS, String(AT_MS + 60_000))).toBe(false);
  });
});

describe('when a lease ends', () => {
  it('ends at its end time exactly, not a millisecond before', () => {
    const order = held({});
    expect(leaseEnded(order, AT_MS + 60_000 - 1)).toBe(false);
    expect(leaseEnded(order, AT_MS + 60_000)).toBe(true);
  });

  it('holds only while the order is processing: an order moved on keeps its worker and never loses it to the clock', () => {
    for (const status of ['in_progress', 'completed', 'pending'] as const) {
      expect(leaseEnded({ status, leaseExpiresMs: AT_MS }, AT_MS + 1), status).toBe(false);
    }
    expect(holdRefusal(held({ status: 'in_progress' }), 'w1', AT_MS + 120_000)).toBeNull();
  });

  it('never ends for a processing order that carries no lease', () => {
    expect(leaseEnded({ status: 'processing' }, AT_MS)).toBe(false);
  });
});

describe('who holds an order', () => {
  it('lets the claiming worker act until its lease ends', () => {
    expect(holdRefusal(held({}), 'w1', AT_MS)).toBeNull();
    expect(holdRefusal(held({}), 'w1', AT_MS + 60_000)).toBe('lease-ended');
  });

  it('tells an order nobody claimed from one another worker holds', () => {
    expect(holdRefusal(held({ worker: undefined }), 'w1', AT_MS)).toBe('not-claimed');
    expect(holdRefusal(held({ worker: 'w2' }), 'w1', AT_MS)).toBe('other-worker');
    expect(holdRefusal(held({ status: 'pending', worker: undefined }), 'w1', AT_MS)).toBe('in-queue');
  });

  it('lets a worker extend or release only a processing order it holds', () => {
    expect(leaseRefusal(held({}), 'w1', AT_MS)).toBeNull();
    expect(leaseRefusal(held({ status: 'in_progress' }), 'w1', AT_MS)).toBe('not-processing');
    expect(leaseRefusal(held({ worker: 'w2' }), 'w1', AT_MS)).toBe('other-worker');
  });

  it('refuses each with its own sentence', () => {
    const order = held({ worker: 'w2', leaseExpiresMs: Date.UTC(2027, 0, 15, 10, 30) });
    expect(holdRefusalMessage('in-queue', order, 'w1')).toBe('Order ord-1 is pending, back in the claim queue: w1 no longer holds it; claim it again.');
    expect(holdRefusalMessage('not-claimed', order, 'w1')).toBe('Order ord-1 was not claimed by w1; no worker holds it.');
    expect(holdRefusalMessage('other-worker', order, 'w1')).toBe('Order ord-1 is held by w2, not by w1.');
    expect(holdRefusalMessage('lease-ended', order, 'w1')).toBe('The lease of w1 on order ord-1 ended at 2027-01-15T10:30:00.000Z; the order goes back to the claim queue.');
    expect(holdRefusalMessage('not-processing', held({ status: 'in_progress' }), 'w1')).toBe('Order ord-1 is in_progress; only a processing order has a lease to extend or release.');
  });
});

describe('a change that only moves a lease', () => {
  const extended: LogEvent = { type: 'order.lease_extended', atMs: AT_MS, account: 1, order: 'ord-1', worker: 'w1', leaseExpiresMs: AT_MS + 60_000 };
  const released: LogEvent = { type: 'order.released', atMs: AT_MS, account: 1, order: 'ord-1', worker: 'w1', cause: 'released' };

  it('is one lease extension alone', () => {
    expect(onlyLeaseExtended([extended])).toBe(true);
  });

  it('is not a release, an empty change, or an extension beside another event', () => {
    expect(onlyLeaseExtended([released])).toBe(false);
    expect(onlyLeaseExtended([])).toBe(false);
    expect(onlyLeaseExtended([extended, released])).toBe(false);
    expect(onlyLeaseExtended([extended, extended])).toBe(false);
  });
});
