/**
 * The outbox's writing side, called by the wallet actor while it builds a
 * commit: for each enabled endpoint of the account that subscribed to the
 * change's event type, one message goes into the same WalEntry (so the same
 * LMDB transaction and sync) as the order or refill row it reports. A
 * change is therefore never durable without its messages, and a message is
 * never written for a change that was not. On the order path this costs
 * one Map look-up when the account has no endpoint.
 *
 * Two forms, one meaning. A placement (every order's first change, and the
 * one a busy reseller makes thousands of times a second) names its
 * endpoints in its own order.placed event (`webhooks`), and its message is
 * derived from that event when read (`placementMessage`): no event, id or
 * status view of its own to build, encode and put on the order path
 * (bench/RESULTS.md, "Webhooks on against off", says what that saves). Any other
 * change (progress, status, cancel, refill) gets a `webhook.queued` event
 * of its own, holding the status view or refill as the change left it,
 * since no event of those changes holds all of it. `messagesIn` and
 * `messageCount` are the one reading of both forms.
 *
 * The messages are events of the log itself, numbered in its sequence, and
 * the dispatcher reads them from there. The log's last page is written by
 * every commit anyway; a table of their own would be one more B-tree whose
 * last leaf and branch pages every order commit writes again, with each
 * delivery removing a row from its other end: about 25 KB more per commit,
 * a fifth more bytes to sync (bench/RESULTS.md, "Webhooks on against off"). Delivery progress is one cursor in `meta` (see read-window.ts).
 */
import { createHash, randomFillSync } from 'node:crypto';
import { placedStatusView, statusView, type LogEvent, type OrderRecord, type RefillRecord } from '../ledger/index.js';
import { renderRefill, renderStatusView } from '../wire/index.js';
import { InvariantError } from '../platform/index.js';
import type { WebhookDirectory } from './directory.js';
import type { QueuedMessage } from './records.js';
import { MESSAGE_ID_POOL_IDS } from './limits.js';

type QueuedEvent = Extract<LogEvent, { type: 'webhook.queued' }>;
type PlacedEvent = Extract<LogEvent, { type: 'order.placed' }>;

export class Outbox {
  constructor(
    private readonly directory: WebhookDirectory,
    /** Told how many messages the entry being built holds (the dispatcher looks at the log once it is durable). */
    private readonly written: (messages: number) => void,
  ) {}

  /**
   * The change's events with its messages (the events as they are when the
   * account has no endpoint that wants the change). A placement's messages
   * are implied by its order.placed event, which names the endpoints
   * (`webhooks`); any other change gets one `webhook.queued` event per
   * message after its own events.
   */
  withMessages(events: LogEvent[], account: number, order: OrderRecord | null, refill: RefillRecord | null, atMs: number): LogEvent[] {
    const endpoints = this.directory.forAccount(account);
    if (endpoints.length === 0) return events;
    const placed = placement(events, order, refill);
    if (placed !== null) {
      let webhooks: number[] | null = null;
      for (const endpoint of endpoints) if (endpoint.enabled && endpoint.events.includes('order.updated')) (webhooks ??= []).push(endpoint.id);
      if (webhooks === null) return events;
      this.written(webhooks.length);
      // Object.assign, not a spread: V8's `{ ...placed, webhooks }` of this
      // 13-field event took about 3 µs to build and made it about 2 µs slower
      // to encode (against 1.5 and 0.9 µs), some 5% of a core at 10,000
      // orders a second (bench/RESULTS.md, "What limits the order path").
      // (`satisfies` keeps the check a spread's literal had: a misspelt field would not compile.)
      return [Object.assign({}, placed, { webhooks } satisfies Pick<PlacedEvent, 'webhooks'>)];
    }
    const view = order === null ? null : statusView(order);
    const out: QueuedEvent[] = [];
    for (const endpoint of endpoints) {
      if (!endpoint.enabled) continue;
      // The webhook-id's bytes: random, so ids are unique across databases and restores too.
      if (view !== null && endpoint.events.includes('order.updated')) out.push({ type: 'webhook.queued', atMs, account, webhook: endpoint.id, id: messageId(), order: view });
      if (refill !== null && endpoint.events.includes('refill.updated')) out.push({ type: 'webhook.queued', atMs, account, webhook: endpoint.id, id: messageId(), refill });
    }
    if (out.length === 0) return events;
    this.written(out.length);
    return [...events, ...out];
  }
}

/** The order.placed event when the change is a placement and nothing else (a decision that places writes that one event). */
function placement(events: LogEvent[], order: OrderRecord | null, refill: RefillRecord | null): PlacedEvent | null {
  if (order === null || refill !== null || events.length !== 1) return null;
  const event = events[0]!;
  return event.type === 'order.placed' && event.order === order.id ? event : null;
}

/**
 * Random bytes for webhook-ids, drawn 4 KiB at a time: on this project's
 * VM one `randomBytes(16)` takes about 8 µs measured apart, as long as a
 * 4 KiB fill, and about 25 µs of a loaded event loop (a third of a
 * webhooks-on server's main thread in a CPU profile). Node's randomUUID
 * pools the same way.
 */
const ID_BYTES = 16;
const idPool = Buffer.alloc(ID_BYTES * MESSAGE_ID_POOL_IDS);
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

/**
 * The message a placement implies for one of the endpoints its event names.
 * Its webhook-id is derived, not stored: the first 16 bytes of SHA-256 over
 * the order's id and the endpoint's, so every read of the event (a retry,
 * a resend after a crash) gives the same id, and since order ids are random
 * and a placement happens once per order, no other message has it, in this
 * database or any other (a restored copy resends the same message under the
 * same id, which is what a receiver's de-duplication wants).
 */
function placementMessage(event: PlacedEvent, endpoint: number): QueuedMessage {
  const id = `msg_${createHash('sha256').update(`${event.order}\n${endpoint}`).digest('hex').slice(0, 32)}`;
  return { id, type: 'order.updated', atMs: event.atMs, subject: event.order, data: `{${renderStatusView(placedStatusView(event))}}`, endpoint };
}

/** How many messages a log event holds or implies (0 for every other event). */
export function messageCount(event: LogEvent): number {
  if (event.type === 'webhook.queued') return 1;
  return event.type === 'order.placed' ? (event.webhooks?.length ?? 0) : 0;
}

/** The messages a log event holds or implies, rendered now (none for every other event). */
export function messagesIn(event: LogEvent): readonly QueuedMessage[] {
  if (event.type === 'webhook.queued') return [queuedMessage(event)];
  if (event.type === 'order.placed' && event.webhooks !== undefined) return event.webhooks.map((endpoint) => placementMessage(event, endpoint));
  return NO_MESSAGES;
}

const NO_MESSAGES: readonly QueuedMessage[] = [];

/** The message a `webhook.queued` event holds, with its body's data rendered now by the functions the status reads use. */
function queuedMessage(event: QueuedEvent): QueuedMessage {
  const id = `msg_${Buffer.from(event.id).toString('hex')}`;
  if (event.order !== undefined) return { id, type: 'order.updated', atMs: event.atMs, subject: event.order.id, data: `{${renderStatusView(event.order)}}`, endpoint: event.webhook };
  if (event.refill !== undefined) return { id, type: 'refill.updated', atMs: event.atMs, subject: event.refill.order, data: renderRefill(event.refill), endpoint: event.webhook };
  throw new InvariantError(`webhook message ${id} holds neither an order nor a refill`);
}
