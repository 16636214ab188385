/**
 * The webhook CLI commands against the real server and a real local
 * receiver: register (secret shown once), list with what is held, the
 * delivery log, a failing endpoint's replay, rotation and deletion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { cli as runCli } from '../helpers/cli.js';
import { order, useServer } from '../helpers/server.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

let receiver: Receiver;
const clock = new ManualClock(1_000_000, Date.now());

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());
const t = useServer({ clock, config: { webhooksAllowHttp: true, webhooksAllowPrivate: true, webhooksRetryHours: 1 }, server: { webhookYield: false } });

describe('webhook commands', () => {
  it('add, list, deliveries, replay of a failing endpoint, rotate, disable and delete', async () => {
    const creds = await t.createAccount('reseller', '100');
    const service = await t.createService({ rate: '1', min: 1, max: 10 });
    const added = await runCli(t, 'webhook', 'add', String(creds.id), '--url', `${receiver.url}/cli`, '--events', 'order.updated,refill.updated');
    expect(added.code, added.err).toBe(0);
    expect(added.out).toMatch(/secret\s+whsec_/);
    expect(added.out).toMatch(/not shown again/);
    receiver.setSecret('/cli', /secret\s+(whsec_\S+)/.exec(added.out)![1]!);
    const bad = await runCli(t, 'webhook', 'add', String(creds.id), '--url', 'ftp://x.example/');
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/must be an http or https URL/);

    receiver.behave('fail');
    await t.api('POST', '/api/v1/order', creds, order(service, 2));
    await receiver.waitFor((r) => r.length === 1);
    await t.server.webhooks.dispatcher.idle();
    clock.advance(2 * 3_600_000);
    t.server.webhooks.dispatcher.pass();
    await t.server.webhooks.dispatcher.idle();
    await t.server.context.wal.flushed();

    const failing = await runCli(t, 'webhook', 'list', '--failing');
    expect(failing.out).toMatch(/since /);
    expect(failing.out).toMatch(/HELD/);
    const log = await runCli(t, 'webhook', 'deliveries', '1');
    expect(log.out).toMatch(/failed/);
    expect(log.out).toMatch(/500/);
    // The options --help names: a limit and an account filter.
    const one = await runCli(t, 'webhook', 'deliveries', '1', '--limit', '1');
    expect(one.code, one.err).toBe(0);
    expect(JSON.parse((await runCli(t, 'webhook', 'deliveries', '1', '--limit', '1', '--json')).out).deliveries).toHaveLength(1);
    const mine = await runCli(t, 'webhook', 'list', '--account', String(creds.id), '--json');
    expect(mine.code, mine.err).toBe(0);
    expect(JSON.parse(mine.out).webhooks.map((w: { id: number }) => w.id)).toEqual([1]);
    expect(JSON.parse((await runCli(t, 'webhook', 'list', '--account', String(creds.id + 1), '--json')).out).webhooks).toEqual([]);

    receiver.behave('ok');
    const replayed = await runCli(t, 'webhook', 'replay', '1');
    expect(replayed.code, replayed.err).toBe(0);
    await receiver.waitFor((r) => r.some((x) => x.answered === 'ok'));
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    await t.server.webhooks.dispatcher.idle();
    expect(JSON.parse((await runCli(t, 'webhook', 'list', '--json')).out).webhooks[0]).toMatchObject({ held: 0, failing: false });

    const rotated = await runCli(t, 'webhook', 'rotate', '1');
    expect(rotated.out).toMatch(/secret\s+whsec_/);
    expect((await runCli(t, 'webhook', 'disable', '1')).out).toMatch(/enabled\s+no/);
    expect((await runCli(t, 'webhook', 'delete', '1')).out).toBe('Webhook endpoint 1 deleted.\n');
    expect((await runCli(t, 'webhook', 'list')).out).toBe('No webhook endpoints.\n');
  });
});
