/**
 * The OpenAPI 3.1 document, built from the same TypeBox schemas the server
 * validates with, the rules it checks beyond them (openapi-rules.ts), the
 * statuses and headers it answers with (openapi-responses.ts) and the
 * notifications it posts (openapi-webhooks.ts). `docs/openapi.json` is this
 * document, committed; a test fails when the two differ (`npm run openapi`
 * rewrites it), and the test helpers check every v1 response the HTTP tests
 * receive against it.
 */
import { VERSION } from '../../platform/index.js';
import { IDEMPOTENCY_KEY_CHARS_MAX } from '../limits.js';
import { ORDER_ID_PATTERN } from '../../ids/index.js';
import { LifecycleSchemas, OrderBody, Schemas, ServicesList, SubscriptionBody, SubscriptionCancelBody, WebhookAnswer, WebhookList, WebhookSchemas } from '../orders/schemas.js';
import { BATCH_IDS_MAX } from '../../ledger/index.js';
import { BODY, COMMON, HEADERS, json, publicAnswer, refusals, ROUTE_RESPONSES, success, type Refusal } from './openapi-responses.js';
import { closed, ORDER_BODY_RULES, SUBSCRIPTION_BODY_RULES, WEBHOOK_BODY_RULES, withRules } from './openapi-rules.js';
import { webhookNotifications, WebhookMessageSchemas } from './openapi-webhooks.js';

const errors = (...codes: Refusal[]) => refusals([...COMMON, ...codes]);
/** The refusals of an order that its Idempotency-Key remembers, replayed like a success. */
const REMEMBERED: readonly Refusal[] = ['BALANCE', 'SERVICE', 'QTY', 'FORCEJOIN'];
/** The same for a subscription, which moves no money at placement. */
const REMEMBERED_SUBSCRIPTION: readonly Refusal[] = ['SERVICE', 'QTY', 'FORCEJOIN'];
const bodyErrors = (...codes: Refusal[]) => refusals([...COMMON, ...BODY, ...codes]);

/** An Idempotency-Key: 1 to 255 printable ASCII characters, bare or as a structured-field string (quoted, with \" and \\ escapes). */
const IDEMPOTENCY_KEY_PATTERN = `^(?:[\\x20-\\x7e]{1,${IDEMPOTENCY_KEY_CHARS_MAX}}|"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\["\\\\]){1,${IDEMPOTENCY_KEY_CHARS_MAX}}")$`;

/** A comma-separated list of at most BATCH_IDS_MAX ids in one query parameter (`orders=a,b`). */
const idList = (name: string, what: string, items: unknown, required: boolean) => ({
  name,
  in: 'query',
  required,
  style: 'form',
  explode: false,
  description: `Comma-separated ${what}, at most ${BATCH_IDS_MAX} (blank entries are skipped, repeats are answered once). Each is answered on its own.`,
  schema: { type: 'array', items, minItems: 1, maxItems: BATCH_IDS_MAX },
});

/** Balance and services. */
function walletPaths(): Record<string, unknown> {
  return {
    '/api/v1/balance': {
      get: {
        operationId: 'getBalance',
        summary: 'Wallet balance and unlimited-plan window',
        responses: { '200': success('Balance', { $ref: '#/components/schemas/Balance' }), ...errors() },
      },
    },
    '/api/v1/services': {
      get: {
        operationId: 'listServices',
        summary: 'Enabled services, with what clients choose by (category, type, refill, cancel, dripfeed)',
        responses: { '200': success('Services', { $ref: '#/components/schemas/ServicesList' }), ...errors() },
      },
    },
  };
}

/** Placing an order and reading its status. */
function orderPaths(): Record<string, unknown> {
  return {
    '/api/v1/order': {
      post: {
        operationId: 'placeOrder',
        summary: "Place an order; the server computes charge = quantity × rate (× runs when drip-fed); the service's type says which inputs it takes",
        parameters: [idempotencyKeyParameter('order')],
        requestBody: { required: true, ...json({ $ref: '#/components/schemas/OrderBody' }) },
        responses: {
          '201': success('Order placed (durable)', { $ref: '#/components/schemas/OrderPlaced' }, ['Idempotent-Replayed']),
          ...refusals([...COMMON, ...BODY, ...REMEMBERED, 'IDEMPOTENCY'], { headers: ['Idempotent-Replayed'], on: REMEMBERED }),
        },
      },
    },
    '/api/v1/status': {
      get: {
        operationId: 'getOrderStatus',
        summary: `Status of one of your orders (order=ID), or of up to ${BATCH_IDS_MAX} (orders=ID1,ID2: one request for the rate limit, answered per order)`,
        parameters: [
          { name: 'order', in: 'query', required: false, description: 'One order id. Send this or orders, not both.', schema: { type: 'string', pattern: ORDER_ID_PATTERN.source } },
          idList('orders', 'order ids (send this or order, not both)', { type: 'string' }, false),
        ],
        responses: {
          '200': success('Order status (order=), or a map of order id to status or {error, message} (orders=)', {
            oneOf: [{ $ref: '#/components/schemas/OrderStatus' }, { $ref: '#/components/schemas/BatchStatus' }],
          }),
          ...errors('NOT_FOUND'),
        },
      },
    },
  };
}

/** The Idempotency-Key header of a POST that places something: `what` is placed once, whatever the retries. */
function idempotencyKeyParameter(what: string): Record<string, unknown> {
  return {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: `1 to ${IDEMPOTENCY_KEY_CHARS_MAX} printable ASCII characters (or the same as a quoted structured-field string). The same key with the same payload returns the original answer with Idempotent-Replayed: true, after a restart too; the same key with another payload is refused (422 IDEMPOTENCY). Two requests with one key at once place one ${what}: the second waits for the first and replays its answer.`,
    schema: { type: 'string', minLength: 1, pattern: IDEMPOTENCY_KEY_PATTERN },
  };
}

/** Placing, reading and canceling a subscription; its id is its number, as in API v2. */
function subscriptionPaths(): Record<string, unknown> {
  const subscription = { $ref: '#/components/schemas/Subscription' };
  return {
    '/api/v1/subscription': {
      post: {
        operationId: 'placeSubscription',
        summary:
          "Place a subscription on a service of type Subscriptions: min..max units on each new post of username. It charges nothing; each post the operator's processing finds becomes an order of its own, charged quantity × the rate fixed now (a post the wallet cannot pay for pauses it)",
        parameters: [idempotencyKeyParameter('subscription')],
        requestBody: { required: true, ...json({ $ref: '#/components/schemas/SubscriptionBody' }) },
        responses: {
          '201': success('Subscription placed (durable)', subscription, ['Idempotent-Replayed']),
          ...refusals([...COMMON, ...BODY, ...REMEMBERED_SUBSCRIPTION, 'IDEMPOTENCY'], { headers: ['Idempotent-Replayed'], on: REMEMBERED_SUBSCRIPTION }),
        },
      },
    },
    '/api/v1/subscription_status': {
      get: {
        operationId: 'getSubscriptionStatus',
        summary: 'One of your subscriptions: its terms, status, posts delivered to and latest orders',
        parameters: [{ name: 'subscription', in: 'query', required: true, description: 'The subscription id.', schema: { type: 'integer', minimum: 1 } }],
        responses: { '200': success('The subscription', subscription), ...errors('NOT_FOUND') },
      },
    },
    '/api/v1/subscription_cancel': {
      post: {
        operationId: 'cancelSubscription',
        summary: 'Cancel one of your subscriptions: it takes no more posts; its orders so far are left as they are (cancel each with POST /api/v1/cancel)',
        requestBody: { required: true, ...json({ $ref: '#/components/schemas/SubscriptionCancelBody' }) },
        responses: {
          '200': success('Canceled (durable)', subscription),
          ...bodyErrors('NOT_FOUND', 'CONFLICT'),
        },
      },
    },
  };
}

/** Cancel, refill and refill status, each for many orders at once. */
function lifecyclePaths(): Record<string, unknown> {
  return {
    '/api/v1/cancel': {
      post: {
        operationId: 'cancelOrders',
        summary: `Cancel up to ${BATCH_IDS_MAX} orders: a pending order of a service with cancel is canceled and refunded at once; a processing or in_progress one gets a cancel request the operator resolves`,
        requestBody: { required: true, ...json({ $ref: '#/components/schemas/OrderIdList' }) },
        responses: {
          '200': success('Per order: the outcome, or {error, message} saying why not (durable)', { $ref: '#/components/schemas/CancelResult' }),
          ...bodyErrors(),
        },
      },
    },
    '/api/v1/refill': {
      post: {
        operationId: 'refillOrders',
        summary: `Ask for a refill of up to ${BATCH_IDS_MAX} completed or partial orders of refill services, within refill_days of completion; no money moves`,
        requestBody: { required: true, ...json({ $ref: '#/components/schemas/OrderIdList' }) },
        responses: {
          '200': success('Per order: the new refill id, or {error, message} saying why not (durable)', { $ref: '#/components/schemas/RefillResult' }),
          ...bodyErrors(),
        },
      },
    },
    '/api/v1/refill_status': {
      get: {
        operationId: 'getRefillStatus',
        summary: `Status of up to ${BATCH_IDS_MAX} of your refills`,
        parameters: [idList('refills', 'refill ids', { type: 'integer', minimum: 1 }, true)],
        responses: {
          '200': success('Per refill: its status, or {error, message}', { $ref: '#/components/schemas/RefillStatus' }),
          ...errors(),
        },
      },
    },
  };
}

/** The customer's webhook endpoints. */
function webhookPaths(): Record<string, unknown> {
  return {
    '/api/v1/webhooks': {
      get: {
        operationId: 'listWebhooks',
        summary: 'Your webhook endpoints (secrets are never shown again)',
        responses: { '200': success('Endpoints', { $ref: '#/components/schemas/WebhookList' }), ...errors() },
      },
      post: {
        operationId: 'createWebhook',
        summary:
          'Register an endpoint for signed notifications (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature). Each change of one of your orders or refills is posted as {type, timestamp, data}, data being the order as GET /api/v1/status shows it; at least once, in order per order, retried for 24 hours',
        requestBody: { required: true, ...json({ $ref: '#/components/schemas/WebhookBody' }) },
        responses: {
          '201': success('Registered (durable); the answer carries the secret, once', { $ref: '#/components/schemas/WebhookAnswer' }),
          ...bodyErrors(),
        },
      },
    },
    '/api/v1/webhooks/{id}': {
      delete: {
        operationId: 'deleteWebhook',
        summary: 'Delete an endpoint; nothing more is sent to it',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
        responses: {
          '200': success('Deleted (durable)', {
            type: 'object',
            required: ['ok', 'deleted'],
            additionalProperties: false,
            properties: { ok: { const: true }, deleted: { type: 'integer', minimum: 1 } },
          }),
          ...errors('NOT_FOUND'),
        },
      },
    },
    '/api/v1/webhooks/{id}/rotate': {
      post: {
        operationId: 'rotateWebhookSecret',
        summary: 'A new signing secret (shown once); for 24 hours messages carry signatures by both the new and the old secret',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
        responses: {
          '200': success('Rotated (durable)', { $ref: '#/components/schemas/WebhookAnswer' }),
          ...errors('NOT_FOUND'),
        },
      },
    },
  };
}

export function buildOpenApi(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'credit-order-api',
      version,
      description:
        'Credit wallet, services, orders and order status. Money values are exact decimals (at most 6 decimal places). ' +
        'Every response carries Request-Id; every response that counted against a key carries RateLimit-Policy and RateLimit, and X-RateLimit-* too where the operator turned them on (RATE_LIMIT_HEADERS=both). ' +
        'A path the API does not serve is answered as components.responses.NotFound, a method a path does not take as components.responses.MethodNotAllowed.',
    },
    servers: [{ url: '/', description: 'The server this document was fetched from (GET /api/v1/openapi.json).' }],
    security: [{ apiKey: [], apiSecret: [] }],
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        apiSecret: { type: 'apiKey', in: 'header', name: 'X-API-Secret' },
      },
      headers: HEADERS,
      responses: ROUTE_RESPONSES,
      schemas: closed({
        ...Schemas,
        ...LifecycleSchemas,
        OrderBody: withRules(OrderBody, ORDER_BODY_RULES),
        SubscriptionBody: withRules(SubscriptionBody, SUBSCRIPTION_BODY_RULES),
        SubscriptionCancelBody,
        ServicesList,
        ...WebhookSchemas,
        WebhookBody: withRules(WebhookSchemas.WebhookBody, WEBHOOK_BODY_RULES),
        WebhookList,
        WebhookAnswer,
        ...WebhookMessageSchemas,
      }),
    },
    webhooks: webhookNotifications(),
    paths: {
      ...walletPaths(),
      ...orderPaths(),
      ...lifecyclePaths(),
      ...subscriptionPaths(),
      ...webhookPaths(),
      '/api/v1/openapi.json': {
        get: {
          operationId: 'getOpenApi',
          summary: 'This document',
          security: [],
          responses: { '200': publicAnswer('OpenAPI 3.1 document', { type: 'object', required: ['openapi', 'paths'] }) },
        },
      },
    },
  };
}

/** The committed form of the document: pretty-printed, newline-terminated. */
export function openApiText(): string {
  return JSON.stringify(buildOpenApi(VERSION), null, 2) + '\n';
}
