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
import { randomFillSync } from 'node:crypto';
import { statusView, type LogEvent, type OrderRecord, type RefillRecord } from '../ledger/index.js';
import { renderRefill, renderStatusView } from '../render.js';
import type { WebhookDirectory } from './directory.js';
import type { QueuedMessage } from './records.js';

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
    const view = order === null ? null : statusView(order);
    const out: QueuedEvent[] = [];
    for (const endpoint of endpoints) {
      if (!endpoint.enabled) continue;
      // The webhook-id's bytes: random, so ids are unique across databases and restores too.
      if (view !== null && endpoint.events.includes('order.updated')) out.push({ type: 'webhook.queued', atMs, account, webhook: endpoint.id, id: messageId(), order: view });
      if (refill !== null && endpoint.events.includes('refill.updated')) out.push({ type: 'webhook.queued', atMs, account, webhook: endpoint.id, id: messageId(), refill });
    }
    if (out.length > 0) this.written(out.length);
    return out;
  }
}

const NONE: QueuedEvent[] = [];

/**
 * Random bytes for webhook-ids, drawn 4 KiB at a time: on this project's
 * VM one `randomBytes(16)` takes about 8 µs measured apart, as long as a
 * 4 KiB fill, and about 25 µs of a loaded event loop (a third of a
 * webhooks-on server's main thread in a CPU profile). Node's randomUUID
 * pools the same way.
 */
const ID_BYTES = 16;
const idPool = Buffer.alloc(ID_BYTES * 256);
let idOffset = idPool.length;

/** 16 random bytes of their own (copied out: the pool is refilled while the event may still wait to be encoded). */
function messageId(): Buffer {
  if (idOffset === idPool.length) {
    randomFillSync(idPool);
    idOffset = 0;
  }
  const id = Buffer.allocUnsafe(ID_BYTES);
  idPool.copy(id, 0, idOffset, idOffset + ID_BYTES);
  idOffset += ID_BYTES;
  return id;
}

/** The message a `webhook.queued` event holds, with its body's data rendered now by the functions the status reads use. */
export function queuedMessage(event: QueuedEvent): QueuedMessage {
  const id = `msg_${Buffer.from(event.id).toString('hex')}`;
  if (event.order !== undefined) return { id, type: 'order.updated', atMs: event.atMs, subject: event.order.id, data: `{${renderStatusView(event.order)}}`, endpoint: event.webhook };
  if (event.refill !== undefined) return { id, type: 'refill.updated', atMs: event.atMs, subject: event.refill.order, data: renderRefill(event.refill), endpoint: event.webhook };
  throw new Error(`invariant: webhook message ${id} holds neither an order nor a refill`);
}
