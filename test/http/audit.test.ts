import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/ledger/index.js';
import { order, withServer } from '../helpers/server.js';

describe('audit: every admin mutation is an event in the log, with the reason given', () => {
  it('records credits, ban, rate limit, plan, force-join, service and order moves with their reasons', async () => {
    await withServer({}, async (t) => {
      const service = await t.createService({ rate: '1' });
      const creds = await t.createAccount('audited', '10');
      await t.admin('PATCH', `/admin/v1/accounts/${creds.id}`, { banned: true, reason: 'chargeback' });
      await t.admin('PATCH', `/admin/v1/accounts/${creds.id}`, { banned: false, rate_limit_per_minute: 600, reason: 'resolved' });
      await t.admin('POST', `/admin/v1/accounts/${creds.id}/plan`, { months: 1, reason: 'paid invoice 77' });
      await t.admin('POST', `/admin/v1/accounts/${creds.id}/forcejoin`, { exempt: true, reason: 'partner' });
      await t.admin('PATCH', `/admin/v1/services/${service}`, { rate: 2, reason: 'supplier price up' });
      const placed = await t.api('POST', '/api/v1/order', creds, order(service, 1));
      await t.admin('POST', `/admin/v1/orders/${placed.body.order}/status`, { status: 'canceled', reason: 'target private' });
      expect((await t.admin('PATCH', `/admin/v1/accounts/${creds.id}`, { banned: true, reason: '' })).status).toBe(400);

      const events = [...t.server.context.store.log.getRange()].map((e) => e.value as LogEvent);
      const reasons = events.map((e) => ('reason' in e ? `${e.type}:${e.reason}` : null)).filter((r) => r !== null);
      expect(reasons).toEqual([
        'credits.adjusted:test top-up',
        'account.updated:chargeback',
        'account.updated:resolved',
        'plan.granted:paid invoice 77',
        'forcejoin.updated:partner',
        'service.saved:supplier price up',
        'order.status:target private',
      ]);
      const plan = events.find((e) => e.type === 'plan.granted');
      expect(plan).toMatchObject({ months: 1, priceInr: 9999 });
      const keyLine = JSON.stringify(events);
      expect(keyLine).not.toContain(creds.secret);
    });
  });
});
