import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forceJoinConfigFromEnv } from '../../src/forcejoin/index.js';
import { FakeBotApi } from '../forcejoin/fake-bot-api.js';
import { useServer } from '../helpers/server.js';

/** Placing a subscription is ordering: the required Telegram channel is checked as for an order, through v2 and v1 (fake Bot API over HTTP). */
describe('Telegram force-join on a subscription', () => {
  let bot: FakeBotApi;
  beforeAll(async () => {
    bot = await FakeBotApi.start();
  });
  afterAll(() => bot.close());
  const t = useServer({ late: () => ({ config: { forceJoin: forceJoinConfigFromEnv(bot.env({ FORCEJOIN_TIMEOUT_MS: '300', FORCEJOIN_JOINED_CACHE_S: '0', FORCEJOIN_NOT_JOINED_CACHE_S: '0' })) } }) });

  it('refuses one from an account that has not joined, naming the join link, and places one once it has', async () => {
    const service = await t.createService({ name: 'Auto likes', rate: '0.5', min: 10, max: 100, type: 'Subscriptions' });
    const creds = await t.createAccount('tg', '10');
    const key = await t.issueV2Key(creds.id);
    const subscription = { key, action: 'add', service, username: 'natgeo', min: 10, max: 20 };
    const refused = await t.v2(subscription);
    expect(refused.body.error).toContain(bot.joinLink);
    expect((await t.admin('GET', `/admin/v1/subscriptions?account=${creds.id}`)).body.subscriptions).toEqual([]);
    await t.admin('POST', `/admin/v1/accounts/${creds.id}/forcejoin`, { telegram_user_id: 77 });
    bot.setMember(77, 'member');
    expect((await t.v2(subscription)).body).toEqual({ order: expect.any(Number) });
  });

  it('refuses one placed through v1 the same way (403 FORCEJOIN with the join link), and places it once the account has joined', async () => {
    const service = await t.createService({ name: 'Auto likes', rate: '0.5', min: 10, max: 100, type: 'Subscriptions' });
    const creds = await t.createAccount('tg1', '10');
    const body = { service, username: 'natgeo', min: 10, max: 20 };
    const refused = await t.api('POST', '/api/v1/subscription', creds, body);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'FORCEJOIN', join_link: bot.joinLink });
    expect((await t.admin('GET', `/admin/v1/subscriptions?account=${creds.id}`)).body.subscriptions).toEqual([]);
    await t.admin('POST', `/admin/v1/accounts/${creds.id}/forcejoin`, { telegram_user_id: 78 });
    bot.setMember(78, 'member');
    expect((await t.api('POST', '/api/v1/subscription', creds, body)).status).toBe(201);
  });
});
