/**
 * The outbox's writing side, called by the wallet actor while it builds a
 * commit: for each enabled endpoint of the account that subscribed to the
 * change's event type, one `webhook.queued` event goes into the same
 * WalEntry (so the same LMDB transaction and sync) as the order or refill
 * row it reports. A change is therefore never durable without its
 * messages, and a message is never written for a change that was not. On
 * the order path this costs one Map look-up when the account has no
 * endpoint.
 *
 * The messages are events of the log itself, numbered in its sequence, and
 * the dispatcher reads them from there. The log's last page is written by
 * every commit anyway; a table of their own (as until session 10) was one
 * more B-tree whose last leaf and branch pages every order commit wrote
 * again, and each delivery removed a row from its other end: about 25 KB
 * more per commit, a fifth more bytes to sync (bench/RESULTS.md, session
 * 10). Delivery progress is one cursor in `meta` (see dispatcher.ts).
 */
import { randomUUID } from 'node:crypto';
import type { LogEvent, OrderRecord, RefillRecord } from '../ledger/index.js';
import { renderRefill, renderStatusFields } from '../render.js';
import type { WebhookDirectory } from './directory.js';
import type { WebhookEvent } from './records.js';

export type QueuedEvent = Extract<LogEvent, { type: 'webhook.queued' }>;

export class Outbox {
  constructor(
    private readonly directory: WebhookDirectory,
    /** Told how many messages the entry being built holds (the dispatcher looks at the log once it is durable). */
    private readonly written: (messages: number) => void,
  ) {}

  /** The messages for this change (none when the account has no endpoint that wants it). */
  messages(account: number, order: OrderRecord | null, refill: RefillRecord | null, atMs: number): QueuedEvent[] {
    const endpoints = this.directory.forAccount(account);
    if (endpoints.length === 0) return NONE;
    let orderData: string | undefined;
    let refillData: string | undefined;
    const out: QueuedEvent[] = [];
    for (const endpoint of endpoints) {
      if (!endpoint.enabled) continue;
      if (order !== null && endpoint.events.includes('order.updated')) {
        orderData ??= `{${renderStatusFields(order)}}`;
        out.push(message(account, endpoint.id, 'order.updated', atMs, order.id, orderData));
      }
      if (refill !== null && endpoint.events.includes('refill.updated')) {
        refillData ??= renderRefill(refill);
        out.push(message(account, endpoint.id, 'refill.updated', atMs, refill.order, refillData));
      }
    }
    if (out.length > 0) this.written(out.length);
    return out;
  }
}

const NONE: QueuedEvent[] = [];

function message(account: number, webhook: number, event: WebhookEvent, atMs: number, subject: string, data: string): QueuedEvent {
  // The webhook-id: random, so it is unique across databases and restores too.
  return { type: 'webhook.queued', atMs, account, webhook, id: `msg_${randomUUID().replaceAll('-', '')}`, event, subject, data };
}
