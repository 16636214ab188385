import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { order, startTestServer, withServer } from '../helpers/server.js';

describe('operations over the admin API: verify, snapshot under load, restore, metrics', () => {
  it('verify reports the ledger; a tampered wallet is named as the first broken invariant', async () => {
    await withServer({ services: { main: { rate: '0.5', min: 1, max: 100 } }, accounts: { v: '100' } }, async (t) => {
      const placed = await t.api('POST', '/api/v1/order', t.accounts.v, order(t.services.main, 10));
      await t.admin('POST', `/admin/v1/orders/${placed.body.order}/status`, { status: 'partial', remains: 4 });
      const ok = await t.admin('GET', '/admin/v1/verify');
      expect(ok.status).toBe(200);
      expect(ok.body.report).toMatchObject({ ok: true, first_broken: null, totals: { credited: 100, debited: 5, refunded: 2 } });
      // Tamper with a wallet behind the log's back.
      const wallets = t.server.context.store.tables.wallets;
      wallets.putSync(t.accounts.v.id, { ...wallets.get(t.accounts.v.id), credits: 1 });
      const broken = await t.admin('GET', '/admin/v1/verify');
      expect(broken.status).toBe(409);
      expect(broken.body.error).toBe('LEDGER');
      expect(broken.body.message).toMatch(/wallet/i);
    });
  });

  it('takes a verified snapshot while orders are being placed, and a server started on it restores that state', async () => {
    const t = await startTestServer();
    const out = join(mkdtempSync(join(tmpdir(), 'credit-order-api-snap-')), 'snap');
    try {
      const service = await t.createService({ rate: '0.01', min: 1, max: 100 });
      const creds = await t.createAccount('s', '1000');
      let stop = false;
      const acked: string[] = [];
      const load = Array.from({ length: 6 }, async () => {
        while (!stop) {
          const r = await t.api('POST', '/api/v1/order', creds, order(service, 3));
          if (r.status === 201) acked.push(r.body.order);
        }
      });
      while (acked.length < 20) await new Promise((r) => setTimeout(r, 5));
      const ackedBefore = [...acked];
      const snap = await t.admin('POST', '/admin/v1/snapshot', { out });
      stop = true;
      await Promise.all(load);
      expect(snap.status).toBe(200);
      expect(snap.body.snapshot.verify.ok).toBe(true);
      expect(snap.body.snapshot.path).toBe(out);
      expect((await t.admin('POST', '/admin/v1/snapshot', { out })).status).toBe(400);
      expect((await t.admin('POST', '/admin/v1/snapshot', { out: 'relative/dir' })).status).toBe(400);

      await withServer({ dir: out }, async (restored) => {
        for (const id of ackedBefore) expect((await restored.admin('GET', `/admin/v1/orders/${id}`)).status).toBe(200);
        const verify = await restored.admin('GET', '/admin/v1/verify');
        expect(verify.body.report.ok).toBe(true);
        const credits = (await restored.api('GET', '/api/v1/balance', creds)).body.credits;
        expect(credits).toBe(Math.round((1000 - 0.03 * verify.body.report.counts.orders) * 1e6) / 1e6);
      });
    } finally {
      await t.close();
      rmSync(join(out, '..'), { recursive: true, force: true });
    }
  });

  it('serves Prometheus metrics: requests by route and code, latency, commit batches, mailbox, accounts, orders by status', async () => {
    await withServer({ services: { main: { rate: '1', min: 1, max: 100 } }, accounts: { m: '10' } }, async (t) => {
      await t.api('POST', '/api/v1/order', t.accounts.m, order(t.services.main, 1));
      await t.api('POST', '/api/v1/order', t.accounts.m, order(t.services.main, 100));
      const r = await fetch(`${t.adminUrl}/metrics`, { headers: { authorization: 'Bearer test-admin-token' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toContain('text/plain');
      const text = await r.text();
      expect(text).toMatch(/coa_http_requests_total\{route="\/api\/v1\/order",status="201",code=""\} 1/);
      expect(text).toMatch(/coa_http_requests_total\{route="\/api\/v1\/order",status="402",code="BALANCE"\} 1/);
      // prom-client writes the bucket bound first: {le="+Inf",route="/api/v1/order"} (label order carries no meaning).
      expect(text).toMatch(/coa_http_request_duration_seconds_bucket\{le="\+Inf",route="\/api\/v1\/order"\} 2/);
      expect(text).toMatch(/coa_wal_batch_entries_count \d+/);
      expect(text).toMatch(/coa_wal_sync_seconds_count \d+/);
      expect(text).toMatch(/coa_accounts 1/);
      expect(text).toMatch(/coa_orders\{status="pending"\} 1/);
      expect(text).toMatch(/coa_mailbox_depth_max \d+/);
      expect((await fetch(`${t.adminUrl}/metrics`)).status).toBe(401);
    });
  });

  it('stats uses snake_case and admin order routes answer "no such order" for malformed ids', async () => {
    await withServer({}, async (t) => {
      const stats = await t.admin('GET', '/admin/v1/stats');
      expect(Object.keys(stats.body.wal)).toEqual(['batches', 'commits', 'entries', 'events', 'last_batch_entries', 'last_sync_ms', 'pending_entries']);
      // The data file holds LMDB's pages and, past them, what is left of
      // the zero-filled reserve (WAL_PREALLOCATE_MB; 1 MiB in the test
      // servers, topped up once a whole chunk of it is used).
      const { file_bytes: fileBytes, used_bytes: usedBytes } = stats.body.storage;
      expect(usedBytes).toBeGreaterThan(0);
      expect(fileBytes).toBe(statSync(join(t.dir, 'data.mdb')).size);
      expect(fileBytes).toBeGreaterThan(usedBytes);
      const bad = await t.admin('GET', '/admin/v1/orders/not-an-id');
      expect(bad.status).toBe(404);
      expect(bad.body.message).toContain('No order with id');
      const page = await t.admin('GET', '/admin/v1/orders?status=pending');
      expect(page.body.next_cursor).toBeNull();
    });
  });
});
