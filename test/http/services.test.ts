import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/server.js';
import { cli } from '../helpers/cli.js';

describe('services carry what clients choose by', () => {
  const t = useServer({ accounts: { alice: '10' } });

  it('the admin API sets category, type, refill, refill_days, cancel, dripfeed and description; GET /services shows them after a restart', async () => {
    const created = await t.admin('POST', '/admin/v1/services', {
      platform: 'instagram',
      name: 'Comments',
      rate: '0.5',
      min: 1,
      max: 100,
      category: 'Instagram Comments',
      type: 'Custom Comments',
      refill: true,
      refill_days: 7,
      cancel: true,
      dripfeed: false,
      description: 'Real-looking comments, one per line.',
    });
    expect(created.status).toBe(201);
    const id = created.body.service.id;
    const patched = await t.admin('PATCH', `/admin/v1/services/${id}`, { dripfeed: true, refill_days: 14 });
    expect(patched.body.service).toMatchObject({ dripfeed: true, refill_days: 14, type: 'Custom Comments', enabled: true });
    await t.restart();
    const listed = await t.api('GET', '/api/v1/services', t.accounts.alice);
    expect(listed.body.services).toContainEqual({
      id,
      platform: 'instagram',
      name: 'Comments',
      rate: 0.5,
      min: 1,
      max: 100,
      category: 'Instagram Comments',
      type: 'Custom Comments',
      refill: true,
      refill_days: 14,
      cancel: true,
      dripfeed: true,
      description: 'Real-looking comments, one per line.',
      average_time: null,
    });
  });

  it('a new service gets refill_days 30 and the Default type', async () => {
    const id = await t.createService();
    const listed = await t.api('GET', '/api/v1/services', t.accounts.alice);
    expect(listed.body.services.find((s: { id: number }) => s.id === id)).toMatchObject({ type: 'Default', refill: false, refill_days: 30, cancel: false, dripfeed: false });
  });

  it('bad values are VALIDATION naming the field and what it accepts', async () => {
    const id = await t.createService();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ type: 'Likes' }, /type' must be one of Default, Package/],
      [{ refill: 'yes' }, /refill' must be true or false/],
      [{ refill_days: 0 }, /refill_days' must be an integer from 1 to 3650/],
      [{ description: 'x'.repeat(2001) }, /description' must be a string of at most 2000/],
    ];
    for (const [body, message] of cases) {
      const r = await t.admin('PATCH', `/admin/v1/services/${id}`, body);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('VALIDATION');
      expect(r.body.message).toMatch(message);
    }
  });

  it('the CLI sets the new fields', async () => {
    const added = await cli(t, 'service', 'add', '--platform', 'telegram', '--name', 'Poll votes', '--rate', '0.2', '--min', '10', '--max', '1000',
      '--type', 'Poll', '--category', 'Telegram', '--refill', 'yes', '--refill-days', '10', '--cancel', 'yes', '--dripfeed', 'no', '--description', 'Votes', '--json');
    expect(added.err).toBe('');
    const id = JSON.parse(added.out).service.id;
    const updated = await cli(t, 'service', 'update', String(id), '--cancel', 'no', '--json');
    expect(JSON.parse(updated.out).service).toMatchObject({ type: 'Poll', category: 'Telegram', refill: true, refill_days: 10, cancel: false, dripfeed: false, description: 'Votes' });
    const bad = await cli(t, 'service', 'update', String(id), '--cancel', 'maybe');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--cancel must be yes or no/);
  });
});
