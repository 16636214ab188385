/**
 * The OpenAPI 3.1 document, built from the same TypeBox schemas the server
 * validates with. `docs/openapi.json` is this document, committed; a test
 * fails when the two differ (`npm run openapi` rewrites it).
 */
import { ERRORS } from '../errors.js';
import { VERSION } from '../version.js';
import { IDEMPOTENCY_KEY_CHARS_MAX } from './idempotency-key.js';
import { OrderBody, Schemas, ServicesList } from './schemas.js';

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
      schemas: { ...Schemas, OrderBody, ServicesList },
    },
    paths: {
      '/api/v1/balance': {
        get: {
          summary: 'Wallet balance and unlimited-plan window',
          responses: { '200': { description: 'Balance', ...json({ $ref: '#/components/schemas/Balance' }) }, ...errors(...COMMON) },
        },
      },
      '/api/v1/services': {
        get: {
          summary: 'Enabled services',
          responses: { '200': { description: 'Services', ...json({ $ref: '#/components/schemas/ServicesList' }) }, ...errors(...COMMON) },
        },
      },
      '/api/v1/order': {
        post: {
          summary: 'Place an order; the server computes charge = quantity × rate',
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
          summary: 'Status of one of your orders',
          parameters: [{ name: 'order', in: 'query', required: true, schema: { type: 'string' } }],
          responses: {
            '200': { description: 'Order status', ...json({ $ref: '#/components/schemas/OrderStatus' }) },
            ...errors(...COMMON, 'VALIDATION', 'NOT_FOUND'),
          },
        },
      },
      '/api/v1/openapi.json': {
        get: { summary: 'This document', security: [], responses: { '200': { description: 'OpenAPI 3.1 document' } } },
      },
    },
  };
}

/** The committed form of the document: pretty-printed, newline-terminated. */
export function openApiText(): string {
  return JSON.stringify(buildOpenApi(VERSION), null, 2) + '\n';
}
