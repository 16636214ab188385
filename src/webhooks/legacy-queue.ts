/**
 * The first start of a database without a webhook cursor. Until session
 * 10 the messages were rows of a table of their own (`webhookQueue`), under
 * a sequence of their own, and held rows (`webhookOutbox`) kept those
 * numbers. The log's numbers are another sequence, so those rows are
 * renumbered below every log number (number − LEGACY_OFFSET), in the order
 * they had: every queued row becomes a held row of its endpoint, every
 * held row keeps its place at the front of its endpoint's rows, and each
 * endpoint sends them, in order, before anything newer. Then the cursor is
 * written at the log's next number: no message is in the log yet.
 *
 * One synchronous LMDB transaction, at start-up, before any request: all of
 * it lands or none, and a start that crashed before it is simply redone.
 */
import type { Store } from '../wal/index.js';
import { endpointKey, type QueuedMessage } from './records.js';

/** Subtracted from the old numbers: above any sequence a database reaches, and the result stays a safe integer. */
export const LEGACY_OFFSET = 2 ** 40;

/** Moves rows from before the cursor existed (see above) and writes the cursor; returns it. */
export function startCursor(store: Store, cursorKey: string): number {
  const cursor = store.nextSeq;
  const { webhookQueue: queue, webhookOutbox: held, meta } = store.tables;
  store.root.transactionSync(() => {
    const moves: { from: { table: 'webhookQueue' | 'webhookOutbox'; key: unknown }; to: [number, number]; value: unknown }[] = [];
    for (const { key, value } of held.getRange({})) {
      const [endpoint, seq] = key as [number, number];
      moves.push({ from: { table: 'webhookOutbox', key }, to: endpointKey(endpoint, seq - LEGACY_OFFSET), value });
    }
    for (const { key, value } of queue.getRange({})) {
      const { endpoint, ...message } = value as QueuedMessage;
      moves.push({ from: { table: 'webhookQueue', key }, to: endpointKey(endpoint, (key as number) - LEGACY_OFFSET), value: message });
    }
    for (const move of moves) store.tables[move.from.table].remove(move.from.key as never);
    for (const move of moves) held.put(move.to, move.value);
    meta.put(cursorKey, cursor);
  });
  return cursor;
}
