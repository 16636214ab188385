/**
 * When to try an endpoint again after `failures` rounds of failed attempts
 * in a row (attempts in flight together that fail together are one round):
 * exponential from 1 s, capped at one hour, with jitter (a random point in
 * the upper half of the step) so that many endpoints failing together do not
 * retry together. The first retry comes within 0.5–1 s, so within the 5 s
 * promised; at the cap an endpoint is tried about once an hour until its
 * a message has failed for WEBHOOKS_RETRY_HOURS (24) from its first failed
 * attempt, when it is marked failing.
 */
import { assert } from '../platform/index.js';
import { RETRY_BASE_MS, RETRY_CAP_MS } from './limits.js';

/** Milliseconds to wait; `random` is in [0, 1) (injected, so tests are exact). */
export function retryDelayMs(failures: number, random: number): number {
  assert(Number.isSafeInteger(failures) && failures >= 1, 'a retry follows at least one failure', failures);
  const step = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.min(failures - 1, 30));
  return Math.floor(step / 2 + (step / 2) * random);
}
