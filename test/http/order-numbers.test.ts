import { describe, expect, it } from 'vitest';
import { order, useServer, type Creds } from '../helpers/server.js';

describe('order numbers', () => {
  const t = useServer({ perTest: true, services: { main: { rate: '1', min: 1, max: 1000 } }, accounts: { numbered: '10', other: '10' } });

  it('grow by one per accepted order across accounts and channels; refusals take none; a restart continues after the highest', async () => {
    const numbers: number[] = [];
    const place = async (who: Creds, quantity: number): Promise<number> => {
      const r = await t.api('POST', '/api/v1/order', who, order(t.services.main, quantity));
      expect(r.status).toBe(201);
      return r.body.number as number;
    };
    numbers.push(await place(t.accounts.numbered, 1));
    numbers.push(await place(t.accounts.other, 1));
    // Refused for balance (costs 50, holds 9) and for quantity: no number is used.
    expect((await t.api('POST', '/api/v1/order', t.accounts.numbered, order(t.services.main, 50))).status).toBe(402);
    expect((await t.api('POST', '/api/v1/order', t.accounts.numbered, order(t.services.main, 5000))).status).toBe(422);
    const panel = await t.admin('POST', `/admin/v1/accounts/${t.accounts.numbered.id}/orders`, order(t.services.main, 2));
    expect(panel.status).toBe(201);
    numbers.push(panel.body.number);
    numbers.push(await place(t.accounts.numbered, 1));
    expect(numbers).toEqual([numbers[0], numbers[0]! + 1, numbers[0]! + 2, numbers[0]! + 3]);

    await t.restart();
    expect(await place(t.accounts.other, 1)).toBe(numbers[3]! + 1);

    // The status answer and the operator's view show the number; the operator finds an order by it.
    const last = numbers[3]!;
    const shown = await t.admin('GET', `/admin/v1/orders/${last}`);
    expect(shown.status).toBe(200);
    expect(shown.body.order.number).toBe(last);
    const status = await t.api('GET', `/api/v1/status?order=${shown.body.order.id}`, t.accounts.numbered);
    expect(status.body.number).toBe(last);
    expect((await t.admin('GET', `/admin/v1/orders/${last + 100}`)).status).toBe(404);

    // Verify checks that numbers grow with the log.
    const verify = await t.admin('GET', '/admin/v1/verify');
    expect(verify.body.ok).toBe(true);
  });

  it('an Idempotency-Key replay answers with the first number and takes no new one', async () => {
    const first = await t.api('POST', '/api/v1/order', t.accounts.numbered, order(t.services.main, 1), { 'idempotency-key': 'n-1' });
    const again = await t.api('POST', '/api/v1/order', t.accounts.numbered, order(t.services.main, 1), { 'idempotency-key': 'n-1' });
    expect(again.text).toBe(first.text);
    const next = await t.api('POST', '/api/v1/order', t.accounts.numbered, order(t.services.main, 1));
    expect(next.body.number).toBe(first.body.number + 1);
  });
});
