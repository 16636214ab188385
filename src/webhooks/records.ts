/**
 * What the webhook tables hold. `webhooks`: one endpoint per id. New
 * messages are not rows: they are in the log (`webhook.queued` events, or
 * implied by an order.placed event that names its endpoints), written by
 * the wallet actor in the commit of the change they report, and
 * the dispatcher's cursor (`meta`) says how far they are settled.
 * `webhookOutbox`: the messages held back, per endpoint and in log order
 * (the endpoint is failing, backing off, disabled or slow), read a page at
 * a time. `webhookLog`: the last attempts per endpoint, for the operator.
 */
import type { Store } from '../wal/index.js';
import type { SealedSecret } from './secret-box.js';

/** The event types an endpoint may subscribe to. */
export const WEBHOOK_EVENTS = ['order.updated', 'refill.updated'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export function isWebhookEvent(value: unknown): value is WebhookEvent {
  return typeof value === 'string' && (WEBHOOK_EVENTS as readonly string[]).includes(value);
}

export interface WebhookEndpoint {
  id: number;
  account: number;
  url: string;
  events: WebhookEvent[];
  enabled: boolean;
  /** The signing secret, sealed (see secret-box.ts); never stored in the clear. */
  secret: SealedSecret;
  /** The secret before the last rotation, still signed with until `untilMs` so receivers can roll over. */
  previous: { secret: SealedSecret; untilMs: number } | null;
  createdAtMs: number;
  /** Set when a message failed for the retry window (or the endpoint held WEBHOOKS_HELD_MAX); deliveries stop until the operator replays. */
  failingSinceMs: number | null;
}

/** One message for one endpoint. `id` is the webhook-id, the same on every attempt. */
export interface OutboxMessage {
  id: string;
  type: WebhookEvent;
  /** When the change happened (the payload's `timestamp`). */
  atMs: number;
  /** The order the message is about: messages of one order are delivered in sequence. */
  subject: string;
  /**
   * The payload's `data`, rendered when the change was made: the order as
   * GET /api/v1/status shows it, or the refill as GET /api/v1/refill_status
   * does. A short string, not the record: it is encoded into every order's
   * commit, and a whole record (in a table without shared structures) made
   * those commits much larger.
   */
  data: string;
}

export type AttemptOutcome = 'delivered' | 'failed' | 'timeout' | 'forbidden';

/** One delivery attempt, in the endpoint's log. */
export interface DeliveryAttempt {
  atMs: number;
  message: string;
  type: WebhookEvent;
  subject: string;
  attempt: number;
  outcome: AttemptOutcome;
  /** The receiver's HTTP status, or null when none came. */
  status: number | null;
  error: string | null;
  durationMs: number;
}

/** A message with the endpoint it is for (as the dispatcher's window holds it). */
export interface QueuedMessage extends OutboxMessage {
  endpoint: number;
}

/**
 * Key of a held message (`webhookOutbox`) or of a delivery log row
 * (`webhookLog`): an endpoint's rows in the order they were written. A held
 * message keeps its log number.
 */
export function endpointKey(endpoint: number, seq: number): [number, number] {
  return [endpoint, seq];
}

/** Ids of the endpoints with rows in a table keyed by `endpointKey` (held messages, delivery log), found by skipping from one endpoint's rows to the next. */
export function* endpointsWithRows(store: Pick<Store, 'tables'>, table: 'webhookOutbox' | 'webhookLog'): Generator<number> {
  let start = 0;
  for (;;) {
    let found: number | null = null;
    for (const key of store.tables[table].getKeys({ start: [start], limit: 1 })) found = (key as [number, number])[0];
    if (found === null) return;
    yield found;
    start = found + 1;
  }
}
