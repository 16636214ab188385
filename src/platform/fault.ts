/**
 * Where an unexpected error goes. A broken invariant (`InvariantError`)
 * goes to the fail-stop handler, the one a failed commit calls, and the
 * process stops. Anything else is logged, and the caller carries on: a
 * request handler answers 500, background work tries again later.
 */
import { InvariantError } from './assert.js';

/** A log, and the fail-stop handler. */
export interface FaultSink {
  log: { error: (obj: object, msg: string) => void };
  onFatal(error: unknown): void;
}

/** Reports `error`; true when it was a broken invariant, so the caller sends nothing more. */
export function reportFault(sink: FaultSink, error: unknown, what: string, fields: object = {}): boolean {
  if (error instanceof InvariantError) {
    sink.onFatal(error);
    return true;
  }
  sink.log.error({ err: error, ...fields }, what);
  return false;
}
