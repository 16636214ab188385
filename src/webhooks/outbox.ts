/**
 * The outbox's writing side, called by the wallet actor while it builds a
 * commit: for each enabled endpoint of the account that subscribed to the
 * change's event type, one message row goes into the same WalEntry (so the
 * same LMDB transaction and sync) as the order or refill row it reports. A
 * change is therefore never durable without its messages, and a message is
 * never written for a change that was not. On the order path this costs one
 * Map look-up when the account has no endpoint.
 *
 * Every message goes to the queue (`webhookQueue`) under the next number of
 * one sequence, so a commit's messages are appended at the end of one
 * B-tree, on a page or two, however many endpoints they are for. (Keyed per
 * endpoint, 25–28 messages of one commit dirtied as many leaf pages and
 * made each order commit 1.7 times as long: bench/RESULTS.md, session 7.)
 */
import { randomUUID } from 'node:crypto';
import type { OrderRecord, RefillRecord } from '../ledger/index.js';
import type { Store, TablePut } from '../wal/index.js';
import { renderRefill, renderStatusFields } from '../render.js';
import type { WebhookDirectory } from './directory.js';
import { heldEndpoints, type QueuedMessage, type WebhookEvent } from './records.js';

export class Outbox {
  /** Sequence number of the next message: above every number in the queue and among the held messages. */
  private seq: number;

  constructor(
    store: Store,
    private readonly directory: WebhookDirectory,
    /** Told that the entry being built holds messages (the dispatcher looks at the queue once it is durable). */
    private readonly written: () => void,
  ) {
    this.seq = lastSequence(store) + 1;
  }

  /** Adds the messages for this change to `puts`. */
  addRows(account: number, order: OrderRecord | null, refill: RefillRecord | null, atMs: number, puts: TablePut[]): void {
    const endpoints = this.directory.forAccount(account);
    if (endpoints.length === 0) return;
    let orderData: string | undefined;
    let refillData: string | undefined;
    for (const endpoint of endpoints) {
      if (!endpoint.enabled) continue;
      if (order !== null && endpoint.events.includes('order.updated')) {
        orderData ??= `{${renderStatusFields(order)}}`;
        puts.push(this.row(endpoint.id, 'order.updated', atMs, order.id, orderData));
      }
      if (refill !== null && endpoint.events.includes('refill.updated')) {
        refillData ??= renderRefill(refill);
        puts.push(this.row(endpoint.id, 'refill.updated', atMs, refill.order, refillData));
      }
    }
  }

  private row(endpoint: number, type: WebhookEvent, atMs: number, subject: string, data: string): TablePut {
    this.written();
    // The webhook-id: random, so it is unique even after the queue is emptied and the sequence starts again.
    const message: QueuedMessage = { id: `msg_${randomUUID().replaceAll('-', '')}`, type, atMs, subject, data, endpoint };
    return { table: 'webhookQueue', key: this.seq++, value: message };
  }
}

/** The highest sequence number in the queue or among the held messages, 0 when there is none. */
function lastSequence(store: Store): number {
  let last = 0;
  for (const key of store.tables.webhookQueue.getKeys({ reverse: true, limit: 1 })) last = key as number;
  // Held messages keep their queue numbers; each endpoint's highest is the last of its rows.
  for (const endpoint of heldEndpoints(store)) {
    for (const key of store.tables.webhookOutbox.getKeys({ start: [endpoint + 1], end: [endpoint], reverse: true, limit: 1 })) {
      const [e, seq] = key as [number, number];
      if (e === endpoint && seq > last) last = seq;
    }
  }
  return last;
}
