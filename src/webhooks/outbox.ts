/**
 * The outbox's writing side, called by the wallet actor while it builds a
 * commit: for each enabled endpoint of the account that subscribed to the
 * change's event type, one message row goes into the same WalEntry (so the
 * same LMDB transaction and sync) as the order or refill row it reports. A
 * change is therefore never durable without its messages, and a message is
 * never written for a change that was not. On the order path this costs one
 * Map look-up when the account has no endpoint.
 */
import { randomUUID } from 'node:crypto';
import type { OrderRecord, RefillRecord } from '../ledger/index.js';
import type { Store, TablePut } from '../wal/index.js';
import { renderRefill, renderStatusFields } from '../render.js';
import type { WebhookDirectory } from './directory.js';
import { outboxKey, type OutboxMessage, type WebhookEvent } from './records.js';

export class Outbox {
  /** Sequence of the next message; it only has to grow within each endpoint's rows. */
  private seq = 1;

  constructor(
    store: Store,
    private readonly directory: WebhookDirectory,
    /** Told which endpoints got messages in the entry being built (the dispatcher wakes once it is durable). */
    private readonly written: (endpoint: number) => void,
  ) {
    for (const endpoint of directory.all()) {
      const last = lastSeq(store, endpoint.id);
      if (last >= this.seq) this.seq = last + 1;
    }
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
    this.written(endpoint);
    // The webhook-id: random, so it is unique even after the outbox is emptied and the sequence starts again.
    const message: OutboxMessage = { id: `msg_${randomUUID().replaceAll('-', '')}`, type, atMs, subject, data };
    return { table: 'webhookOutbox', key: outboxKey(endpoint, this.seq++), value: message };
  }
}

/** The highest sequence number held for an endpoint, 0 when none. */
function lastSeq(store: Store, endpoint: number): number {
  for (const key of store.tables.webhookOutbox.getKeys({ start: [endpoint + 1], end: [endpoint], reverse: true, limit: 1 })) {
    const [e, seq] = key as [number, number];
    if (e === endpoint) return seq;
  }
  return 0;
}
