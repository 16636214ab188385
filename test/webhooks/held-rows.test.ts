/**
 * The held rows per endpoint, on a real store: moves and removals go into
 * the entry they are given, counts and the oldest message are kept in
 * memory, an endpoint keeps at most `heldMax`, and a restart counts each
 * endpoint's rows once.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WalEntry } from '../../src/wal/index.js';
import { HeldRows } from '../../src/webhooks/held-rows.js';
import type { QueuedMessage } from '../../src/webhooks/index.js';
import { tempLogs } from '../helpers/webhook-log.js';

const { open, cleanup } = tempLogs('credit-order-api-held');
afterEach(cleanup);

const entry = (): WalEntry => ({ events: [], puts: [] });

function message(endpoint: number, subject: string, atMs: number): QueuedMessage {
  return { id: `msg_${subject}_${endpoint}`, type: 'order.updated', atMs, subject, data: `{"order":"${subject}"}`, endpoint };
}

describe('held rows', () => {
  it('moves into the entry given, under the log number; the endpoint holds from then on, at most heldMax', async () => {
    const { store, wal } = open();
    const rows = new HeldRows(store, 2, 10);
    const state = rows.load(1);
    expect(state).toEqual({ holding: false, moving: 0, held: 0, oldestAtMs: null });
    const commit = entry();
    expect(rows.move(state, 7, message(1, 'o1', 500), commit)).toBe(true);
    expect(rows.move(state, 9, message(1, 'o2', 600), commit)).toBe(true);
    // The third would pass heldMax: nothing is added, and the caller drops it.
    expect(rows.move(state, 12, message(1, 'o3', 700), commit)).toBe(false);
    expect(commit.puts.map((p) => [p.table, p.key])).toEqual([
      ['webhookOutbox', [1, 7]],
      ['webhookOutbox', [1, 9]],
    ]);
    expect(state).toEqual({ holding: true, moving: 2, held: 2, oldestAtMs: 500 });
    await wal.append(commit);
    rows.moved(state);
    rows.moved(state);
    expect(state.moving).toBe(0);
    // Rows are stored without the endpoint (it is in the key), oldest first.
    expect(rows.list(1, 10)).toEqual([
      { seq: 7, message: { id: 'msg_o1_1', type: 'order.updated', atMs: 500, subject: 'o1', data: '{"order":"o1"}' } },
      { seq: 9, message: { id: 'msg_o2_1', type: 'order.updated', atMs: 600, subject: 'o2', data: '{"order":"o2"}' } },
    ]);
    expect(rows.has(state, 1, 9)).toBe(true);
    expect(rows.has(state, 1, 12)).toBe(false);
    expect(rows.total()).toBe(2);
  });

  it('counts each endpoint’s rows once after a restart, and lists the endpoints that hold any', async () => {
    const { store, wal } = open();
    const before = new HeldRows(store, 10, 10);
    const commit = entry();
    for (const [endpoint, seq] of [[1, 3], [1, 4], [3, 5]] as const) before.move(before.load(endpoint), seq, message(endpoint, `o${seq}`, seq * 100), commit);
    await wal.append(commit);
    const rows = new HeldRows(store, 10, 10);
    expect([...rows.holdingEndpoints()]).toEqual([1, 3]);
    expect(rows.load(1)).toEqual({ holding: true, moving: 0, held: 2, oldestAtMs: undefined });
    expect(rows.load(2)).toEqual({ holding: false, moving: 0, held: 0, oldestAtMs: null });
  });

  it('reads a page at a time, oldest first', async () => {
    const { store, wal } = open();
    const rows = new HeldRows(store, 10, 2);
    const state = rows.load(1);
    const commit = entry();
    for (const seq of [30, 10, 20]) rows.move(state, seq, message(1, `o${seq}`, seq), commit);
    await wal.append(commit);
    expect([...rows.page(1)].map((row) => row.seq)).toEqual([10, 20]);
    expect(rows.list(1, 5).map((row) => row.seq)).toEqual([10, 20, 30]);
  });

  it('after a delivered row’s removal is durable, the count goes down and the oldest is read again, once', async () => {
    const { store, wal } = open();
    const rows = new HeldRows(store, 10, 10);
    const state = rows.load(1);
    const moves = entry();
    rows.move(state, 1, message(1, 'o1', 100), moves);
    rows.move(state, 2, message(1, 'o2', 200), moves);
    await wal.append(moves);
    expect(rows.oldestAtMs(state, 1)).toBe(100);
    const removal = entry();
    rows.remove(1, 1, removal);
    expect(removal.removes).toEqual([{ table: 'webhookOutbox', key: [1, 1] }]);
    await wal.append(removal);
    rows.removed(state);
    expect(state.held).toBe(1);
    const reads = vi.spyOn(store.tables.webhookOutbox, 'getRange');
    expect(rows.oldestAtMs(state, 1)).toBe(200);
    expect(rows.oldestAtMs(state, 1)).toBe(200);
    expect(reads).toHaveBeenCalledTimes(1);
    const last = entry();
    rows.remove(1, 2, last);
    await wal.append(last);
    rows.removed(state);
    expect(state).toMatchObject({ held: 0, oldestAtMs: null });
    expect(rows.oldestAtMs(state, 1)).toBeUndefined();
  });

  it('keeps the oldest when an older message is moved after a newer one', () => {
    const { store } = open();
    const rows = new HeldRows(store, 10, 10);
    const state = rows.load(1);
    const commit = entry();
    rows.move(state, 5, message(1, 'newer', 900), commit);
    rows.move(state, 4, message(1, 'older', 400), commit);
    expect(state.oldestAtMs).toBe(400);
  });
});
