/**
 * The notifications the server posts to a customer's endpoints, as the
 * OpenAPI 3.1 `webhooks` of the document: one per event type, each the
 * Standard Webhooks envelope `{type, timestamp, data}` (src/webhooks/message.ts)
 * with `data` the record GET /api/v1/status or GET /api/v1/refill_status
 * shows, and the three signature headers.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { OrderStatusItem, RefillStatusItem } from '../orders/schemas.js';
import { json } from './openapi-responses.js';

const SIGNATURE_HEADERS = [
  { name: 'webhook-id', description: 'The message id: the same on every retry of this message; use it to drop duplicates.', schema: { type: 'string', minLength: 1 } },
  { name: 'webhook-timestamp', description: 'Seconds since the Unix epoch when this attempt was signed; refuse ones far from your clock.', schema: { type: 'string', pattern: '^[0-9]+$' } },
  {
    name: 'webhook-signature',
    description: 'Space-separated v1,<base64 HMAC-SHA256> signatures of "<webhook-id>.<webhook-timestamp>.<body>", one per active secret (two for 24 hours after a rotation).',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$' },
  },
].map((header) => ({ ...header, in: 'header', required: true }));

function envelope(type: string, data: TSchema): TSchema {
  return Type.Object(
    {
      type: Type.Literal(type),
      timestamp: Type.String({ format: 'date-time', description: 'When the change was made.' }),
      data,
    },
    { additionalProperties: false },
  );
}

/** The message schemas, as components.schemas. */
export const WebhookMessageSchemas = {
  OrderUpdated: envelope('order.updated', OrderStatusItem),
  RefillUpdated: envelope('refill.updated', RefillStatusItem),
};

function notification(operationId: string, summary: string, schema: string): Record<string, unknown> {
  return {
    post: {
      operationId,
      summary,
      security: [],
      parameters: SIGNATURE_HEADERS,
      requestBody: { required: true, ...json({ $ref: `#/components/schemas/${schema}` }) },
      responses: {
        '2XX': { description: 'Received. Any other status, a redirect, or no answer within the timeout is a failed attempt, retried for 24 hours.' },
      },
    },
  };
}

export function webhookNotifications(): Record<string, unknown> {
  return {
    'order.updated': notification('orderUpdated', "One of your orders changed (placed, moved, refunded): data is the order as GET /api/v1/status shows it.", 'OrderUpdated'),
    'refill.updated': notification('refillUpdated', 'One of your refills changed: data is the refill as GET /api/v1/refill_status shows it.', 'RefillUpdated'),
  };
}
