/**
 * The webhook queue: the order path writes every message into the log, in
 * the commit of the change it reports (so it costs no B-tree of its own; a
 * placement's messages are implied by its own event), delivery progress is one cursor, and only messages whose endpoint
 * cannot take them are moved to per-endpoint held rows. Real server, real
 * LMDB, a real local receiver; signatures checked with the
 * `standardwebhooks` package.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LogEvent } from '../../src/ledger/index.js';
import { openStore, type WalEntry } from '../../src/wal/index.js';
import { BUSY_PENDING_ENTRIES, PER_ENDPOINT_IN_FLIGHT_MAX, WEBHOOK_CURSOR_KEY, messagesIn, type QueuedMessage } from '../../src/webhooks/index.js';
import { order, roundTrips } from '../helpers/server.js';
import { startWebhookTest, type WebhookTest } from '../helpers/webhook-setup.js';

let setup: WebhookTest | null = null;

afterEach(async () => {
  setup?.receiver.releaseHung();
  await setup?.close();
  setup = null;
});

/** Records every entry appended through the server's WAL. */
function recordEntries(s: WebhookTest): WalEntry[] {
  const wal = s.t.server.context.wal;
  const append = wal.append.bind(wal);
  const appendSettled = wal.appendSettled.bind(wal);
  const entries: WalEntry[] = [];
  wal.append = (entry: WalEntry) => {
    entries.push(entry);
    return append(entry);
  };
  // The wallet actors append through appendSettled (one settlement per batch).
  wal.appendSettled = (entry: WalEntry, settled) => {
    entries.push(entry);
    return appendSettled(entry, settled);
  };
  return entries;
}

/** The tables and keys of every row written by the recorded entries. */
function putsOf(entries: WalEntry[]): { table: string; key: unknown }[] {
  return entries.flatMap((e) => e.puts.map((p) => ({ table: p.table, key: p.key })));
}

/** Every message in the log, with the log number of the event that holds it (`webhook.queued`) or implies it (order.placed naming endpoints). */
function messagesInLog(store: ReturnType<typeof openStore>): { seq: number; form: 'placement' | 'queued'; message: QueuedMessage }[] {
  const out: { seq: number; form: 'placement' | 'queued'; message: QueuedMessage }[] = [];
  for (const { key, value } of store.log.getRange({})) {
    const event = value as LogEvent;
    // The dispatcher's own reading of the two forms (outbox.messagesIn), so that a form it reads is one these tests count.
    for (const message of messagesIn(event)) out.push({ seq: key as number, form: event.type === 'webhook.queued' ? 'queued' : 'placement', message });
  }
  return out;
}

describe('webhook queue', () => {
  it('writes every message into the commit of its order (a placement names its endpoints in its own event); while receivers answer, nothing is written per endpoint and the cursor passes them all', async () => {
    setup = await startWebhookTest({ random: 0.5 });
    const { t, receiver, creds, service, register } = setup;
    const endpoints: number[] = [];
    for (const path of ['/a', '/b', '/c']) endpoints.push(await register(path, ['order.updated']));
    const entries = recordEntries(setup);
    const placed: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await t.api('POST', '/api/v1/order', creds, order(service, 5));
      expect(r.status).toBe(201);
      placed.push(r.body.order);
    }
    const asPlaced = await t.api('GET', `/api/v1/status?order=${placed[0]}`, creds);
    // One later change of the first order: its message is an event of its own, with the status view as the change left it.
    const moved = await t.admin('POST', `/admin/v1/orders/${placed[0]}/status`, { status: 'processing' });
    expect(moved.status, moved.text).toBe(200);
    await t.server.webhooks.dispatcher.idle();
    await receiver.waitFor((r) => r.length === 33);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    for (const path of ['/a', '/b', '/c']) expect(receiver.received.filter((r) => r.path === path)).toHaveLength(11);
    // Each placement's entry is its order.placed event alone, naming the three endpoints: one commit, no event per message.
    const placements = entries.filter((e) => e.events.some((ev) => ev.type === 'order.placed'));
    expect(placements).toHaveLength(10);
    for (const e of placements) expect(e.events.map((ev) => (ev.type === 'order.placed' ? ev.webhooks : ev.type))).toEqual([endpoints]);
    const cancel = entries.find((e) => e.events.some((ev) => ev.type === 'order.status'))!;
    expect(cancel.events.filter((ev) => ev.type === 'webhook.queued')).toHaveLength(3);
    const puts = putsOf(entries);
    expect(puts.filter((p) => p.table === 'webhookOutbox')).toEqual([]);
    expect(entries.flatMap((e) => e.removes ?? []).filter((r) => r.table.startsWith('webhook'))).toEqual([]);
    const { store } = t.server.context;
    const messages = messagesInLog(store);
    expect(messages.filter((m) => m.form === 'placement')).toHaveLength(30);
    expect(messages.filter((m) => m.form === 'queued')).toHaveLength(3);
    // The ids the receiver saw are the ones the log gives on every read (derived for placements, stored for the others), each once.
    expect(new Set(messages.map((m) => m.message.id))).toEqual(new Set(receiver.received.map((r) => r.id)));
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(33);
    // The placement's body is the order as GET /status showed it then; the later change's shows the order moved.
    const first = receiver.received.filter((r) => r.path === '/a' && r.json.data['order'] === placed[0]);
    const { ok: _ok, ...fields } = asPlaced.body;
    expect(first[0]!.json).toEqual({ type: 'order.updated', timestamp: expect.stringMatching(/Z$/), data: fields });
    expect(first.map((r) => r.json.data['status'])).toEqual(['pending', 'processing']);
    // Delivery progress is one number, past every message.
    expect(store.tables.meta.get(WEBHOOK_CURSOR_KEY)).toBeGreaterThan(messages[messages.length - 1]!.seq);
    expect(store.tables.webhookOutbox.getCount()).toBe(0);
  });

  it('after a crash, the messages past the durable cursor are sent again with the same webhook-id, and one already moved to the held rows is not read twice', async () => {
    setup = await startWebhookTest({ random: 0.5 });
    const { t, receiver, creds, service, register } = setup;
    await register('/ok', ['order.updated']);
    const down = await register('/down', ['order.updated']);
    receiver.behaveOn('/down', 'fail');
    expect((await t.api('POST', '/api/v1/order', creds, order(service, 5))).status).toBe(201);
    await receiver.waitFor((r) => r.length === 2);
    await t.server.webhooks.dispatcher.idle();
    expect(t.server.webhooks.dispatcher.heldCount(down)).toBe(1);
    const first = receiver.received.find((r) => r.path === '/ok')!;
    await t.server.close();
    // As if the process had died before the commit that moved the cursor past both messages was durable.
    const store = openStore(t.dir);
    const [message] = messagesInLog(store);
    expect(message!.form).toBe('placement');
    expect(store.tables.meta.get(WEBHOOK_CURSOR_KEY)).toBeGreaterThan(message!.seq);
    await store.tables.meta.put(WEBHOOK_CURSOR_KEY, message!.seq);
    await store.close();
    await t.restart();
    await receiver.waitFor((r) => r.filter((x) => x.path === '/ok').length === 2);
    await t.server.webhooks.dispatcher.idle();
    const ok = receiver.received.filter((r) => r.path === '/ok');
    expect(ok.map((r) => r.id)).toEqual([first.id, first.id]);
    expect(ok.every((r) => r.verified)).toBe(true);
    // The failed one waits among the held rows, once.
    expect(t.server.webhooks.dispatcher.heldCount(down)).toBe(1);
    expect(t.server.context.store.tables.webhookOutbox.getCount()).toBe(1);
    expect(t.server.webhooks.dispatcher.backlog().held).toBe(1);
  });

  it('a hung receiver does not hold up the others: its messages move to its held rows, then all arrive once it answers', async () => {
    // A window a little larger than one endpoint's attempts in flight, so the hung endpoint fills it quickly.
    setup = await startWebhookTest({ random: 0.5, windowMax: PER_ENDPOINT_IN_FLIGHT_MAX + 4, config: { webhooksTimeoutMs: 120_000 } });
    const { t, receiver, creds, service, register } = setup;
    await register('/slow', ['order.updated']);
    await register('/fast', ['order.updated']);
    receiver.behaveOn('/slow', 'hang');
    const orders: string[] = [];
    for (let i = 0; i < 24; i++) {
      const r = await t.api('POST', '/api/v1/order', creds, order(service, 5));
      expect(r.status).toBe(201);
      orders.push(r.body.order);
    }
    // Every message for the answering endpoint arrives while the other hangs.
    await receiver.waitFor((r) => r.filter((x) => x.path === '/fast').length === 24, 10_000);
    expect(receiver.received.filter((x) => x.path === '/slow')).toHaveLength(PER_ENDPOINT_IN_FLIGHT_MAX);
    expect(t.server.context.store.tables.webhookOutbox.getCount()).toBeGreaterThan(0);
    expect(t.server.webhooks.dispatcher.heldCount(1)).toBe(24);
    receiver.behaveOn('/slow', 'ok');
    receiver.releaseHung();
    await receiver.waitFor((r) => new Set(r.filter((x) => x.path === '/slow').map((x) => x.json.data['order'])).size === 24, 10_000);
    await t.server.webhooks.dispatcher.idle();
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    expect(t.server.webhooks.dispatcher.backlog().held).toBe(0);
  });

  it('keeps each order in sequence across the held rows and the queue: a change written while an earlier one is held waits behind it', async () => {
    setup = await startWebhookTest({ random: 0.5 });
    const { t, receiver, clock, creds, service, register } = setup;
    await register('/hook', ['order.updated']);
    receiver.behave('fail');
    const placed = await t.api('POST', '/api/v1/order', creds, order(service, 5));
    const id = placed.body.order as string;
    await receiver.waitFor((r) => r.length === 1);
    await t.server.webhooks.dispatcher.idle();
    // The failed message now waits among the held rows; the next changes are written to the queue.
    for (const status of ['processing', 'in_progress', 'completed']) expect((await t.admin('POST', `/admin/v1/orders/${id}/status`, { status })).status).toBe(200);
    await t.server.webhooks.dispatcher.idle();
    expect(receiver.received).toHaveLength(1);
    receiver.behave('ok');
    clock.advance(60_000);
    t.server.webhooks.dispatcher.pass();
    await receiver.waitFor((r) => r.filter((x) => x.answered === 'ok').length === 4);
    expect(receiver.received.filter((x) => x.answered === 'ok').map((x) => x.json.data['status'])).toEqual(['pending', 'processing', 'in_progress', 'completed']);
    await t.server.webhooks.dispatcher.idle();
    expect(t.server.webhooks.dispatcher.backlog().held).toBe(0);
  });

  it('yields to a full order path: attempts per sample follow the allowance (delivery-allowance.ts), down to WEBHOOKS_BUSY_PERCENT of the entries committed, and grow back with room', async () => {
    setup = await startWebhookTest({ random: 0.5, config: { webhooksBusyPercent: 5, webhooksBusyMinPerSecond: 50 } });
    const { t, receiver, creds, service, register } = setup;
    await register('/hook', ['order.updated']);
    const dispatcher = t.server.webhooks.dispatcher;
    // An event loop over the target: the first sample has no earlier count of entries, so the floor applies (50 a second: 5 per sample).
    dispatcher.applyLoadSample({ utilisation: 0.95, wal: { entries: 1_000, pendingEntries: 0 } });
    for (let i = 0; i < 30; i++) expect((await t.api('POST', '/api/v1/order', creds, order(service, 5))).status).toBe(201);
    await dispatcher.idle();
    expect(receiver.received).toHaveLength(5);
    expect((await t.admin('GET', '/metrics')).text).toMatch(/^coa_webhook_attempts_allowed_per_second 50$/m);
    // Commits queueing past BUSY_PENDING_ENTRIES count as full too; WEBHOOKS_BUSY_PERCENT=5 of the 200 entries committed since the last sample is 10.
    dispatcher.applyLoadSample({ utilisation: 0.1, wal: { entries: 1_200, pendingEntries: BUSY_PENDING_ENTRIES } });
    dispatcher.pass();
    await dispatcher.idle();
    expect(receiver.received).toHaveLength(5 + 10);
    // Room under the target: the allowance grows by a quarter plus one per sample, 13 and then 17 (only 2 left).
    dispatcher.applyLoadSample({ utilisation: 0.1, wal: { entries: 1_300, pendingEntries: 0 } });
    dispatcher.pass();
    await dispatcher.idle();
    expect(receiver.received).toHaveLength(5 + 10 + 13);
    expect((await t.admin('GET', '/metrics')).text).toMatch(/^coa_webhook_attempts_allowed_per_second 130$/m);
    dispatcher.applyLoadSample({ utilisation: 0.1, wal: { entries: 1_400, pendingEntries: 0 } });
    dispatcher.pass();
    await receiver.waitFor((r) => r.length === 30);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(30);
  });

  it('WEBHOOKS_BUSY_MIN_PER_SECOND sets the floor while the order path is full: 15 a second is 1, then 2, per sample; 0 starts nothing until it has room', async () => {
    const first = await startWebhookTest({ random: 0.5, config: { webhooksBusyPercent: 0, webhooksBusyMinPerSecond: 15 } });
    setup = first;
    const { t, receiver, creds, service, register } = first;
    await register('/hook', ['order.updated']);
    const dispatcher = t.server.webhooks.dispatcher;
    const busy = (entries: number): void => dispatcher.applyLoadSample({ utilisation: 0.95, wal: { entries, pendingEntries: 0 } });
    busy(1_000);
    for (let i = 0; i < 10; i++) expect((await t.api('POST', '/api/v1/order', creds, order(service, 5))).status).toBe(201);
    await dispatcher.idle();
    expect(receiver.received).toHaveLength(1);
    busy(1_100);
    dispatcher.pass();
    await dispatcher.idle();
    expect(receiver.received).toHaveLength(3);
    busy(1_200);
    dispatcher.pass();
    await dispatcher.idle();
    expect(receiver.received).toHaveLength(4);
    await first.close();
    setup = null;

    const second = await startWebhookTest({ random: 0.5, config: { webhooksBusyPercent: 0, webhooksBusyMinPerSecond: 0 } });
    setup = second;
    await second.register('/hook', ['order.updated']);
    const idle = second.t.server.webhooks.dispatcher;
    idle.applyLoadSample({ utilisation: 0.95, wal: { entries: 1_000, pendingEntries: 0 } });
    for (let i = 0; i < 5; i++) expect((await second.t.api('POST', '/api/v1/order', second.creds, order(second.service, 5))).status).toBe(201);
    idle.applyLoadSample({ utilisation: 0.1, wal: { entries: 1_100, pendingEntries: BUSY_PENDING_ENTRIES } });
    idle.pass();
    await idle.idle();
    expect(second.receiver.received).toHaveLength(0);
    // With room again the allowance grows from nothing: 1, then 2, then 3 a sample.
    for (const [entries, total] of [[1_200, 1], [1_300, 3], [1_400, 5]] as const) {
      idle.applyLoadSample({ utilisation: 0.1, wal: { entries, pendingEntries: 0 } });
      idle.pass();
      await second.receiver.waitFor((r) => r.length === total);
      await idle.idle();
      expect(second.receiver.received).toHaveLength(total);
    }
  });

  it('keeps at most WEBHOOKS_HELD_MAX messages for an endpoint that cannot take them: newer ones are dropped and counted, the endpoint is marked failing, and a replay sends what was kept, in order', async () => {
    setup = await startWebhookTest({ random: 0.5, config: { webhooksHeldMax: 3 } });
    const { t, receiver, creds, service, register } = setup;
    const endpoint = await register('/hook', ['order.updated']);
    receiver.behave('fail');
    const orders: string[] = [];
    const place = async (): Promise<void> => {
      const placed = await t.api('POST', '/api/v1/order', creds, order(service, 5));
      // The order path does not notice: every order is taken.
      expect(placed.status).toBe(201);
      orders.push(placed.body.order as string);
    };
    await place();
    await receiver.waitFor((r) => r.length === 1);
    await t.server.webhooks.dispatcher.idle();
    // Backing off after the failure: the next messages are held, up to 3, and the rest dropped.
    for (let i = 0; i < 5; i++) await place();
    await t.server.webhooks.dispatcher.idle();
    await t.server.context.wal.flushed();
    const failing = await t.admin('GET', '/admin/v1/webhooks?failing=true');
    expect(failing.body.webhooks).toHaveLength(1);
    expect(failing.body.webhooks[0]).toMatchObject({ id: endpoint, failing: true, held: 3 });
    expect((await t.admin('GET', '/metrics')).text).toMatch(/coa_webhook_messages_dropped_total 3\n/);
    expect(t.server.context.store.tables.webhookOutbox.getCount()).toBe(3);
    // After a restart the kept messages are counted again: the cap still holds.
    await t.restart();
    await place();
    await t.server.webhooks.dispatcher.idle();
    await t.server.context.wal.flushed();
    expect((await t.admin('GET', '/admin/v1/webhooks?failing=true')).body.webhooks[0]).toMatchObject({ held: 3 });
    expect((await t.admin('GET', '/metrics')).text).toMatch(/coa_webhook_messages_dropped_total 1\n/);
    // The replay sends the three kept, oldest first: the first three orders' messages, no gap among them.
    receiver.behave('ok');
    expect((await t.admin('POST', `/admin/v1/webhooks/${endpoint}/replay`)).body.webhook).toMatchObject({ failing: false });
    await receiver.waitFor((r) => r.filter((x) => x.answered === 'ok').length === 3);
    await t.server.webhooks.dispatcher.idle();
    expect(receiver.received.filter((x) => x.answered === 'ok').map((x) => x.json.data['order'])).toEqual(orders.slice(0, 3));
    // Emptied, it takes new messages again.
    await place();
    await receiver.waitFor((r) => r.filter((x) => x.answered === 'ok').length === 4);
    expect(receiver.received.filter((x) => x.answered === 'ok').at(-1)!.json.data['order']).toBe(orders.at(-1));
    await t.server.webhooks.dispatcher.idle();
    const listed = (await t.admin('GET', '/admin/v1/webhooks')).body.webhooks as { id: number }[];
    expect(listed.find((w) => w.id === endpoint)).toMatchObject({ failing: false, held: 0 });
  });

  it('shows the oldest undelivered age from memory: a scrape reads only the first held rows it does not know', async () => {
    setup = await startWebhookTest({ random: 0.5 });
    const { t, receiver, clock, creds, service, register } = setup;
    const dispatcher = t.server.webhooks.dispatcher;
    const endpoint = await register('/a', ['order.updated']);
    receiver.behave('fail');
    const settle = async (): Promise<void> => {
      await dispatcher.idle();
      await t.server.context.wal.flushed();
    };
    // Three orders 100 ms apart (within the first retry's delay); the first fails, and the endpoint holds all three.
    const placedAt: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      if (i > 0) clock.advance(100);
      placedAt.push(clock.wallMs());
      ids.push((await t.api('POST', '/api/v1/order', creds, order(service, 1))).body.order);
      await settle();
    }
    expect(receiver.received).toHaveLength(1);
    expect(dispatcher.heldCount(endpoint)).toBe(3);
    const reads = vi.spyOn(t.server.context.store.tables.webhookOutbox, 'getRange');
    const ageSeconds = async (): Promise<number> => Number(/^coa_webhook_oldest_undelivered_age_seconds (\S+)$/m.exec((await t.admin('GET', '/metrics')).text)![1]);
    // Known since the first was moved there: no read.
    expect(dispatcher.backlog().oldestAtMs).toBe(placedAt[0]);
    expect(await ageSeconds()).toBe((clock.wallMs() - placedAt[0]!) / 1000);
    expect(reads).not.toHaveBeenCalled();
    // The receiver recovers but for the second order: the first and third are delivered, the second is now the oldest.
    let failSecond = true;
    receiver.behave('ok');
    receiver.behaveWhen((json) => failSecond && json.data.order === ids[1], 'fail');
    clock.advance(60_000);
    dispatcher.pass();
    await settle();
    expect(dispatcher.heldCount(endpoint)).toBe(1);
    reads.mockClear();
    expect(dispatcher.backlog().oldestAtMs).toBe(placedAt[1]);
    expect(await ageSeconds()).toBe((clock.wallMs() - placedAt[1]!) / 1000);
    // Read once after the delivery, then known for every later scrape.
    expect(reads.mock.calls.filter(([range]) => (range as { limit?: number }).limit === 1)).toHaveLength(1);
    // Delivered: nothing is undelivered, and the gauge says 0.
    failSecond = false;
    clock.advance(3_600_000);
    dispatcher.pass();
    await settle();
    expect(dispatcher.backlog()).toEqual({ held: 0, oldestAtMs: null });
    expect(await ageSeconds()).toBe(0);
    reads.mockRestore();
  });

  it('keeps the oldest undelivered age when an older message fails after a newer one has been held', async () => {
    setup = await startWebhookTest({ random: 0.5 });
    const { t, receiver, clock, creds, service, register } = setup;
    const dispatcher = t.server.webhooks.dispatcher;
    const endpoint = await register('/a', ['order.updated']);
    // The first order's message hangs; every later one fails at once.
    receiver.behave('fail');
    receiver.next(1, 'hang');
    const firstAt = clock.wallMs();
    await t.api('POST', '/api/v1/order', creds, order(service, 1));
    await receiver.waitFor((r) => r.length === 1);
    clock.advance(100);
    await t.api('POST', '/api/v1/order', creds, order(service, 2));
    await receiver.waitFor((r) => r.length === 2);
    // The second is moved to the held rows (durably) while the first is still in flight.
    const heldRows = (): number => t.server.context.store.tables.webhookOutbox.getCount({ start: [endpoint], end: [endpoint + 1] });
    for (let i = 0; heldRows() < 1; i++) {
      if (i === 100) throw new Error('the second message was not held');
      await t.server.context.wal.flushed();
      await roundTrips(t);
    }
    // Now the first fails too, and is held behind it: the older one is the oldest.
    receiver.failHung();
    await dispatcher.idle();
    await t.server.context.wal.flushed();
    expect(heldRows()).toBe(2);
    expect(dispatcher.backlog().oldestAtMs).toBe(firstAt);
  });
});
