/**
 * The `orders` table, walked in key order beside the log. Placements mostly
 * come in key order, so each one usually meets its row at the cursor; a
 * placement further ahead moves the cursor there, and the rows it passes wait
 * in `passed` for their own placement (or are reported as having none).
 */
import type { LedgerSource, SourceRow } from './ledger-source.js';

export class OrderRowCursor {
  private readonly rows: Iterator<SourceRow<string>>;
  private current: SourceRow<string> | null = null;
  /** Rows the cursor passed that no placement has claimed yet, by storage key. */
  readonly passed = new Map<string, unknown>();
  passedPeak = 0;

  constructor(private readonly source: LedgerSource) {
    this.rows = source.orderRows()[Symbol.iterator]();
    this.advance();
  }

  private advance(): void {
    const next = this.rows.next();
    this.current = next.done === true ? null : { key: String(next.value.key), value: next.value.value };
  }

  /**
   * Claims the row of order `id` for its placement: the row's value, or
   * 'missing' when there is no such row, or 'claimed' when an earlier
   * placement already took it.
   */
  claim(id: string): unknown {
    // The usual case: the row at the cursor is this order's (rows hold
    // their public id), which spares computing the storage key.
    const here = this.current;
    if (here !== null && (here.value as { id?: unknown } | null)?.id === id) {
      this.advance();
      return here.value;
    }
    const key = this.source.orderKey(id);
    while (this.current !== null && this.source.compareOrderKeys(this.current.key, key) < 0) {
      this.passed.set(this.current.key, this.current.value);
      this.passedPeak = Math.max(this.passedPeak, this.passed.size);
      this.advance();
    }
    if (this.current !== null && this.current.key === key) {
      const value = this.current.value;
      this.advance();
      return value;
    }
    if (this.passed.has(key)) {
      const value = this.passed.get(key);
      this.passed.delete(key);
      return value;
    }
    // Behind the cursor and not waiting: a placement took it before, unless
    // the row does not exist at all.
    return this.source.orderRow(key) === undefined ? 'missing' : 'claimed';
  }

  /** Whether a placement has claimed the row under `key` (which exists). */
  claimed(key: string): boolean {
    if (this.passed.has(key)) return false;
    return this.current === null || this.source.compareOrderKeys(key, this.current.key) < 0;
  }

  /** Rows no placement claimed: those passed, then those never reached. */
  *unclaimed(): Generator<SourceRow<string>> {
    for (const [key, value] of this.passed) yield { key, value };
    while (this.current !== null) {
      yield this.current;
      this.advance();
    }
  }
}
