/**
 * What a reseller's webhook hears of a claim's lease: the claim (processing)
 * and the order's return to the queue (pending again), each as the status
 * read shows it; an extension changes nothing the customer sees and sends
 * nothing.
 */
import { describe, expect, it } from 'vitest';
import { order } from '../helpers/server.js';
import { useWebhookTest } from '../helpers/webhook-setup.js';

const w = useWebhookTest({ random: 0.5 });
const { t } = w;

describe('webhooks of claim leases', () => {
  it('tells of the claim and of the return to pending, not of an extension', async () => {
    await w.register('/hook', ['order.updated']);
    const id = (await t.api('POST', '/api/v1/order', w.creds, order(w.service, 5))).body.order as string;
    expect((await t.admin('POST', '/admin/v1/orders/claim', { limit: 1, worker: 'w1', lease_seconds: 60 })).body.orders).toHaveLength(1);
    expect((await t.admin('POST', `/admin/v1/orders/${id}/extend`, { worker: 'w1', lease_seconds: 120 })).status).toBe(200);
    expect((await t.admin('POST', `/admin/v1/orders/${id}/release`, { worker: 'w1' })).status).toBe(200);
    await t.server.webhooks.dispatcher.idle();
    await w.receiver.waitFor((r) => r.filter((x) => x.answered === 'ok').length === 3);
    // An extension would have been a fourth message; the dispatcher is idle, so none is on its way.
    const statuses = w.receiver.received.filter((x) => x.answered === 'ok').map((x) => x.json.data['status']);
    expect(statuses).toEqual(['pending', 'processing', 'pending']);
    expect(w.receiver.received.every((x) => x.verified)).toBe(true);
  });
});
