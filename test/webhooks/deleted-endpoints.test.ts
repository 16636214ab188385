/**
 * What a deleted endpoint leaves behind: nothing. A customer who repeats
 * create endpoint → place order → delete endpoint must not grow the
 * dispatcher's memory or the disk, whatever the endpoint's last delivery
 * did (delivered, failed and held, or still in flight at the deletion).
 * Real server, real LMDB, a real local receiver.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/wal/index.js';
import type { DeliveryAttempt } from '../../src/webhooks/index.js';
import { order } from '../helpers/server.js';
import { startWebhookTest, type WebhookTest } from '../helpers/webhook-setup.js';
import type { Behaviour } from '../helpers/webhook-receiver.js';

let setup: WebhookTest | null = null;

afterEach(async () => {
  setup?.receiver.releaseHung();
  await setup?.close();
  setup = null;
});

/** The receiver's answers the deleted endpoints get, one per cycle: the delivery settled, held after a failure, and in flight when deleted. */
const LAST_DELIVERIES: Behaviour[] = ['ok', 'fail', 'hang', 'ok', 'fail', 'hang'];

/** Registers an endpoint, places an order it is told of, waits for the attempt and deletes the endpoint, once per entry of LAST_DELIVERIES; returns the deleted ids. */
async function cycles(s: WebhookTest): Promise<number[]> {
  const { t, receiver, creds, service, register } = s;
  const deleted: number[] = [];
  for (const [i, behaviour] of LAST_DELIVERIES.entries()) {
    const path = `/gone-${i}`;
    receiver.behaveOn(path, behaviour);
    const id = await register(path, ['order.updated']);
    expect((await t.api('POST', '/api/v1/order', creds, order(service, 5))).status).toBe(201);
    await receiver.waitFor((r) => r.some((x) => x.path === path));
    const removed = await t.api('DELETE', `/api/v1/webhooks/${id}`, creds);
    expect(removed.status, removed.text).toBe(200);
    deleted.push(id);
  }
  // The attempts in flight at their endpoint's deletion now end (delivered, as far as the receiver knows).
  receiver.releaseHung();
  await s.t.server.webhooks.dispatcher.idle();
  return deleted;
}

/** Rows of one endpoint in its delivery log. */
function logRows(store: Store, endpoint: number): number {
  return store.tables.webhookLog.getCount({ start: [endpoint], end: [endpoint + 1] });
}

describe('deleted webhook endpoints', () => {
  it('leave no state in the dispatcher, even one deleted with an attempt in flight', async () => {
    setup = await startWebhookTest({ random: 0.5 });
    const { t, receiver, register } = setup;
    await register('/kept', ['order.updated']);
    await cycles(setup);
    const stats = t.server.webhooks.dispatcher.stats();
    expect(stats.inFlight).toBe(0);
    // The kept endpoint's state only.
    expect(stats.endpointStates).toBe(1);
    expect(receiver.received.filter((r) => r.path === '/kept')).toHaveLength(LAST_DELIVERIES.length);
  });

  it('leave no delivery log rows, and the other endpoints\u2019 logs are untouched; a restart purges rows a deletion left', async () => {
    setup = await startWebhookTest({ random: 0.5 });
    const { t, register } = setup;
    const kept = await register('/kept', ['order.updated']);
    const deleted = await cycles(setup);
    await t.server.context.wal.flushed();
    const { store } = t.server.context;
    for (const id of deleted) expect(logRows(store, id), `endpoint ${id}`).toBe(0);
    // One attempt per order, each delivered, in the kept endpoint's log.
    expect(logRows(store, kept)).toBe(LAST_DELIVERIES.length);
    expect(store.tables.webhookLog.getCount()).toBe(LAST_DELIVERIES.length);
    const keptLog = (await t.admin('GET', `/admin/v1/webhooks/${kept}/deliveries`)).body.deliveries;
    expect(keptLog).toHaveLength(LAST_DELIVERIES.length);

    // As if the process had stopped before a deleted endpoint's purge reached its log.
    await t.server.close();
    const closed = openStore(t.dir);
    const row: DeliveryAttempt = { atMs: 1, message: `msg_${'a'.repeat(32)}`, type: 'order.updated', subject: 'x', attempt: 1, outcome: 'failed', status: 500, error: null, durationMs: 1 };
    await closed.tables.webhookLog.put([deleted[0]!, 1], row);
    await closed.tables.webhookLog.put([deleted[0]!, 2], row);
    await closed.close();
    await t.restart();
    await t.server.webhooks.dispatcher.idle();
    await t.server.context.wal.flushed();
    expect(logRows(t.server.context.store, deleted[0]!)).toBe(0);
    expect((await t.admin('GET', `/admin/v1/webhooks/${kept}/deliveries`)).body.deliveries).toEqual(keptLog);
  });
});
