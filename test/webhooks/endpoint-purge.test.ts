/**
 * A deleted endpoint's rows, on a real store: its held messages and then
 * its delivery log are removed a page per commit, and no other endpoint's
 * rows are touched.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { purgeEndpointRows } from '../../src/webhooks/endpoint-purge.js';
import { tempLogs } from '../helpers/webhook-log.js';

const { open, cleanup } = tempLogs('credit-order-api-purge');
afterEach(cleanup);

describe('purging a deleted endpoint’s rows', () => {
  it('removes its held rows, then its delivery log, a page per commit, and nothing of the others', async () => {
    const { store, wal } = open();
    const puts = [];
    for (const endpoint of [1, 2, 3]) {
      for (let n = 1; n <= 3; n++) puts.push({ table: 'webhookOutbox' as const, key: [endpoint, n], value: { held: n } });
      for (let n = 1; n <= 4; n++) puts.push({ table: 'webhookLog' as const, key: [endpoint, n], value: { attempt: n } });
    }
    await wal.append({ events: [], puts });
    const append = vi.spyOn(wal, 'append');
    await purgeEndpointRows(store, wal, 2, 3);
    expect(append.mock.calls.map(([entry]) => entry.removes!.map((r) => `${r.table} ${String(r.key)}`))).toEqual([
      ['webhookOutbox 2,1', 'webhookOutbox 2,2', 'webhookOutbox 2,3'],
      ['webhookLog 2,1', 'webhookLog 2,2', 'webhookLog 2,3'],
      ['webhookLog 2,4'],
    ]);
    for (const table of ['webhookOutbox', 'webhookLog'] as const) {
      expect(store.tables[table].getCount({ start: [2], end: [3] })).toBe(0);
      expect(store.tables[table].getCount()).toBe(table === 'webhookOutbox' ? 6 : 8);
    }
    // Nothing left: no commit at all.
    await purgeEndpointRows(store, wal, 2);
    expect(append).toHaveBeenCalledTimes(3);
  });
});
