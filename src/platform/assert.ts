/**
 * Invariants. A broken invariant is a programmer error, not an outcome a
 * client or an operator can cause: code that finds one cannot know what
 * else is wrong, so the process stops (fail-stop, like a failed commit) and
 * a restart recovers exactly the durable state. Expected outcomes (BALANCE,
 * QTY, a bad payload) are values, never assertions.
 *
 * `assert` throws an `InvariantError`, a class of its own, so the places
 * that would answer an unexpected error with 500 INTERNAL and carry on can
 * tell a broken invariant apart and hand it to the fatal handler instead.
 */

/** A broken invariant: a bug. Its message starts with `invariant:`. */
export class InvariantError extends Error {
  constructor(message: string, detail?: unknown) {
    super(`invariant: ${message}${detail === undefined ? '' : `; got ${describe(detail)}`}`);
    this.name = 'InvariantError';
  }
}

/**
 * Throws an `InvariantError` unless `condition` holds. `message` names the
 * rule that broke. `detail` is the value that broke it, rendered into the
 * message only on failure: on hot paths pass a constant message and the
 * value, so that a passing check builds no string.
 */
export function assert(condition: unknown, message: string, detail?: unknown): asserts condition {
  if (!condition) throw new InvariantError(message, detail);
}

/** A value as it reads in a log line: strings and objects as JSON (BigInts as digits), anything else as String() does. */
function describe(detail: unknown): string {
  if (typeof detail === 'string') return JSON.stringify(detail);
  if (typeof detail !== 'object' || detail === null) return String(detail);
  try {
    return JSON.stringify(detail, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  } catch {
    return String(detail);
  }
}
