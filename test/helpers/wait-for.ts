/**
 * The one way a test waits for something to happen: `waitFor` polls a
 * condition until it holds or its own deadline passes, and then fails
 * naming what it waited for, so that a wait never runs into the test's
 * timeout silently. Deadlines are wall time (the server's clock is injected
 * and does not move by itself); they bound a hang, they do not measure
 * speed, so they are generous for a loaded machine.
 */

/** The deadline of a wait for something the server does at once (an order reaching its mailbox). */
export const WAIT_DEADLINE_MS = 10_000;

/** How often a wait looks by default: cheap conditions read memory, so a short poll costs nothing. */
const POLL_MS = 5;

/**
 * Resolves once `holds()` is true; rejects with "timed out after N ms
 * waiting for <what>" (plus `state()`, when given, to say where things
 * stood) once `deadlineMs` has passed. A `holds` that throws ends the wait
 * with that error. `pollMs` spaces the looks: a condition that sends a
 * request or an order each time it is asked looks less often.
 */
export async function waitFor(what: string, holds: () => boolean | Promise<boolean>, deadlineMs = WAIT_DEADLINE_MS, state?: () => string, pollMs = POLL_MS): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (!(await holds())) {
    if (Date.now() > until) {
      const where = state === undefined ? '' : `; ${state()}`;
      throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}${where}`);
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
