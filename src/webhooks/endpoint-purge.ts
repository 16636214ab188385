/**
 * What a deleted endpoint leaves behind is removed: its held messages, then
 * its delivery log, a page per commit, so no commit grows with an
 * endpoint's backlog. Held rows and log rows are keyed `[endpoint, n]`, so
 * a page is one range read per table.
 */
import type { Store, Wal, WalEntry } from '../wal/index.js';
import { PURGE_PAGE_ROWS } from './limits.js';

/** The tables with rows per endpoint: its held messages, then its delivery log. */
const ENDPOINT_TABLES = ['webhookOutbox', 'webhookLog'] as const;

/** Removes every row of the endpoint, a page per commit; resolves once none is left (rejects if a commit fails). */
export async function purgeEndpointRows(store: Store, wal: Wal, endpoint: number, pageRows = PURGE_PAGE_ROWS): Promise<void> {
  for (;;) {
    const removes = nextPage(store, endpoint, pageRows);
    if (removes.length === 0) return;
    await wal.append({ events: [], puts: [], removes });
  }
}

function nextPage(store: Store, endpoint: number, pageRows: number): NonNullable<WalEntry['removes']> {
  const removes: NonNullable<WalEntry['removes']> = [];
  for (const table of ENDPOINT_TABLES) {
    const room = pageRows - removes.length;
    if (room === 0) break;
    for (const key of store.tables[table].getKeys({ start: [endpoint], end: [endpoint + 1], limit: room })) removes.push({ table, key: key as [number, number] });
  }
  return removes;
}
