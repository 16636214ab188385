/**
 * Refill ids: positive growing integers across all accounts, the key of the
 * `refills` table. A restart continues after the highest stored id. An id is
 * taken when a refill command is prepared, so an id given to a refused
 * refill is not given again.
 */
import { assert } from '../platform/index.js';

export class RefillIds {
  private nextId: number;

  /** `lastStored` is the highest refill id in the store, 0 when there is none. */
  constructor(lastStored: number) {
    assert(Number.isSafeInteger(lastStored) && lastStored >= 0, 'the last refill id is a non-negative safe integer', lastStored);
    this.nextId = lastStored + 1;
  }

  /** A fresh refill id. */
  next(): number {
    return this.nextId++;
  }
}
