import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { order, useServer } from '../helpers/server.js';

/*
 * Operators price per 1,000 units, as suppliers quote: the admin API and
 * the CLI take `rate_per_1000` beside the per-unit `rate` and show both,
 * exactly, and refuse a price finer than money counts. Real server, real
 * LMDB, over HTTP and through the CLI.
 */

describe('rate_per_1000', () => {
  const t = useServer({ accounts: { alice: '100' } });

  it('a service priced per 1,000 charges that price a unit, and the admin API shows both rates', async () => {
    const made = await t.admin('POST', '/admin/v1/services', { platform: 'instagram', name: 'Likes', rate_per_1000: 1.234, min: 10, max: 100000 });
    expect(made.status).toBe(201);
    expect(made.body.service).toMatchObject({ rate: 0.001234, rate_per_1000: 1.234 });
    expect(made.text).toContain('"rate":0.001234,');
    // 5,000 units at 1.234 per 1,000: 6.17 credits, exactly.
    const placed = await t.api('POST', '/api/v1/order', t.accounts.alice, order(made.body.service.id, 5000));
    expect(placed.body).toMatchObject({ charge: 6.17, balance: 93.83 });
    const shown = await t.admin('GET', `/admin/v1/orders/${placed.body.order}`);
    expect(shown.body.order).toMatchObject({ rate: 0.001234, rate_per_1000: 1.234, charge: 6.17 });
    // A per-unit rate shows its price per 1,000 too; a change by either field keeps them exact.
    const patched = await t.admin('PATCH', `/admin/v1/services/${made.body.service.id}`, { rate: '0.3' });
    expect(patched.body.service).toMatchObject({ rate: 0.3, rate_per_1000: 300 });
    const big = await t.admin('PATCH', `/admin/v1/services/${made.body.service.id}`, { rate_per_1000: '2500.5' });
    expect(big.body.service).toMatchObject({ rate: 2.5005, rate_per_1000: 2500.5 });
    const listed = await t.admin('GET', '/admin/v1/services');
    expect(listed.text).toContain('"rate":2.5005,"min":10,"max":100000');
  });

  it('refuses a price finer than money counts, saying so, and changes nothing', async () => {
    const id = await t.createService({ rate: '0.5' });
    const cases: [unknown, string][] = [
      [1.2345, "rate_per_1000 1.2345 is 0.0012345 credits a unit, finer than money counts (6 decimal places); give rate_per_1000 with at most 3 decimal places."],
      ['0.0001', "rate_per_1000 0.0001 is 0.0000001 credits a unit, finer than money counts (6 decimal places); give rate_per_1000 with at most 3 decimal places."],
      [-1, "rate_per_1000 must be a non-negative decimal number of credits per 1,000 units, such as 1.5."],
      ['1e3', "rate_per_1000 must be a non-negative decimal number of credits per 1,000 units, such as 1.5."],
    ];
    for (const [value, message] of cases) {
      const r = await t.admin('PATCH', `/admin/v1/services/${id}`, { rate_per_1000: value });
      expect(r.status, String(value)).toBe(400);
      expect(r.body, String(value)).toMatchObject({ error: 'VALIDATION', message });
    }
    const both = await t.admin('PATCH', `/admin/v1/services/${id}`, { rate: 1, rate_per_1000: 1000 });
    expect(both.body.message).toBe("Give the rate once: either 'rate' (a unit) or 'rate_per_1000', not both.");
    // Trailing zeros are not precision: 1.2340 per 1,000 is 1.234.
    expect((await t.admin('PATCH', `/admin/v1/services/${id}`, { rate_per_1000: '1.2340' })).body.service.rate).toBe(0.001234);
  });

  it('the CLI takes --rate-per-1000, lists RATE and RATE/1000, and refuses a finer price as a usage error', async () => {
    const add = await cli(t, 'service', 'add', '--platform', 'telegram', '--name', 'Members', '--rate-per-1000', '0.75', '--min', '1', '--max', '1000');
    expect(add.code).toBe(0);
    expect(add.out).toMatch(/^rate\s+0\.00075$/m);
    expect(add.out).toMatch(/^rate_per_1000\s+0\.75$/m);
    const list = await cli(t, 'service', 'list');
    expect(list.out.split('\n')[0]).toMatch(/RATE\s+RATE\/1000/);
    expect(list.out).toMatch(/Members\s+0\.00075\s+0\.75\s/);
    const fine = await cli(t, 'service', 'update', '1', '--rate-per-1000', '0.0005');
    expect(fine.code).toBe(2);
    expect(fine.err).toContain('--rate-per-1000 0.0005 is 0.0000005 credits a unit, finer than money counts (6 decimal places); give --rate-per-1000 with at most 3 decimal places.');
    const both = await cli(t, 'service', 'update', '1', '--rate', '1', '--rate-per-1000', '1');
    expect(both.code).toBe(2);
    const none = await cli(t, 'service', 'add', '--platform', 'x', '--name', 'y', '--min', '1', '--max', '2');
    expect(none.code).toBe(2);
    expect(none.err).toContain('service add needs --rate or --rate-per-1000.');
  });
});
