/**
 * The commits of delivery results. Everything the dispatcher settles in one
 * event-loop turn (delivery log rows, moves to the held rows, removals of
 * delivered held rows) goes into one WAL entry, appended at the end of the
 * turn with the cursor past what it settles (the read window says where,
 * `cursorPut`). Commits land in order, so every message settling now is
 * settled by this commit or an earlier one when the cursor is written.
 * What must wait for the commit to be durable (a message leaving the window,
 * a held row's count going down) is queued with `afterDurable`.
 */
import type { TablePut, Wal, WalEntry } from '../wal/index.js';

/** The commit being built in this turn. */
export interface ResultCommit {
  entry: WalEntry & { removes: NonNullable<WalEntry['removes']> };
  /** Run once the commit is durable, in the order queued. */
  afterDurable(then: () => void): void;
}

export class ResultCommits {
  private pending: { commit: ResultCommit; after: (() => void)[] } | null = null;

  constructor(
    private readonly wal: Wal,
    /** The cursor's row when it moved since the last commit (read as the commit is appended). */
    private readonly cursorPut: () => TablePut | null,
    /** Tracks work that `idle` and `stop` wait for. */
    private readonly track: (work: Promise<unknown>) => void,
    /** Called after each commit is durable and its callbacks have run. */
    private readonly committed: () => void,
  ) {}

  /** Whether a commit is being built in this turn. */
  get building(): boolean {
    return this.pending !== null;
  }

  /** The commit of this turn, begun on first use. */
  current(): ResultCommit {
    if (this.pending !== null) return this.pending.commit;
    const after: (() => void)[] = [];
    const commit: ResultCommit = { entry: { events: [], puts: [], removes: [] }, afterDurable: (then) => after.push(then) };
    const pending = { commit, after };
    this.pending = pending;
    // Tracked from now, not from the append, so `idle` and `stop` wait for it.
    this.track(new Promise<void>((resolve) => setImmediate(() => this.append(pending, resolve))));
    return commit;
  }

  private append(pending: { commit: ResultCommit; after: (() => void)[] }, resolve: () => void): void {
    this.pending = null;
    const cursor = this.cursorPut();
    if (cursor !== null) pending.commit.entry.puts.push(cursor);
    this.wal.append(pending.commit.entry).then(
      () => {
        for (const then of pending.after) then();
        resolve();
        this.committed();
      },
      // A failed commit stops the process (fail-stop); nothing more to do here.
      () => resolve(),
    );
  }
}
