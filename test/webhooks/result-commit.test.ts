/**
 * The commits of delivery results: what one event-loop turn settles is one
 * WAL entry, appended at the end of the turn with the cursor when it moved;
 * what waits for durability runs after it, in order, and not at all when
 * the commit fails.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TablePut, Wal, WalEntry } from '../../src/wal/index.js';
import { ResultCommits } from '../../src/webhooks/result-commit.js';
import { tempLogs } from '../helpers/webhook-log.js';

const { open, cleanup } = tempLogs('credit-order-api-results');
afterEach(cleanup);

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('result commits', () => {
  it('puts everything settled in one turn into one entry, appended at the end of the turn with the cursor; callbacks run once it is durable, in order', async () => {
    const { store, wal } = open();
    const appended: WalEntry[] = [];
    const append = wal.append.bind(wal);
    vi.spyOn(wal, 'append').mockImplementation((entry) => (appended.push(entry), append(entry)));
    let cursor: TablePut | null = { table: 'meta', key: 'webhookCursor', value: 7 };
    const tracked: Promise<unknown>[] = [];
    const order: string[] = [];
    const commits = new ResultCommits(wal, () => cursor, (work) => tracked.push(work), () => order.push('committed'));
    const first = commits.current();
    first.entry.puts.push({ table: 'webhookLog', key: [1, 1], value: 'a' });
    first.afterDurable(() => order.push('first'));
    expect(commits.building).toBe(true);
    const same = commits.current();
    expect(same).toBe(first);
    same.entry.removes.push({ table: 'webhookOutbox', key: [1, 3] });
    same.afterDurable(() => order.push('second'));
    expect(appended).toHaveLength(0);
    await Promise.all(tracked);
    expect(commits.building).toBe(false);
    expect(appended).toEqual([
      {
        events: [],
        puts: [
          { table: 'webhookLog', key: [1, 1], value: 'a' },
          { table: 'meta', key: 'webhookCursor', value: 7 },
        ],
        removes: [{ table: 'webhookOutbox', key: [1, 3] }],
      },
    ]);
    expect(order).toEqual(['first', 'second', 'committed']);
    expect(store.tables.meta.get('webhookCursor')).toBe(7);
    // The next turn's commit is a new one, without the cursor when it has not moved.
    cursor = null;
    commits.current().entry.puts.push({ table: 'webhookLog', key: [1, 2], value: 'b' });
    await Promise.all(tracked);
    expect(appended[1]!.puts).toEqual([{ table: 'webhookLog', key: [1, 2], value: 'b' }]);
  });

  it('runs nothing that waited for a commit that failed (the process stops), and still ends its tracked work', async () => {
    const failing: Wal = { append: () => Promise.reject(new Error('disk gone')) } as unknown as Wal;
    const tracked: Promise<unknown>[] = [];
    const ran: string[] = [];
    const commits = new ResultCommits(failing, () => null, (work) => tracked.push(work), () => ran.push('committed'));
    commits.current().afterDurable(() => ran.push('after'));
    await turn();
    await Promise.all(tracked);
    expect(ran).toEqual([]);
  });
});
