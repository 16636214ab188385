/**
 * A subscription as API v1 shows it, placed, read or canceled: its id (its
 * number, the id API v2 and the operator use too), its terms with the
 * field names it is placed with, the rate it fixed, its status, the posts
 * delivered to so far and its latest orders, each with its v1 id, number,
 * status and charge. Money as exact decimals; the expiry both as the
 * DD/MM/YYYY day it runs through and as the instant it ends (ISO 8601 UTC).
 */
import { expiryText, type OrderRecord, type SubscriptionRecord } from '../ledger/index.js';
import { formatMicro } from '../money/index.js';

const iso = (ms: number): string => `"${new Date(ms).toISOString()}"`;

function renderSubscriptionOrder(order: OrderRecord): string {
  return `{"order":"${order.id}","number":${order.number ?? null},"status":"${order.status}","charge":${formatMicro(order.charge)}}`;
}

/** `orders`: the subscription's latest orders as stored, oldest first (none at placement). */
export function renderSubscription(s: SubscriptionRecord, orders: readonly OrderRecord[]): string {
  return (
    `{"ok":true,"subscription":${s.id},"service":${s.service},"status":"${s.status}","username":${JSON.stringify(s.username)},"min":${s.min},"max":${s.max},` +
    `"posts":${s.posts},"old_posts":${s.oldPosts},"delay":${s.delayMinutes},"expiry":${s.expiryMs === null ? null : `"${expiryText(s.expiryMs)}"`},` +
    `"expires_at":${s.expiryMs === null ? null : iso(s.expiryMs)},"rate":${formatMicro(s.rate)},"posts_done":${s.postsDone},` +
    `"orders":[${orders.map(renderSubscriptionOrder).join(',')}],"created_at":${iso(s.createdAtMs)},"updated_at":${iso(s.updatedAtMs)}}`
  );
}
