/**
 * Refill ids: positive growing integers across all accounts, the key of the
 * `refills` table. A restart continues after the highest stored id. An id is
 * taken when a refill command is prepared, so an id given to a refused
 * refill is not given again.
 */
export class RefillIds {
  private nextId: number;

  /** `lastStored` is the highest refill id in the store, 0 when there is none. */
  constructor(lastStored: number) {
    if (!Number.isSafeInteger(lastStored) || lastStored < 0) throw new Error(`invariant: last refill id ${lastStored} is invalid`);
    this.nextId = lastStored + 1;
  }

  /** A fresh refill id. */
  next(): number {
    return this.nextId++;
  }
}
