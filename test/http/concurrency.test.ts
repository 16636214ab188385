import { describe, expect, it } from 'vitest';
import { order, useServer } from '../helpers/server.js';

describe('concurrent orders on one wallet', () => {
  const t = useServer();

  it('a wallet funded for exactly K orders accepts exactly K of hundreds, and the balance ends exact', async () => {
    const service = await t.createService({ rate: '0.07', min: 1, max: 1000 });
    // 37 orders of 3 units at 0.07 = 0.21 each: 7.77 credits, plus 0.2 left over.
    const creds = await t.createAccount('reseller', '7.97');
    const replies = await Promise.all(Array.from({ length: 300 }, () => t.api('POST', '/api/v1/order', creds, order(service, 3))));
    const accepted = replies.filter((r) => r.status === 201);
    expect(accepted).toHaveLength(37);
    expect(replies.filter((r) => r.status === 402)).toHaveLength(263);
    expect(new Set(accepted.map((r) => r.body.order)).size).toBe(37);
    const balances = accepted.map((r) => r.body.balance).sort((a, b) => a - b);
    expect(balances[0]).toBe(0.2);
    expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(0.2);
    await t.restart();
    expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(0.2);
  });
});
