/**
 * The read-ahead window over the log, on a real store: it reads both forms
 * of a message from its cursor in log order, bounded by the window and by a
 * pass's share of the log, skips the log when every written message has
 * been read, and writes the cursor only up to the first message not yet
 * settled.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { QueuedMessage } from '../../src/webhooks/index.js';
import { CURSOR_LAG_MAX, LOG_EVENTS_PER_PASS } from '../../src/webhooks/limits.js';
import { ReadWindow, WEBHOOK_CURSOR_KEY, type Windowed } from '../../src/webhooks/read-window.js';
import { other, placed, queued, tempLogs } from '../helpers/webhook-log.js';

const { open, cleanup } = tempLogs('credit-order-api-window');
afterEach(cleanup);

const all = (): boolean => true;
const seen = (window: ReadWindow): [number, number, string][] => [...window.values()].map((w) => [w.seq, w.message.endpoint, w.message.subject]);

/** Settles a window message as a durable result commit would. */
function settle(window: ReadWindow, w: Windowed): void {
  w.state = 'settling';
  window.remove(w);
}

describe('the read window', () => {
  it('reads the messages past the cursor in log order, both forms, until the window is full (a placement’s messages come in together)', async () => {
    const { store, wal } = open();
    await wal.append({ events: [other(), placed('o1', [1, 2]), other(), queued(1, 'o2'), queued(2, 'o3')], puts: [] });
    const window = new ReadWindow(store, 3);
    expect(window.backlog()).toEqual({ count: 4, oldestAtMs: null });
    expect(window.fill(all)).toBe(false);
    expect(seen(window)).toEqual([
      [2, 1, 'o1'],
      [2, 2, 'o1'],
      [4, 1, 'o2'],
    ]);
    expect(window.full()).toBe(true);
    // Read past the placement and the next message, not past the last.
    expect(window.hasReadPast(4)).toBe(true);
    expect(window.hasReadPast(5)).toBe(false);
    expect(window.backlog()).toEqual({ count: 4, oldestAtMs: 1_000 });
    settle(window, [...window.values()][0]!);
    window.fill(all);
    expect(seen(window).map(([seq]) => seq)).toEqual([2, 4, 5]);
    expect(window.hasReadPast(5)).toBe(true);
  });

  it('keeps out what `accept` refuses, and indexes the rest per endpoint', async () => {
    const { store, wal } = open();
    await wal.append({ events: [placed('o1', [1, 2, 3]), queued(2, 'o1'), queued(3, 'o2')], puts: [] });
    const window = new ReadWindow(store, 100);
    const offered: [number, number][] = [];
    window.fill((seq: number, message: QueuedMessage) => {
      offered.push([seq, message.endpoint]);
      return message.endpoint !== 2;
    });
    expect(offered).toEqual([
      [1, 1],
      [1, 2],
      [1, 3],
      [2, 2],
      [3, 3],
    ]);
    expect([...window.ofEndpoint(3)].map((w) => w.message.subject)).toEqual(['o1', 'o2']);
    expect([...window.ofEndpoint(2)]).toEqual([]);
    const [first] = window.ofEndpoint(3);
    first!.state = 'settling';
    expect([...window.unsentOf(3)].map((w) => w.message.subject)).toEqual(['o2']);
    // Every message offered was read, kept or not.
    expect(window.backlog().count).toBe(2);
  });

  it('writes the cursor up to the first message not yet settled, once per move, and a new window starts there', async () => {
    const { store, wal } = open();
    await wal.append({ events: [queued(1, 'o1'), queued(1, 'o2'), queued(1, 'o3')], puts: [] });
    const window = new ReadWindow(store, 100);
    window.fill(all);
    expect(window.lowWater()).toBe(1);
    expect(window.cursorPut()).toBeNull();
    const [a, b] = window.values();
    // The second settles first: the cursor may not pass the first.
    settle(window, b!);
    expect(window.cursorPut()).toBeNull();
    settle(window, a!);
    expect(window.lowWater()).toBe(3);
    const put = window.cursorPut();
    expect(put).toEqual({ table: 'meta', key: WEBHOOK_CURSOR_KEY, value: 3 });
    expect(window.cursorPut()).toBeNull();
    await wal.append({ events: [], puts: [put!] });
    // After a restart only the message past the durable cursor is read again.
    const restarted = new ReadWindow(store, 100);
    expect(restarted.backlog().count).toBe(1);
    restarted.fill(all);
    expect(seen(restarted)).toEqual([[3, 1, 'o3']]);
  });

  it('skips the log while every message written has been read: the read position jumps to the log’s next number', async () => {
    const { store, wal } = open();
    await wal.append({ events: Array.from({ length: 10 }, () => other()), puts: [] });
    const window = new ReadWindow(store, 100);
    const reads = vi.spyOn(store.log, 'getRange');
    expect(window.fill(all)).toBe(false);
    expect(reads).not.toHaveBeenCalled();
    expect(window.lowWater()).toBe(11);
    // A message announced by its actor is looked for once its event is written.
    window.written(1);
    await wal.append({ events: [queued(1, 'o1')], puts: [] });
    window.lookAgain();
    window.fill(all);
    expect(reads).toHaveBeenCalledTimes(1);
    expect(seen(window)).toEqual([[11, 1, 'o1']]);
  });

  it('reads at most LOG_EVENTS_PER_PASS events in one fill, and says so; the cursor is due on its own once it lags CURSOR_LAG_MAX', async () => {
    // One pass's share is enough to make the cursor lag.
    expect(CURSOR_LAG_MAX).toBeLessThan(LOG_EVENTS_PER_PASS);
    const { store, wal } = open();
    await wal.append({ events: [...Array.from({ length: LOG_EVENTS_PER_PASS + 10 }, () => other()), queued(1, 'late')], puts: [] });
    const window = new ReadWindow(store, 100);
    expect(window.lagging()).toBe(false);
    expect(window.fill(all)).toBe(true);
    expect(window.size).toBe(0);
    expect(window.lagging()).toBe(true);
    expect(window.fill(all)).toBe(false);
    expect(seen(window)).toEqual([[LOG_EVENTS_PER_PASS + 11, 1, 'late']]);
    const [late] = window.values();
    settle(window, late!);
    expect(window.cursorPut()!.value).toBe(LOG_EVENTS_PER_PASS + 12);
    expect(window.lagging()).toBe(false);
  });
});
