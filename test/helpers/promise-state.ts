/**
 * A promise's outcome, to read later without awaiting it: a test checks
 * that a reply has not been released yet, or that it was, and with what.
 */
export interface PromiseState {
  state: 'pending' | 'resolved' | 'rejected';
  error: unknown;
}

/** Follows `promise`; the returned state changes once it settles (after the reactions of earlier ones run). */
export function watch(promise: Promise<unknown>): PromiseState {
  const w: PromiseState = { state: 'pending', error: undefined };
  promise.then(
    () => {
      w.state = 'resolved';
    },
    (error: unknown) => {
      w.state = 'rejected';
      w.error = error;
    },
  );
  return w;
}
