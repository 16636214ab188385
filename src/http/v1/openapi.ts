/**
 * The OpenAPI 3.1 document, built from the same TypeBox schemas the server
 * validates with. `docs/openapi.json` is this document, committed; a test
 * fails when the two differ (`npm run openapi` rewrites it).
 */
import { ERRORS } from '../../errors/index.js';
import { VERSION } from '../../platform/index.js';
import { IDEMPOTENCY_KEY_CHARS_MAX } from '../limits.js';
import { LifecycleSchemas, OrderBody, Schemas, ServicesList, WebhookAnswer, WebhookList, WebhookSchemas } from '../orders/schemas.js';
import { BATCH_IDS_MAX } from '../../ledger/index.js';

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });

function errors(...codes: (keyof typeof ERRORS)[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const code of codes) {
    const status = String(ERRORS[code].status);
    const previous = out[status] as { description: string } | undefined;
    const description = previous === undefined ? `${code}: ${ERRORS[code].meaning}` : `${previous.description} ${code}: ${ERRORS[code].meaning}`;
    out[status] = { description, ...json({ $ref: '#/components/schemas/Error' }) };
  }
  return out;
}

const COMMON = ['AUTH', 'BANNED', 'RATE', 'UNAVAILABLE'] as const;

/** Balance and services. */
function walletPaths(): Record<string, unknown> {
  return {
    '/api/v1/balance': {
      get: {
        operationId: 'getBalance',
        summary: 'Wallet balance and unlimited-plan window',
        responses: { '200': { description: 'Balance', ...json({ $ref: '#/components/schemas/Balance' }) }, ...errors(...COMMON) },
      },
    },
    '/api/v1/services': {
      get: {
        operationId: 'listServices',
        summary: 'Enabled services, with what clients choose by (category, type, refill, cancel, dripfeed)',
        responses: { '200': { description: 'Services', ...json({ $ref: '#/components/schemas/ServicesList' }) }, ...errors(...COMMON) },
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
        parameters: [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description: `1 to ${IDEMPOTENCY_KEY_CHARS_MAX} printable ASCII characters. The same key with the same payload returns the original answer with Idempotent-Replayed: true.`,
            schema: { type: 'string', maxLength: IDEMPOTENCY_KEY_CHARS_MAX },
          },
        ],
        requestBody: { required: true, ...json({ $ref: '#/components/schemas/OrderBody' }) },
        responses: {
          '201': { description: 'Order placed (durable)', ...json({ $ref: '#/components/schemas/OrderPlaced' }) },
          ...errors(...COMMON, 'VALIDATION', 'BALANCE', 'SERVICE', 'QTY', 'FORCEJOIN', 'IDEMPOTENCY'),
        },
      },
    },
    '/api/v1/status': {
      get: {
        operationId: 'getOrderStatus',
        summary: `Status of one of your orders (order=ID), or of up to ${BATCH_IDS_MAX} (orders=ID1,ID2: one request for the rate limit, answered per order)`,
        parameters: [
          { name: 'order', in: 'query', required: false, description: 'One order id. Send this or orders.', schema: { type: 'string' } },
          { name: 'orders', in: 'query', required: false, description: `Comma-separated order ids, at most ${BATCH_IDS_MAX}.`, schema: { type: 'string' } },
        ],
        responses: {
          '200': {
            description: 'Order status (order=), or a map of order id to status or {error, message} (orders=)',
            ...json({ oneOf: [{ $ref: '#/components/schemas/OrderStatus' }, { $ref: '#/components/schemas/BatchStatus' }] }),
          },
          ...errors(...COMMON, 'VALIDATION', 'NOT_FOUND'),
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
          '200': { description: 'Per order: the outcome, or {error, message} saying why not (durable)', ...json({ $ref: '#/components/schemas/CancelResult' }) },
          ...errors(...COMMON, 'VALIDATION'),
        },
      },
    },
    '/api/v1/refill': {
      post: {
        operationId: 'refillOrders',
        summary: `Ask for a refill of up to ${BATCH_IDS_MAX} completed or partial orders of refill services, within refill_days of completion; no money moves`,
        requestBody: { required: true, ...json({ $ref: '#/components/schemas/OrderIdList' }) },
        responses: {
          '200': { description: 'Per order: the new refill id, or {error, message} saying why not (durable)', ...json({ $ref: '#/components/schemas/RefillResult' }) },
          ...errors(...COMMON, 'VALIDATION'),
        },
      },
    },
    '/api/v1/refill_status': {
      get: {
        operationId: 'getRefillStatus',
        summary: `Status of up to ${BATCH_IDS_MAX} of your refills`,
        parameters: [{ name: 'refills', in: 'query', required: true, description: `Comma-separated refill ids, at most ${BATCH_IDS_MAX}.`, schema: { type: 'string' } }],
        responses: {
          '200': { description: 'Per refill: its status, or {error, message}', ...json({ $ref: '#/components/schemas/RefillStatus' }) },
          ...errors(...COMMON, 'VALIDATION'),
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
        responses: { '200': { description: 'Endpoints', ...json({ $ref: '#/components/schemas/WebhookList' }) }, ...errors(...COMMON) },
      },
      post: {
        operationId: 'createWebhook',
        summary:
          'Register an endpoint for signed notifications (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature). Each change of one of your orders or refills is posted as {type, timestamp, data}, data being the order as GET /api/v1/status shows it; at least once, in order per order, retried for 24 hours',
        requestBody: { required: true, ...json({ $ref: '#/components/schemas/WebhookBody' }) },
        responses: {
          '201': { description: 'Registered (durable); the answer carries the secret, once', ...json({ $ref: '#/components/schemas/WebhookAnswer' }) },
          ...errors(...COMMON, 'VALIDATION'),
        },
      },
    },
    '/api/v1/webhooks/{id}': {
      delete: {
        operationId: 'deleteWebhook',
        summary: 'Delete an endpoint; nothing more is sent to it',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
        responses: {
          '200': { description: 'Deleted (durable)', ...json({ type: 'object', properties: { ok: { const: true }, deleted: { type: 'integer' } } }) },
          ...errors(...COMMON, 'VALIDATION', 'NOT_FOUND'),
        },
      },
    },
    '/api/v1/webhooks/{id}/rotate': {
      post: {
        operationId: 'rotateWebhookSecret',
        summary: 'A new signing secret (shown once); for 24 hours messages carry signatures by both the new and the old secret',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
        responses: {
          '200': { description: 'Rotated (durable)', ...json({ $ref: '#/components/schemas/WebhookAnswer' }) },
          ...errors(...COMMON, 'VALIDATION', 'NOT_FOUND'),
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
        'Every response carries Request-Id; every authenticated response carries RateLimit-Policy, RateLimit and X-RateLimit-* headers.',
    },
    servers: [{ url: 'http://127.0.0.1:8080' }],
    security: [{ apiKey: [], apiSecret: [] }],
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        apiSecret: { type: 'apiKey', in: 'header', name: 'X-API-Secret' },
      },
      schemas: { ...Schemas, ...LifecycleSchemas, OrderBody, ServicesList, ...WebhookSchemas, WebhookList, WebhookAnswer },
    },
    paths: {
      ...walletPaths(),
      ...orderPaths(),
      ...lifecyclePaths(),
      ...webhookPaths(),
      '/api/v1/openapi.json': {
        get: {
          operationId: 'getOpenApi',
          summary: 'This document',
          security: [],
          responses: { '200': { description: 'OpenAPI 3.1 document' }, ...errors('NOT_FOUND') },
        },
      },
    },
  };
}

/** The committed form of the document: pretty-printed, newline-terminated. */
export function openApiText(): string {
  return JSON.stringify(buildOpenApi(VERSION), null, 2) + '\n';
}
