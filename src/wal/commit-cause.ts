/**
 * The fatal report of a failed commit, naming its cause. lmdb-js rejects
 * each write of a failed LMDB transaction with a generic "Commit failed"
 * error whose `commitError` is a promise that rejects, a moment later,
 * with the system error behind it (EIO from a failed fdatasync, ENOSPC from
 * a full disk). Writes of the transactions queued behind it are rejected
 * with errors of their own, and only one of those promises carries the
 * cause. The fatal line must name it, so the report waits, briefly, for the
 * first cause any rejection of the same failure brings, and records it as
 * the first error's `cause`, which the log prints.
 */
import { COMMIT_CAUSE_WAIT_MS } from './limits.js';

/** lmdb-js's promise of the system error behind a failed commit, or null. */
function commitErrorOf(error: unknown): Promise<unknown> | null {
  const pending = error instanceof Error ? (error as Error & { commitError?: unknown }).commitError : undefined;
  return pending instanceof Promise ? pending : null;
}

export class FatalReport {
  private reported = false;
  private timer: NodeJS.Timeout | undefined;
  /**
   * lmdb-js rejects every write of the failed transaction, some of them its
   * own (saving msgpack structures) that no caller holds. During the wait
   * those are this same failure, which the report names; they must not end
   * the process first, without it.
   */
  private readonly sameFailure = (): void => {};

  /**
   * Calls `onFatal` with `error`: at once, or, for a failed LMDB commit,
   * once a cause is known or COMMIT_CAUSE_WAIT_MS has passed. The caller
   * has already rejected everything unacknowledged, so nothing is
   * acknowledged during the wait.
   */
  constructor(
    private readonly error: unknown,
    private readonly onFatal: (error: unknown) => void,
  ) {
    if (commitErrorOf(error) === null) {
      this.report();
      return;
    }
    process.on('unhandledRejection', this.sameFailure);
    this.timer = setTimeout(() => this.report(), COMMIT_CAUSE_WAIT_MS);
    this.also(error);
  }

  /** Another rejection of the same failure: its cause, if it brings one, names the failure as well. */
  also(other: unknown): void {
    const pending = commitErrorOf(other);
    if (pending === null || this.reported) return;
    pending.then(
      () => undefined,
      (cause: unknown) => {
        if (this.error instanceof Error && this.error.cause === undefined) this.error.cause = cause;
        this.report();
      },
    );
  }

  private report(): void {
    if (this.reported) return;
    this.reported = true;
    clearTimeout(this.timer);
    process.off('unhandledRejection', this.sameFailure);
    this.onFatal(this.error);
  }
}
