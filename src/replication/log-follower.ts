/**
 * A follower's copy of the log: reads the records after the position its
 * LMDB holds, in pages, and applies each in order through the LMDB group
 * commit, with the position it brings LMDB to in the same transaction (as
 * the commit log's recovery does). A takeover therefore applies only the
 * tail. The position LMDB has flushed is reported to PostgreSQL, so the log
 * is trimmed only behind it.
 *
 * Records must follow each other without a gap: a node whose position is
 * behind where the log was trimmed cannot follow it and stops, saying to
 * start it from a snapshot.
 */
import { appliedEntry, decodeEntries, decodeRecordAt, type LmdbGroupCommit } from '../wal/index.js';
import { connectionTrouble, type GroupDb, type LogRow } from './group-db.js';
import { APPLY_PAGE_RECORDS, FOLLOW_IDLE_MS, RETRY_EVERY_MS } from './limits.js';

export interface LogFollowerOptions {
  onFatal: (error: unknown) => void;
  onTrouble?: (error: unknown) => void;
  /** Called after each page is applied (a follower's admin reads refresh their view). */
  onApplied?: (position: number) => void;
}

export class LogFollower {
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  private flushed: number;

  constructor(
    private readonly db: GroupDb,
    private readonly lmdb: LmdbGroupCommit,
    private position: number,
    private readonly options: LogFollowerOptions,
  ) {
    this.flushed = position;
  }

  /** The last position applied (committed to LMDB). */
  get applied(): number {
    return this.position;
  }

  /** The last position LMDB has flushed. */
  get flushedTo(): number {
    return this.flushed;
  }

  /** Checks that this node can follow the log from where it is: nothing it needs has been trimmed. */
  async checkJoinable(): Promise<void> {
    const trimmed = await this.db.trimmedTo();
    if (this.position < trimmed) {
      throw new Error(
        `this node's data holds the group's log up to position ${this.position}, but the log in PostgreSQL now starts after position ${trimmed}: ` +
          'start this node from a snapshot of another node (coa snapshot, then copy it into DATA_DIR), taken from a node that is up to date.',
      );
    }
  }

  /** Applies pages until the log has nothing newer; returns the position reached. */
  async catchUp(): Promise<number> {
    while ((await this.applyPage()) > 0);
    return this.position;
  }

  start(): void {
    this.running = true;
    this.loop = this.follow();
  }

  /** Stops following once the page in hand is applied. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async follow(): Promise<void> {
    while (this.running) {
      let applied = 0;
      try {
        applied = await this.applyPage();
      } catch (error) {
        if (!connectionTrouble(error)) {
          this.running = false;
          this.options.onFatal(error);
          return;
        }
        this.options.onTrouble?.(error);
        await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY_MS));
        continue;
      }
      if (applied === 0) await new Promise((resolve) => setTimeout(resolve, FOLLOW_IDLE_MS));
    }
  }

  /** Reads and applies one page; returns how many records it held. */
  private async applyPage(): Promise<number> {
    const rows = await this.db.read(this.position, APPLY_PAGE_RECORDS);
    let last: Promise<void> | null = null;
    for (const row of rows) last = this.apply(row);
    if (last !== null) await last;
    if (rows.length > 0) this.options.onApplied?.(this.position);
    return rows.length;
  }

  private apply(row: LogRow): Promise<void> {
    if (row.position !== this.position + 1) {
      throw new Error(`the group's log skips from position ${this.position} to ${row.position}: this node cannot follow it; start it from a snapshot of an up-to-date node`);
    }
    const record = decodeRecordAt(row.record, 0);
    if (record === null || record.position !== row.position) throw new Error(`the log record at position ${row.position} is damaged`);
    const position = row.position;
    this.position = position;
    return this.lmdb.appendTogether([...decodeEntries(record.payload), appliedEntry(position)], () => {
      if (position > this.flushed) this.flushed = position;
    });
  }
}
