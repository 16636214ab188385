/**
 * A webhook endpoint and its delivery log as JSON text: the owner's view
 * (API v1) and the operator's (admin API) differ only in `account`.
 */
import type { DeliveryAttempt, WebhookEndpoint } from './records.js';

/**
 * A webhook endpoint as its owner sees it; `secret` only in the answer that
 * created or rotated it (the one time it is shown), `account` in the
 * operator's views.
 */
export function renderWebhook(e: WebhookEndpoint, extra: { secret?: string; account?: boolean } = {}): string {
  return (
    `{"id":${e.id},` +
    (extra.account === true ? `"account":${e.account},` : '') +
    `"url":${JSON.stringify(e.url)},"events":${JSON.stringify(e.events)},"enabled":${e.enabled},` +
    `"failing":${e.failingSinceMs !== null},"failing_since":${e.failingSinceMs === null ? 'null' : `"${new Date(e.failingSinceMs).toISOString()}"`},` +
    `"created_at":"${new Date(e.createdAtMs).toISOString()}"` +
    (extra.secret === undefined ? '' : `,"secret":${JSON.stringify(extra.secret)}`) +
    '}'
  );
}

/** One attempt in an endpoint's delivery log. */
export function renderDeliveryAttempt(a: DeliveryAttempt): string {
  return (
    `{"at":"${new Date(a.atMs).toISOString()}","message":"${a.message}","type":"${a.type}","order":${JSON.stringify(a.subject)},` +
    `"attempt":${a.attempt},"outcome":"${a.outcome}","status":${a.status ?? null},"error":${a.error === null ? 'null' : JSON.stringify(a.error)},"duration_ms":${a.durationMs}}`
  );
}
