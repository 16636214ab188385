/**
 * The scan budget of filtered admin listings. A filtered listing (cancel
 * requests, refills of one status) walks an index and keeps the entries
 * that match, so with few matches among many entries one page could read
 * the whole table, synchronously, on the event loop every customer's order
 * waits on. Each request therefore examines at most a fixed number of
 * entries; when the budget runs out before the page is full, the page is
 * answered as it stands (short, even empty) with a cursor that resumes
 * right after the last entry examined. Clients already follow next_cursor
 * until it is null, so they still see every match exactly once.
 */
import { assert } from '../../platform/index.js';

export interface ScannedPage<E, T> {
  items: T[];
  /**
   * The last entry examined when the walk stopped early (page full or
   * budget spent) with entries still ahead: the next page resumes right
   * after it. Null when the walk reached the end.
   */
  resumeAfter: E | null;
}

/**
 * Walks `entries` in order, keeping what `pick` returns (undefined: not a
 * match), until `limit` items are kept, `budget` entries are examined or
 * the entries end. It looks one entry past a full page or a spent budget,
 * so a cursor is returned only when something is left to walk.
 */
export function scanPage<E, T>(entries: Iterable<E>, pick: (entry: E) => T | undefined, limit: number, budget: number): ScannedPage<E, T> {
  assert(Number.isSafeInteger(limit) && limit >= 1, 'a scan needs a positive limit', limit);
  assert(Number.isSafeInteger(budget) && budget >= 1, 'a scan needs a positive budget', budget);
  const items: T[] = [];
  let examined = 0;
  let last: E | null = null;
  for (const entry of entries) {
    if (examined === budget) return { items, resumeAfter: last };
    const item = pick(entry);
    // Full page: this match belongs to the next one, which starts after the entry before it.
    if (item !== undefined && items.length === limit) return { items, resumeAfter: last };
    examined++;
    last = entry;
    if (item !== undefined) items.push(item);
  }
  return { items, resumeAfter: null };
}
