/**
 * The ledger's records: what the log and the tables hold. Money fields are integer micro-credits;
 * times are Unix milliseconds. Records are checked before they are written
 * and when they are read back (see `checkWallet`, `checkOrder`).
 */
import { assert } from '../platform/index.js';
import type { OrderExtras, OrderType } from './order-types.js';
import type { SubscriptionStatus, SubscriptionTerms } from './subscription-record.js';

export type Channel = 'api' | 'panel';
export type OrderStatus = 'pending' | 'processing' | 'in_progress' | 'completed' | 'partial' | 'canceled';

export interface AccountProfile {
  id: number;
  name: string;
  apiKey: string;
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  secretHash: string;
  /** SHA-256 of the API v2 key, hex; null or absent when none is issued. The key itself is never stored. */
  v2KeyHash?: string | null;
  createdAtMs: number;
  /** Telegram user id for the force-join check, set by the operator. */
  telegramUserId?: number | null;
  forceJoinVerified?: boolean;
  forceJoinExempt?: boolean;
}

/** The part of an account that its wallet actor owns and changes. */
export interface WalletRecord {
  id: number;
  credits: number;
  banned: boolean;
  rateLimitPerMinute: number;
  unlimitedExpiresMs: number | null;
}

export interface ServiceRecord {
  id: number;
  platform: string;
  name: string;
  rate: number;
  min: number;
  max: number;
  enabled: boolean;
  /** What clients choose by: a grouping, the order type, and what the service allows. */
  category: string;
  type: OrderType;
  /** Whether a completed or partial order may ask for a refill, and for how many days after it finished. */
  refill: boolean;
  refillDays: number;
  /** Whether a customer may cancel a pending order of this service. */
  cancel: boolean;
  /** Whether orders may be split into runs (drip-feed). */
  dripfeed: boolean;
  description: string;
}

/** Services saved before these fields existed read as the defaults. */
export const SERVICE_DEFAULTS = {
  category: '',
  type: 'Default',
  refill: false,
  refillDays: 30,
  cancel: false,
  dripfeed: false,
  description: '',
} as const satisfies Partial<ServiceRecord>;

export function withServiceDefaults(stored: Partial<ServiceRecord> & Pick<ServiceRecord, 'id'>): ServiceRecord {
  return { ...SERVICE_DEFAULTS, ...stored } as ServiceRecord;
}

export interface OrderRecord {
  id: string;
  account: number;
  service: number;
  target: string;
  quantity: number;
  /** Rate the order was placed with; later rate changes never touch it. */
  rate: number;
  charge: number;
  /** What was taken from the wallet: the charge, or 0 under the unlimited plan. */
  debit: number;
  status: OrderStatus;
  remains: number | null;
  channel: Channel;
  unlimited: boolean;
  createdAtMs: number;
  /** Orders placed in the same millisecond keep their order by this counter. */
  seq: number;
  /** The service's order type when placed, and the inputs it took (absent on orders placed before types existed: Default). */
  type?: OrderType;
  extras?: OrderExtras;
  /** Progress the operator recorded while in progress (absent until recorded). */
  startCount?: number | null;
  progressRemains?: number | null;
  /** The customer asked to cancel while the order was being processed; the operator resolves it. */
  cancelRequested?: boolean;
  /** The worker that claimed the order from the processing queue (absent once the order is back in the queue). */
  worker?: string;
  /** While a claimed order is processing: when its claim's lease ends (Unix ms; see lease.ts). */
  leaseExpiresMs?: number;
  /** When the order reached a final state (the refill window counts from here). */
  finishedAtMs?: number;
  /** The order's latest refill (at most one is open at a time). */
  refill?: { id: number; status: RefillStatus; createdAtMs: number };
  /**
   * The order's public number, what API v2 clients and panels call an order
   * id: 1, 2, 3, … across all accounts, in the order orders were accepted
   * (refusals take none). Absent only on orders placed before numbers existed.
   */
  number?: number;
  /** A subscription's order: the subscription's id and the post it delivers to (the processing system's post id). */
  subscription?: number;
  post?: string;
}

/**
 * What a status read shows of an order, as data: GET /api/v1/status renders
 * it at once, and a webhook message stores it (in the change's commit) and
 * renders it when sent, so both say the same. `remains` is already what is
 * shown (remainsShown); `runs` and `interval` only for a drip-feed order.
 */
export interface OrderStatusView {
  id: string;
  number: number | null;
  status: OrderStatus;
  quantity: number;
  charge: number;
  startCount: number | null;
  remains: number;
  runs?: number;
  interval?: number;
}

export type RefillStatus = 'pending' | 'in_progress' | 'completed' | 'rejected';

/** A refill request: moves no money. Ids are positive integers, growing. */
export interface RefillRecord {
  id: number;
  order: string;
  account: number;
  status: RefillStatus;
  createdAtMs: number;
  updatedAtMs: number;
  reason?: string;
}

/** An Idempotency-Key record: the first answer, replayed for the same payload. */
export interface IdempotencyRecord {
  fingerprint: string;
  status: number;
  body: string;
  /** The order its answer placed (null for a refusal or a subscription). */
  order: string | null;
  /** The subscription its answer placed, when the key was sent with a subscription. */
  subscription?: number;
  atMs: number;
}

export type LogEvent =
  | { type: 'account.created'; atMs: number; account: number; name: string; credits: number; rateLimitPerMinute: number }
  | { type: 'credits.adjusted'; atMs: number; account: number; amount: number; reason: string; balance: number }
  | { type: 'account.updated'; atMs: number; account: number; banned?: boolean; rateLimitPerMinute?: number; reason?: string }
  | { type: 'secret.rotated'; atMs: number; account: number }
  /** The account's API v2 key was issued (replacing any earlier one) or revoked. */
  | { type: 'v2key.issued'; atMs: number; account: number }
  | { type: 'v2key.revoked'; atMs: number; account: number }
  | { type: 'service.saved'; atMs: number; service: ServiceRecord; reason?: string }
  | {
      type: 'order.placed';
      atMs: number;
      account: number;
      order: string;
      service: number;
      quantity: number;
      rate: number;
      charge: number;
      debit: number;
      balance: number;
      channel: Channel;
      idempotencyKey: string | null;
      /** The order's number (see OrderRecord.number); absent on orders placed before numbers existed. */
      number?: number;
      /** Absent for a Default order with no extras. charge = quantity × rate × (extras.runs ?? 1). */
      orderType?: OrderType;
      extras?: OrderExtras;
      /**
       * The webhook endpoints told of this placement (absent when none): the
       * event implies one order.updated message to each, its data the
       * order as placed (placedStatusView). A placement is the one change
       * every order has, so its messages cost the order path no event of
       * their own (src/webhooks/outbox.ts). Moves no money.
       */
      webhooks?: number[];
      /** A subscription's order: see OrderRecord.subscription. */
      subscription?: number;
      post?: string;
    }
  | { type: 'order.rejected'; atMs: number; account: number; idempotencyKey: string; code: string }
  | {
      type: 'order.status';
      atMs: number;
      account: number;
      order: string;
      from: OrderStatus;
      to: OrderStatus;
      remains: number | null;
      /** Credits returned to the wallet in this same commit (0 when none). */
      refund: number;
      balance: number;
      reason?: string;
      /** The worker that claimed the order (a move to processing from the claim queue). */
      worker?: string;
      /** On a claim: when its lease ends (see lease.ts). */
      leaseExpiresMs?: number;
    }
  /** The worker holding a processing order moved its lease's end (see lease.ts). Moves no money. */
  | { type: 'order.lease_extended'; atMs: number; account: number; order: string; worker: string; leaseExpiresMs: number }
  /**
   * A processing order went back to the claim queue (pending): its worker
   * released it, or its lease ended (`expired`, logged by the sweep or the
   * next claim). Moves no money.
   */
  | { type: 'order.released'; atMs: number; account: number; order: string; worker: string; cause: 'released' | 'expired' }
  | { type: 'order.progress'; atMs: number; account: number; order: string; startCount: number | null; remains: number | null }
  | { type: 'order.cancel_requested'; atMs: number; account: number; order: string }
  | { type: 'refill.requested'; atMs: number; account: number; order: string; refill: number }
  | { type: 'refill.status'; atMs: number; account: number; order: string; refill: number; from: RefillStatus; to: RefillStatus; reason?: string }
  | { type: 'plan.granted'; atMs: number; account: number; months: number; priceInr: number; expiresMs: number; reason?: string }
  /** A webhook endpoint was registered or changed (enabled flag, failing mark cleared by a replay). */
  | { type: 'webhook.saved'; atMs: number; account: number; webhook: number; url: string; events: string[]; enabled: boolean; reason?: string }
  | { type: 'webhook.secret_rotated'; atMs: number; account: number; webhook: number }
  | { type: 'webhook.deleted'; atMs: number; account: number; webhook: number }
  /**
   * A webhook message, written in the commit of the change it reports: the
   * log is the outbox (src/webhooks/outbox.ts). `id`: the webhook-id's 16
   * random bytes. The payload's data as the change left it: `order` for
   * order.updated (the status view GET /status renders), `refill` for
   * refill.updated. Rendered when sent, by the same functions. Moves no money.
   */
  | { type: 'webhook.queued'; atMs: number; account: number; webhook: number; id: Uint8Array; order?: OrderStatusView; refill?: RefillRecord }
  /** A message failed for WEBHOOKS_RETRY_HOURS from its first failed attempt (or it held WEBHOOKS_HELD_MAX): deliveries stop until the operator replays. */
  | { type: 'webhook.failing'; atMs: number; account: number; webhook: number; reason: string }
  /**
   * A subscription was placed (subscription-record.ts): it moves no money;
   * its posts' orders are order.placed events naming it. `subscription` is
   * its id, a number of the orders' sequence.
   */
  | ({ type: 'subscription.placed'; atMs: number; account: number; subscription: number; rate: number; channel: Channel; idempotencyKey?: string } & SubscriptionTerms)
  /** A subscription's status moved (paused for funds, resumed, completed, expired, canceled). Moves no money. */
  | { type: 'subscription.status'; atMs: number; account: number; subscription: number; from: SubscriptionStatus; to: SubscriptionStatus; reason?: string }
  | {
      type: 'forcejoin.updated';
      atMs: number;
      account: number;
      telegramUserId: number | null;
      verified: boolean;
      exempt: boolean;
      reason?: string;
    };

/**
 * The wallet row `w` with `credits`, its fields set one by one in the order
 * of WalletRecord. Every row the order path writes then has one hidden
 * class, whatever shape the row it starts from was read with (a spread
 * copies that shape), and msgpack encodes all of them through one record
 * structure. A row stored before the plan existed has no
 * `unlimitedExpiresMs`: it is null here, which is how the replay reads it.
 */
export function walletWithCredits(w: WalletRecord, credits: number): WalletRecord {
  return { id: w.id, credits, banned: w.banned, rateLimitPerMinute: w.rateLimitPerMinute, unlimitedExpiresMs: w.unlimitedExpiresMs ?? null };
}

export function checkWallet(w: WalletRecord): WalletRecord {
  // Constant messages with the row as detail: these run on every order and build no string unless one fails.
  assert(Number.isSafeInteger(w.id) && w.id >= 1, 'a wallet id must be a positive safe integer', w);
  assert(Number.isSafeInteger(w.credits) && w.credits >= 0, 'wallet credits must be a non-negative safe integer', w);
  assert(Number.isSafeInteger(w.rateLimitPerMinute) && w.rateLimitPerMinute >= 1, 'a wallet rate limit must be a positive safe integer', w);
  return w;
}

export function checkOrder(o: OrderRecord): OrderRecord {
  assert(typeof o.id === 'string' && Number.isSafeInteger(o.charge) && Number.isSafeInteger(o.debit), 'an order must have a string id and a safe-integer charge and debit', o);
  assert(o.debit === 0 || o.debit === o.charge, "an order's debit must be 0 or its charge", o);
  assert(o.number === undefined || (Number.isSafeInteger(o.number) && o.number >= 1), "an order's number must be a positive safe integer", o);
  return o;
}
