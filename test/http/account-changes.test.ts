/**
 * An account's profile changes (secret rotation, API v2 key, force-join)
 * bypass the wallet actor and each writes the whole profile row: made at
 * the same moment, none may undo another, in memory or after a restart.
 */
import { describe, expect, it } from 'vitest';
import { useServer, type Creds } from '../helpers/server.js';

let creds: Creds;
const t = useServer({ perTest: true }, async (t) => {
  creds = await t.createAccount('reseller', '10');
});

describe('profile changes of one account at once', () => {
  it('keeps every one of them: the rotated secret, the new v2 key and both force-join fields, also after a restart', async () => {
    const [rotated, issued, linked, exempted] = await Promise.all([
      t.admin('POST', `/admin/v1/accounts/${creds.id}/rotate-secret`),
      t.admin('POST', `/admin/v1/accounts/${creds.id}/v2-key`),
      t.admin('POST', `/admin/v1/accounts/${creds.id}/forcejoin`, { telegram_user_id: 4242 }),
      t.admin('POST', `/admin/v1/accounts/${creds.id}/forcejoin`, { exempt: true }),
    ]);
    for (const r of [rotated, issued, linked, exempted]) expect(r.status, r.text).toBe(200);
    const secret: string = rotated.body.api_secret;
    const v2Key: string = issued.body.v2_key;
    for (const when of ['before', 'after'] as const) {
      if (when === 'after') await t.restart();
      expect((await t.api('GET', '/api/v1/balance', { ...creds, secret })).status, when).toBe(200);
      expect((await t.api('GET', '/api/v1/balance', creds)).status, when).toBe(401);
      expect((await t.v2({ key: v2Key, action: 'balance' })).body, when).toMatchObject({ balance: expect.any(String) });
      const account = (await t.admin('GET', `/admin/v1/accounts/${creds.id}`)).body.account;
      expect(account, when).toMatchObject({ telegram_user_id: 4242, forcejoin_exempt: true });
    }
  });
});
