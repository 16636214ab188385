/**
 * Verify and snapshot on a live server run in their own process, one at a
 * time. A hook holds the job once its process has its read transaction, so
 * the tests know a job is running without timing anything: the server must
 * keep answering orders then, refuse a second job, and the job must report
 * the moment it started from, not what arrived while it ran.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ops/index.js';
import { order, useScratchDirs, useServer, type Creds } from '../helpers/server.js';

describe('operator jobs on a live server', () => {
  let service: number;
  let alice: Creds;
  const scratchDir = useScratchDirs();
  const t = useServer({}, async (t) => {
    service = await t.createService({ rate: '0.01', min: 1, max: 1000 });
    alice = await t.createAccount('alice', '1000');
    for (let i = 0; i < 30; i++) expect((await t.api('POST', '/api/v1/order', alice, order(service, 10))).status).toBe(201);
  });

  it('a verify holding its read transaction leaves the server answering orders, and reports the moment it started from', async () => {
    const before = verifyLedger(t.server.context.store).counts.orders;
    const microBefore = Math.round(((await t.api('GET', '/api/v1/balance', alice)).body.credits as number) * 1_000_000);
    const hold = t.server.context.ops.holdNext();
    const verifying = t.admin('GET', '/admin/v1/verify');
    await hold.paused;
    // The verify is under way in its process: the event loop is free.
    for (let i = 0; i < 5; i++) expect((await t.api('POST', '/api/v1/order', alice, order(service, 1))).status).toBe(201);
    // Five orders of 1 unit at 0.01 credits: 50,000 micro-credits.
    expect(Math.round(((await t.api('GET', '/api/v1/balance', alice)).body.credits as number) * 1_000_000)).toBe(microBefore - 50_000);
    expect(t.server.context.ops.current).toBe('verify');
    hold.release();
    const done = await verifying;
    expect(done.status).toBe(200);
    expect(done.body.report).toMatchObject({ ok: true, first_broken: null, counts: { orders: before } });
    expect(t.server.context.ops.current).toBeNull();
    // The next one sees the five orders placed meanwhile.
    expect((await t.admin('GET', '/admin/v1/verify')).body.report.counts.orders).toBe(before + 5);
  });

  it('a second verify or snapshot while one runs is told one is running (409 CONFLICT), and works once it has finished', async () => {
    const hold = t.server.context.ops.holdNext();
    const verifying = t.admin('GET', '/admin/v1/verify');
    await hold.paused;
    const second = await t.admin('GET', '/admin/v1/verify');
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ ok: false, error: 'CONFLICT' });
    expect(second.body.message).toBe('A verify is already running; only one verify or snapshot runs at a time, so try again when it has finished.');
    const dir = scratchDir();
    const snapshotRefused = await t.admin('POST', '/admin/v1/snapshot', { out: join(dir, 'snap') });
    expect(snapshotRefused.status).toBe(409);
    expect(snapshotRefused.body.error).toBe('CONFLICT');
    hold.release();
    expect((await verifying).status).toBe(200);
    const snapshot = await t.admin('POST', '/admin/v1/snapshot', { out: join(dir, 'snap') });
    expect(snapshot.status).toBe(200);
    expect(snapshot.body.snapshot.verify.ok).toBe(true);
  });

  it('a running snapshot refuses a verify and keeps the server answering; its copy holds what was acknowledged before the copy began', async () => {
    const dir = scratchDir();
    const before = verifyLedger(t.server.context.store).counts.orders;
    const hold = t.server.context.ops.holdNext();
    const snapshotting = t.admin('POST', '/admin/v1/snapshot', { out: join(dir, 'snap') });
    await hold.paused;
    const refused = await t.admin('GET', '/admin/v1/verify');
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/^A snapshot is already running;/);
    expect((await t.api('POST', '/api/v1/order', alice, order(service, 1))).status).toBe(201);
    hold.release();
    const done = await snapshotting;
    expect(done.status).toBe(200);
    expect(done.body.snapshot.verify).toMatchObject({ ok: true, counts: { orders: before + 1 } });
  });
});
