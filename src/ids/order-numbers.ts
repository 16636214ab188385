/**
 * Order numbers: the small growing integers API v2 clients and panels use as
 * order ids (1, 2, 3, … across all accounts). The opaque order id stays the
 * storage identity; a number is an alias, stored in the `numbers` table
 * (number → order id) in the same commit as the order.
 *
 * A number goes only to an accepted order: the actor's prepare step peeks at
 * the next one, and the actor takes it only when the decision accepted an
 * order, in the same turn (the process is single-threaded), so refusals use
 * none and the first 2^31 − 1 orders get numbers below 2^31 (what a panel's
 * 32-bit integer column holds). A restart continues after the highest
 * durable number. A number given to an order whose commit then failed is
 * given again after the restart, which is safe: a failed commit stops the
 * process (fail-stop), so that order was never acknowledged and no later
 * commit landed after it.
 */
import { assert } from '../platform/index.js';

export class OrderNumbers {
  private nextNumber: number;

  /** `lastDurable` is the highest number in the store, 0 when there is none. */
  constructor(lastDurable: number) {
    assert(Number.isSafeInteger(lastDurable) && lastDurable >= 0, 'the last order number is a non-negative safe integer', lastDurable);
    this.nextNumber = lastDurable + 1;
  }

  /** The number the next accepted order gets. */
  peek(): number {
    return this.nextNumber;
  }

  /** Marks `number`, the peeked one, as given to an accepted order. */
  take(number: number): void {
    assert(number === this.nextNumber, 'order numbers are taken in turn (the peeked one)', number);
    this.nextNumber++;
  }
}

/** Text that is an order number (or a refill id): a positive decimal integer without sign or leading zeros, below 2^53. */
export function parsePositiveId(text: string): number | null {
  if (!/^[1-9][0-9]{0,15}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}
