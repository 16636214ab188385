/**
 * A service's `average_time`: the median time from placement to completion
 * of its last ten completed orders, measured on the injected clock, shown
 * by v1 (whole seconds), v2 (in words, as panels write it) and the CLI's
 * service list, kept across a restart, and moved only by completed orders.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { cli } from '../helpers/cli.js';
import { order, useServer, type Creds, type TestServer } from '../helpers/server.js';

const clock = new ManualClock(1_000_000, Date.UTC(2026, 0, 5));

async function v2Key(t: TestServer, creds: Creds): Promise<string> {
  const issued = await t.admin('POST', `/admin/v1/accounts/${creds.id}/v2-key`);
  expect(issued.status).toBe(200);
  return issued.body.v2_key as string;
}

/** The service's `average_time` as v1, v2, the admin API and the CLI's list show it. */
async function shown(t: TestServer, creds: Creds, key: string, service: number): Promise<{ v1: unknown; v2: unknown; admin: unknown; cli: string }> {
  const v1 = (await t.api('GET', '/api/v1/services', creds)).body.services.find((s: { id: number }) => s.id === service);
  const v2 = ((await t.v2({ key, action: 'services' })).body as { service: number; average_time: string }[]).find((s) => s.service === service);
  const admin = (await t.admin('GET', '/admin/v1/services')).body.services.find((s: { id: number }) => s.id === service);
  const listed = await cli(t, 'service', 'list');
  expect(listed.code, listed.err).toBe(0);
  const [header, ...rows] = listed.out.trimEnd().split('\n');
  const column = header!.indexOf('AVG TIME');
  const row = rows.find((line) => line.trimStart().startsWith(`${service} `))!;
  return { v1: v1.average_time, v2: v2!.average_time, admin: admin.average_time, cli: row.slice(column).trim() };
}

async function place(t: TestServer, creds: Creds, service: number): Promise<string> {
  const r = await t.api('POST', '/api/v1/order', creds, order(service, 10));
  expect(r.status, r.text).toBe(201);
  return r.body.order as string;
}

async function move(t: TestServer, id: string, status: string, extra: Record<string, unknown> = {}): Promise<void> {
  const r = await t.admin('POST', `/admin/v1/orders/${id}/status`, { status, ...extra });
  expect(r.status, r.text).toBe(200);
}

describe("a service's average_time", () => {
  const t = useServer({ clock, accounts: { alice: '1000' } });

  it('is the median time to completion of its completed orders in v1, v2 and the CLI, is not moved by partial or canceled orders, and survives a restart', async () => {
    const creds = t.accounts.alice;
    const key = await v2Key(t, creds);
    const service = await t.createService({ rate: '0.01', min: 1, max: 1000 });
    const other = await t.createService({ rate: '0.01', min: 1, max: 1000 });
    expect(await shown(t, creds, key, service)).toEqual({ v1: null, v2: 'Not enough data', admin: null, cli: '-' });

    const [first, second, partial, canceled] = [await place(t, creds, service), await place(t, creds, service), await place(t, creds, service), await place(t, creds, service)];
    const elsewhere = await place(t, creds, other);
    clock.advance(90_000);
    await move(t, first, 'completed');
    expect(await shown(t, creds, key, service)).toEqual({ v1: 90, v2: '1 minute 30 seconds', admin: 90, cli: '1 minute 30 seconds' });
    clock.advance(3_810_000);
    await move(t, second, 'completed');
    // The median of 90 s and 3,900 s: 1,995 s.
    expect(await shown(t, creds, key, service)).toEqual({ v1: 1995, v2: '33 minutes 15 seconds', admin: 1995, cli: '33 minutes 15 seconds' });
    clock.advance(86_400_000);
    await move(t, partial, 'partial', { remains: 4 });
    await move(t, canceled, 'canceled');
    expect((await shown(t, creds, key, service)).v1).toBe(1995);
    // Another service's completion is its own.
    await move(t, elsewhere, 'completed');
    expect(await shown(t, creds, key, other)).toMatchObject({ v1: 90_300, v2: '1 day 1 hour' });

    const third = await place(t, creds, service);
    clock.advance(300_000);
    await move(t, third, 'completed');
    // 90 s, 3,900 s and 300 s: the median is 300 s.
    expect(await shown(t, creds, key, service)).toEqual({ v1: 300, v2: '5 minutes', admin: 300, cli: '5 minutes' });
    await t.restart();
    expect(await shown(t, creds, key, service)).toEqual({ v1: 300, v2: '5 minutes', admin: 300, cli: '5 minutes' });
  });

  it('counts only the last ten completed orders', async () => {
    const creds = t.accounts.alice;
    const key = await v2Key(t, creds);
    const service = await t.createService({ rate: '0.01', min: 1, max: 1000 });
    const slow: string[] = [];
    for (let i = 0; i < 10; i++) slow.push(await place(t, creds, service));
    clock.advance(2 * 3_600_000);
    for (const id of slow) await move(t, id, 'completed');
    expect(await shown(t, creds, key, service)).toMatchObject({ v1: 7200, v2: '2 hours' });
    // Six fast ones: of the last ten, six took 10 s and four 2 h, so the median is 10 s (of all sixteen it would be 2 h).
    for (let i = 0; i < 6; i++) {
      const fast = await place(t, creds, service);
      clock.advance(10_000);
      await move(t, fast, 'completed');
    }
    expect(await shown(t, creds, key, service)).toMatchObject({ v1: 10, v2: '10 seconds' });
  });
});
