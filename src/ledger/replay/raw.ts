/**
 * A stored value read loosely. The store may hold anything (a tampered or
 * damaged log is what the replay exists to find), so the replay reads
 * records as plain bags of unknown fields and checks each field it uses.
 */

/** A loosely typed view of a stored record. */
export type Raw = Record<string, unknown>;

/** The value as a record, or an empty one when it is not an object. */
export function asRaw(value: unknown): Raw {
  return value !== null && typeof value === 'object' ? (value as Raw) : {};
}

/** A safe integer: every id, amount, seq and instant the log holds is one. */
export const isInt = (n: unknown): n is number => Number.isSafeInteger(n);
