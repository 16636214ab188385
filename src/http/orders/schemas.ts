/**
 * Request and response schemas (TypeBox), compiled once at start-up. The
 * same schemas generate the OpenAPI document, so the contract that clients
 * read is the one the server enforces.
 */
import { Type, type TSchema, type Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import {
  ANSWER_NUMBER_MAX,
  BATCH_IDS_MAX,
  REFILL_STATUSES,
  COMMENT_CHARS_MAX,
  COMMENT_LINES_MAX,
  GROUP_CHARS_MAX,
  GROUP_LINES_MAX,
  HASHTAG_CHARS_MAX,
  HASHTAG_LINES_MAX,
  INTERVAL_MINUTES_MAX,
  KEYWORD_CHARS_MAX,
  KEYWORD_LINES_MAX,
  ORDER_TYPE_NAMES,
  RUNS_MAX,
  SUBSCRIPTION_EXPIRY_DAYS_MAX,
  SUBSCRIPTION_OLD_POSTS_MAX,
  SUBSCRIPTION_ORDERS_KEPT,
  SUBSCRIPTION_POSTS_MAX,
  SUBSCRIPTION_STATUSES,
  URL_CHARS_MAX,
  USERNAME_CHARS_MAX,
  USERNAME_LINES_MAX,
} from '../../ledger/index.js';
import { TARGET_CHARS_MAX } from '../limits.js';
import { SERVICE_TIMES_KEPT } from '../../actors/limits.js';

const SAFE = Number.MAX_SAFE_INTEGER;

export const OrderBody = Type.Object(
  {
    service: Type.Integer({ minimum: 1, maximum: SAFE, description: 'Service id from GET /api/v1/services.' }),
    target: Type.String({ minLength: 1, maxLength: TARGET_CHARS_MAX, description: 'http(s) URL of the item to promote.' }),
    quantity: Type.Optional(
      Type.Integer({
        minimum: -SAFE,
        maximum: SAFE,
        description: "Units to order; must lie within the service's min..max. Required by the types that take it as sent; Custom Comments and Mentions Custom List orders derive it from their lines (a quantity sent must equal it), packages are one unit (a quantity sent must be 1).",
      }),
    ),
    comments: Type.Optional(
      Type.String({ maxLength: COMMENT_LINES_MAX * (COMMENT_CHARS_MAX + 2), description: `Custom Comments orders: one comment per line (at most ${COMMENT_LINES_MAX} lines of ${COMMENT_CHARS_MAX} characters).` }),
    ),
    usernames: Type.Optional(
      Type.String({ maxLength: USERNAME_LINES_MAX * (USERNAME_CHARS_MAX + 2), description: `Mentions Custom List orders: one username per line (at most ${USERNAME_LINES_MAX} lines of ${USERNAME_CHARS_MAX} characters).` }),
    ),
    answer_number: Type.Optional(Type.Integer({ minimum: -SAFE, maximum: SAFE, description: `Poll orders: the answer to vote for, 1 to ${ANSWER_NUMBER_MAX}.` })),
    username: Type.Optional(
      Type.String({ maxLength: USERNAME_CHARS_MAX + 2, description: `Comment Likes orders: the comment owner's username; Mentions User Followers orders: the account whose followers are mentioned (one word of at most ${USERNAME_CHARS_MAX} characters).` }),
    ),
    hashtags: Type.Optional(
      Type.String({ maxLength: HASHTAG_LINES_MAX * (HASHTAG_CHARS_MAX + 2), description: `Mentions with Hashtags orders: one hashtag per line (at most ${HASHTAG_LINES_MAX} lines of ${HASHTAG_CHARS_MAX} characters).` }),
    ),
    hashtag: Type.Optional(Type.String({ maxLength: HASHTAG_CHARS_MAX + 2, description: `Mentions Hashtag orders: the hashtag whose posters are mentioned (one word of at most ${HASHTAG_CHARS_MAX} characters).` })),
    media: Type.Optional(Type.String({ maxLength: URL_CHARS_MAX + 2, description: 'Mentions Media Likers orders: http(s) URL of the post whose likers are mentioned.' })),
    keywords: Type.Optional(
      Type.String({ maxLength: KEYWORD_LINES_MAX * (KEYWORD_CHARS_MAX + 2), description: `SEO orders: one search keyword per line (at most ${KEYWORD_LINES_MAX} lines of ${KEYWORD_CHARS_MAX} characters).` }),
    ),
    groups: Type.Optional(
      Type.String({ maxLength: GROUP_LINES_MAX * (GROUP_CHARS_MAX + 2), description: `Invites from Groups orders: one group (its link or name) per line (at most ${GROUP_LINES_MAX} lines of ${GROUP_CHARS_MAX} characters).` }),
    ),
    runs: Type.Optional(Type.Integer({ minimum: -SAFE, maximum: SAFE, description: `Drip-feed: number of runs, 2 to ${RUNS_MAX}; the charge is quantity × runs × rate.` })),
    interval: Type.Optional(Type.Integer({ minimum: -SAFE, maximum: SAFE, description: `Drip-feed: minutes between runs, 1 to ${INTERVAL_MINUTES_MAX}.` })),
  },
  { additionalProperties: false },
);
export type OrderBody = Static<typeof OrderBody>;

/**
 * POST /api/v1/subscription. Integers are JSON integers, as an order's
 * quantity; their ranges and the expiry's form are checked by the same
 * reader as API v2's fields (src/ledger/subscription-terms.ts), whose
 * sentences name the rule, and documented by SUBSCRIPTION_BODY_RULES.
 */
export const SubscriptionBody = Type.Object(
  {
    service: Type.Integer({ minimum: 1, maximum: SAFE, description: 'Service id from GET /api/v1/services; a service of type Subscriptions.' }),
    username: Type.String({ maxLength: USERNAME_CHARS_MAX + 2, description: `The account whose new posts are delivered to (one word of at most ${USERNAME_CHARS_MAX} characters).` }),
    min: Type.Integer({ minimum: -SAFE, maximum: SAFE, description: "The fewest units delivered to each post; min..max must lie within the service's min..max." }),
    max: Type.Integer({ minimum: -SAFE, maximum: SAFE, description: 'The most units delivered to each post; at least min.' }),
    posts: Type.Optional(Type.Integer({ minimum: -SAFE, maximum: SAFE, description: `New posts to deliver to, 0 to ${SUBSCRIPTION_POSTS_MAX}; 0 or absent: no limit.` })),
    old_posts: Type.Optional(Type.Integer({ minimum: -SAFE, maximum: SAFE, description: `Posts already made that are delivered to as well, 0 to ${SUBSCRIPTION_OLD_POSTS_MAX}; default 0.` })),
    delay: Type.Optional(Type.Integer({ minimum: -SAFE, maximum: SAFE, description: 'Minutes to wait after a post before delivering to it; default 0.' })),
    expiry: Type.Optional(
      Type.Union([Type.String({ maxLength: 10 }), Type.Null()], {
        description: `The last day (UTC) it runs, as DD/MM/YYYY, at most ${SUBSCRIPTION_EXPIRY_DAYS_MAX} days ahead; null or absent: no end.`,
      }),
    ),
  },
  { additionalProperties: false },
);

/** POST /api/v1/subscription_cancel. */
export const SubscriptionCancelBody = Type.Object(
  { subscription: Type.Integer({ minimum: 1, maximum: SAFE, description: 'The subscription id from POST /api/v1/subscription.' }) },
  { additionalProperties: false },
);

const Money = (description: string) => Type.Number({ description: `${description} Exact decimal, at most 6 decimal places.` });

/** An order's number, as v1 answers show it beside the opaque id. */
const OrderNumber = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
  description: "The order's number: grows by one with each accepted order (API v2 and panels use it as the order id); null only on orders placed before numbers existed.",
});

/** What GET /status shows of an order, alone or in a batch. */
const STATUS_FIELDS = {
  order: Type.String(),
  number: OrderNumber,
  status: Type.Union(['pending', 'processing', 'in_progress', 'completed', 'partial', 'canceled'].map((s) => Type.Literal(s))),
  quantity: Type.Integer(),
  charge: Money('Credits charged.'),
  start_count: Type.Union([Type.Integer(), Type.Null()], { description: "The target's count when delivery started, or null until the operator records it." }),
  remains: Type.Integer({ description: 'Units not (yet) delivered: quantity (× runs for a drip-feed order) until in progress, then as recorded; 0 when completed.' }),
  runs: Type.Optional(Type.Integer({ description: 'Drip-feed orders: number of runs.' })),
  interval: Type.Optional(Type.Integer({ description: 'Drip-feed orders: minutes between runs.' })),
};

export const Schemas = {
  Error: Type.Object(
    {
      ok: Type.Literal(false),
      error: Type.String({ description: 'Stable error code from the catalogue.' }),
      message: Type.String({ description: 'A plain sentence for humans.' }),
      request_id: Type.String(),
      min: Type.Optional(Type.Integer({ description: "QTY: the service's smallest quantity." })),
      max: Type.Optional(Type.Integer({ description: "QTY: the service's largest quantity." })),
      retry_after: Type.Optional(Type.Integer({ minimum: 1, description: 'RATE and UNAVAILABLE: seconds to wait, as Retry-After says.' })),
      join_link: Type.Optional(Type.String({ description: 'FORCEJOIN: the link to the Telegram channel to join.' })),
      charge: Type.Optional(Money('BALANCE: what the order costs.')),
      balance: Type.Optional(Money('BALANCE: what the wallet holds.')),
      limit: Type.Optional(Type.Integer({ description: 'VALIDATION (413): the body size limit, in bytes.' })),
    },
    { additionalProperties: false },
  ),
  Balance: Type.Object({
    ok: Type.Literal(true),
    credits: Money('Credits in the wallet.'),
    unlimited: Type.Boolean({ description: 'True while an API Unlimited window is active.' }),
    unlimited_expires: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'End of the active unlimited window (ISO 8601 UTC), or null.',
    }),
  }),
  Service: Type.Object({
    id: Type.Integer(),
    platform: Type.String(),
    name: Type.String(),
    rate: Money('Credits per unit of quantity.'),
    min: Type.Integer(),
    max: Type.Integer(),
    category: Type.String({ description: 'Grouping shown to clients.' }),
    type: Type.Union(ORDER_TYPE_NAMES.map((s) => Type.Literal(s)), { description: 'Order type: which inputs an order of this service takes.' }),
    refill: Type.Boolean({ description: 'Whether completed or partial orders may ask for a refill.' }),
    refill_days: Type.Integer({ description: 'Days after completion during which a refill may be asked for.' }),
    cancel: Type.Boolean({ description: 'Whether a pending order may be canceled by the customer.' }),
    dripfeed: Type.Boolean({ description: 'Whether orders may be drip-fed (runs, interval).' }),
    description: Type.String(),
    average_time: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: `Median time from placement to completion of its last ${SERVICE_TIMES_KEPT} completed orders, in whole seconds; null before its first.`,
    }),
  }),
  OrderPlaced: Type.Object({
    ok: Type.Literal(true),
    order: Type.String({ description: 'Opaque order id.' }),
    number: OrderNumber,
    charge: Money('quantity × rate, computed by the server.'),
    status: Type.Literal('pending'),
    balance: Money('Wallet balance after the order.'),
  }),
  OrderStatus: Type.Object({
    ok: Type.Literal(true),
    ...STATUS_FIELDS,
  }),
  Subscription: Type.Object({
    ok: Type.Literal(true),
    subscription: Type.Integer({ minimum: 1, description: 'The subscription id: a number of the orders\' sequence, the id API v2 and the operator use too.' }),
    service: Type.Integer(),
    status: Type.Union(SUBSCRIPTION_STATUSES.map((s) => Type.Literal(s)), {
      description: 'Active; Paused (a post found too few credits; the next post the wallet can pay for resumes it); Completed, Expired and Canceled are final.',
    }),
    username: Type.String(),
    min: Type.Integer(),
    max: Type.Integer(),
    posts: Type.Integer({ description: 'New posts asked for; 0: no limit.' }),
    old_posts: Type.Integer(),
    delay: Type.Integer({ description: 'Minutes.' }),
    expiry: Type.Union([Type.String(), Type.Null()], { description: 'The last day it runs (DD/MM/YYYY, UTC), or null for no end.' }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it ends (ISO 8601 UTC), or null.' }),
    rate: Money('Credits per unit, fixed when it was placed: every post is charged at it.'),
    posts_done: Type.Integer({ minimum: 0, description: 'Posts delivered to so far, each an order.' }),
    orders: Type.Array(
      Type.Object({
        order: Type.String({ description: 'The order id, as GET /api/v1/status takes it.' }),
        number: OrderNumber,
        status: STATUS_FIELDS.status,
        charge: Money('quantity × the fixed rate.'),
      }),
      { maxItems: SUBSCRIPTION_ORDERS_KEPT, description: `Its latest ${SUBSCRIPTION_ORDERS_KEPT} orders, one per post, oldest first.` },
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  }),
};

/** Cancel and refill bodies: the orders to act on. */
const OrderIdList = Type.Object(
  { orders: Type.Array(Type.String(), { minItems: 1, maxItems: BATCH_IDS_MAX, description: `Order ids, at most ${BATCH_IDS_MAX}.` }) },
  { additionalProperties: false },
);

/** A per-order (or per-refill) refusal inside a batch answer. */
const ItemError = Type.Object({
  error: Type.String({ description: 'NOT_FOUND (unknown or another account\'s), VALIDATION (not an id), CONFLICT (the order\'s state does not allow it; the message says why) or UNAVAILABLE.' }),
  message: Type.String(),
});

const keyedBy = (field: string, item: TSchema, description: string) =>
  Type.Object({ ok: Type.Literal(true), [field]: Type.Record(Type.String(), Type.Union([item, ItemError]), { description }) });

/** One order's status without the envelope: an entry of a batch status, and a webhook message's data. */
export const OrderStatusItem = Type.Object(STATUS_FIELDS);

/** One refill's status: an entry of GET /refill_status, and a webhook message's data. */
export const RefillStatusItem = Type.Object({
  refill: Type.Integer({ minimum: 1 }),
  order: Type.String(),
  status: Type.Union(REFILL_STATUSES.map((s) => Type.Literal(s))),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  reason: Type.Optional(Type.String({ description: "The operator's reason, when given." })),
});

export const LifecycleSchemas = {
  OrderIdList,
  BatchStatus: keyedBy('orders', OrderStatusItem, 'Keyed by the ids asked for.'),
  CancelResult: keyedBy(
    'orders',
    Type.Object({
      status: Type.String({ description: 'canceled (refunded at once) or the current status (a cancel request was opened).' }),
      refund: Type.Optional(Money('Credits returned (the whole debit) when canceled at once.')),
      cancel_requested: Type.Optional(Type.Literal(true)),
    }),
    'Keyed by the ids asked for.',
  ),
  RefillResult: keyedBy('orders', Type.Object({ refill: Type.Integer({ minimum: 1, description: 'The new refill id.' }) }), 'Keyed by the order ids asked for.'),
  RefillStatus: keyedBy('refills', RefillStatusItem, 'Keyed by the refill ids asked for.'),
};

export const ServicesList = Type.Object({ ok: Type.Literal(true), services: Type.Array(Schemas.Service) });

/** A compiled validator that turns the first failure into a plain sentence. */
export interface Validator<T> {
  check(value: unknown): { ok: true; value: T } | { ok: false; error: ErrorOutcome };
}

export function compile<S extends TSchema>(schema: S): Validator<Static<S>> {
  const checker: TypeCheck<S> = TypeCompiler.Compile(schema);
  const known = new Set(Object.keys((schema as { properties?: object }).properties ?? {}));
  const required = (schema as { required?: string[] }).required ?? [];
  return {
    check(value) {
      if (checker.Check(value)) return { ok: true, value };
      return { ok: false, error: errorOutcome('VALIDATION', describe(value, known, required, checker)) };
    },
  };
}

function describe(value: unknown, known: Set<string>, required: string[], checker: TypeCheck<TSchema>): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'The request body must be a JSON object.';
  for (const key of Object.keys(value)) {
    if (!known.has(key)) return `Field '${key}' is not allowed; the server computes prices and accepts only ${[...known].join(', ')}.`;
  }
  for (const key of required) if (!(key in value)) return `Field '${key}' is required.`;
  const first = checker.Errors(value).First();
  if (first === undefined) return 'The request body is invalid.';
  const field = first.path.replace(/^\//, '');
  const got = (value as Record<string, unknown>)[field];
  if (typeof got === 'number' && !Number.isSafeInteger(got) && Number.isInteger(got)) {
    return `Field '${field}' is too large; it must be an integer of at most ${SAFE}.`;
  }
  return `Field '${field}' is invalid: ${first.message.charAt(0).toLowerCase()}${first.message.slice(1)}.`;
}

const WebhookEventName = Type.Union([Type.Literal('order.updated'), Type.Literal('refill.updated')]);

/** Webhook endpoints (documentation; the handler reads the body with src/webhooks/endpoint-input.ts, whose sentences say more). */
export const WebhookSchemas = {
  WebhookBody: Type.Object(
    {
      url: Type.String({ maxLength: URL_CHARS_MAX, description: 'https URL that receives the notifications (http only when the operator allows it); public addresses only.' }),
      events: Type.Optional(Type.Array(WebhookEventName, { minItems: 1, uniqueItems: true, description: 'Event types wanted; default ["order.updated"].' })),
      enabled: Type.Optional(Type.Boolean({ description: 'Default true.' })),
    },
    { additionalProperties: false },
  ),
  Webhook: Type.Object({
    id: Type.Integer({ minimum: 1 }),
    url: Type.String(),
    events: Type.Array(WebhookEventName),
    enabled: Type.Boolean(),
    failing: Type.Boolean({ description: 'A message failed for the retry window (24 h, counted from its first failed attempt); deliveries resume when the operator replays the endpoint.' }),
    failing_since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    secret: Type.Optional(
      Type.String({ description: 'whsec_…: the Standard Webhooks signing secret. Shown only in the answer that creates or rotates it; store it now.' }),
    ),
  }),
};

export const WebhookList = Type.Object({ ok: Type.Literal(true), webhooks: Type.Array(WebhookSchemas.Webhook) });
export const WebhookAnswer = Type.Object({ ok: Type.Literal(true), webhook: WebhookSchemas.Webhook });
