/**
 * What the webhook tables hold. `webhooks`: one endpoint per id.
 * `webhookOutbox`: one message per endpoint and sequence number, written by
 * the wallet actor in the commit of the change it reports and removed, in a
 * commit of its own, once the endpoint has acknowledged it. `webhookLog`:
 * the last attempts per endpoint, for the operator.
 */
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
  /** Set when a message waited longer than the retry window; deliveries stop until the operator replays. */
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

/** Outbox key: messages of an endpoint in the order they were written. */
export function outboxKey(endpoint: number, seq: number): [number, number] {
  return [endpoint, seq];
}
