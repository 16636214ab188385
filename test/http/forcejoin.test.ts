import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forceJoinConfigFromEnv } from '../../src/forcejoin/index.js';
import { FakeBotApi } from '../forcejoin/fake-bot-api.js';
import { order, startTestServer, useServer, type Creds } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * How long the server waits for the fake Bot API. It answers at once, but it
 * shares the test's event loop, which a loaded machine can stall for longer
 * than a production timeout; no test of the first block waits for it to run
 * out (Telegram down is an immediate 500).
 */
const TELEGRAM_WAIT_MS = '10000';

describe('Telegram force-join on the order path (fake Bot API over HTTP)', () => {
  let bot: FakeBotApi;
  let service: number;
  let creds: Creds;

  beforeAll(async () => {
    bot = await FakeBotApi.start();
  });
  afterAll(() => bot.close());
  const t = useServer(
    { late: () => ({ config: { forceJoin: forceJoinConfigFromEnv(bot.env({ FORCEJOIN_TIMEOUT_MS: TELEGRAM_WAIT_MS, FORCEJOIN_JOINED_CACHE_S: '0', FORCEJOIN_NOT_JOINED_CACHE_S: '0' })) } }) },
    async (t) => {
      service = await t.createService({ rate: '1', min: 1, max: 100 });
      creds = await t.createAccount('tg', '100');
    },
  );

  const link = (body: object) => t.admin('POST', `/admin/v1/accounts/${creds.id}/forcejoin`, body);

  it('an account without a linked Telegram user gets 403 FORCEJOIN with the join link, and is not charged', async () => {
    const unlinked = await t.createAccount('tg-unlinked', '100');
    const r = await t.api('POST', '/api/v1/order', unlinked, order(service, 5));
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('FORCEJOIN');
    expect(r.body.join_link).toBe(bot.joinLink);
    expect(r.body.message).toContain(bot.joinLink);
    expect((await t.api('GET', '/api/v1/balance', unlinked)).body.credits).toBe(100);
  });

  it('a linked member may order; a user who left may not', async () => {
    expect((await link({ telegram_user_id: 4242 })).body.account.telegram_user_id).toBe(4242);
    bot.setMember(4242, 'member');
    expect((await t.api('POST', '/api/v1/order', creds, order(service, 5))).status).toBe(201);
    bot.setMember(4242, 'left');
    expect((await t.api('POST', '/api/v1/order', creds, order(service, 5))).body.error).toBe('FORCEJOIN');
    bot.setMember(4242, 'restricted', true);
    expect((await t.api('POST', '/api/v1/order', creds, order(service, 5))).status).toBe(201);
  });

  it('fails closed when Telegram is down, without remembering the failure under an Idempotency-Key', async () => {
    await link({ telegram_user_id: 4242 });
    bot.failWith(500);
    const down = await t.api('POST', '/api/v1/order', creds, order(service, 1), { 'idempotency-key': 'tg-1' });
    expect(down.status).toBe(403);
    expect(down.body.error).toBe('FORCEJOIN');
    expect(down.body.message).toMatch(/try again/i);
    bot.failWith(null);
    bot.setMember(4242, 'member');
    const retry = await t.api('POST', '/api/v1/order', creds, order(service, 1), { 'idempotency-key': 'tg-1' });
    expect(retry.status).toBe(201);
  });

  it('a not-joined answer is remembered under an Idempotency-Key like any business outcome', async () => {
    await link({ telegram_user_id: 4242 });
    bot.setMember(4242, 'kicked');
    const first = await t.api('POST', '/api/v1/order', creds, order(service, 1), { 'idempotency-key': 'tg-2' });
    expect(first.body.error).toBe('FORCEJOIN');
    bot.setMember(4242, 'member');
    const again = await t.api('POST', '/api/v1/order', creds, order(service, 1), { 'idempotency-key': 'tg-2' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
  });

  it('the operator can mark an account verified or exempt, and panel orders are checked too', async () => {
    await link({ telegram_user_id: 4242 });
    bot.setMember(4242, 'left');
    expect((await t.admin('POST', `/admin/v1/accounts/${creds.id}/orders`, order(service, 1))).body.error).toBe('FORCEJOIN');
    await link({ verified: true });
    const calls = bot.calls.count;
    expect((await t.api('POST', '/api/v1/order', creds, order(service, 1))).status).toBe(201);
    expect(bot.calls.count).toBe(calls);
    await link({ verified: false, exempt: true });
    expect((await t.admin('POST', `/admin/v1/accounts/${creds.id}/orders`, order(service, 1))).status).toBe(201);
    await link({ exempt: false });
    expect((await t.api('POST', '/api/v1/order', creds, order(service, 1))).body.error).toBe('FORCEJOIN');
    expect((await link({ telegram_user_id: -3 })).status).toBe(400);
  });

  it('checks run in order: QTY before FORCEJOIN, FORCEJOIN before BALANCE', async () => {
    expect((await t.api('POST', '/api/v1/order', creds, order(service, 0))).body.error).toBe('QTY');
    const poor = await t.createAccount('poor');
    expect((await t.api('POST', '/api/v1/order', poor, order(service, 1))).body.error).toBe('FORCEJOIN');
  });

  it('applies to API v2 exactly as to v1: the join sentence as {error}, nothing charged, then a member orders', async () => {
    const v2 = await t.createAccount('tg-v2', '100');
    const key = await t.issueV2Key(v2.id);
    const add = () => t.v2({ key, action: 'add', service, link: 'https://t.test/p', quantity: 5 });
    const refused = await add();
    expect(refused.status).toBe(200);
    expect(refused.body.error).toContain(bot.joinLink);
    expect(refused.body.order).toBeUndefined();
    expect((await t.api('GET', '/api/v1/balance', v2)).body.credits).toBe(100);
    await t.admin('POST', `/admin/v1/accounts/${v2.id}/forcejoin`, { telegram_user_id: 5151 });
    bot.setMember(5151, 'administrator');
    const placed = await add();
    expect(placed.body).toEqual({ order: expect.any(Number) });
    expect((await t.api('GET', '/api/v1/balance', v2)).body.credits).toBe(95);
  });
});

describe('orders waiting for a Telegram answer', () => {
  it('hold places in the wallet mailbox: beyond mailboxMax the next order gets 503 UNAVAILABLE at once, and the waiters are answered once Telegram is', async () => {
    const bot = await FakeBotApi.start();
    const forceJoin = forceJoinConfigFromEnv(bot.env({ FORCEJOIN_TIMEOUT_MS: '60000', FORCEJOIN_JOINED_CACHE_S: '0', FORCEJOIN_NOT_JOINED_CACHE_S: '0' }));
    const t = await startTestServer({ config: { forceJoin, mailboxMax: 4 } });
    try {
      const service = await t.createService({ rate: '1', min: 1, max: 100 });
      const creds = await t.createAccount('waiter', '100');
      await t.admin('POST', `/admin/v1/accounts/${creds.id}/forcejoin`, { telegram_user_id: 77 });
      bot.setMember(77, 'member');
      bot.hold();
      const waiting = Array.from({ length: 4 }, () => t.api('POST', '/api/v1/order', creds, order(service, 1)));
      // All four share one Telegram request and each holds a mailbox place.
      const actor = () => t.server.context.registry.get(creds.id)?.actor;
      await waitFor('four orders in the mailbox awaiting Telegram', () => (actor()?.depth ?? 0) >= 4, undefined, () => `mailbox depth ${actor()?.depth ?? 0}`);
      const refused = await t.api('POST', '/api/v1/order', creds, order(service, 1));
      expect(refused.status).toBe(503);
      expect(refused.body.error).toBe('UNAVAILABLE');
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(bot.calls.count).toBe(1);
      bot.release();
      expect((await Promise.all(waiting)).map((r) => r.status)).toEqual([201, 201, 201, 201]);
      expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(96);
      expect(actor()?.depth).toBe(0);
      // A payload the service's type refuses is VALIDATION at once: Telegram
      // (holding again) is not asked and no mailbox place is taken.
      bot.hold();
      const calls = bot.calls.count;
      const invalid = await t.api('POST', '/api/v1/order', creds, { ...order(service, 1), runs: 3, interval: 10 });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error).toBe('VALIDATION');
      expect(bot.calls.count).toBe(calls);
    } finally {
      await t.close();
      await bot.close();
    }
  });
});
