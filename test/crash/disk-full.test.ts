import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnServer } from '../helpers/server-process.js';

/**
 * A real storage failure under load: the server runs with a limit on the
 * size of the files it writes, so once LMDB's data file would grow past it,
 * the commit on LMDB's write thread fails as it would on a full disk. The
 * process must stop (exit 1, one fatal line) without acknowledging the
 * failed commit, and a restart must hold every acknowledged order and a
 * ledger that verifies: the failed commit, and any commit queued behind
 * it, left nothing behind.
 */
describe('a failing disk under load (file-size limit on the real process)', () => {
  it('stops with exit code 1, and a restart has every acknowledged order and a ledger that verifies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-disk-full-'));
    const token = 'disk-full-token';
    const admin = async (base: string, method: string, path: string, body?: unknown): Promise<any> => {
      const r = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return r.json();
    };
    try {
      let server = await spawnServer(dir, token);
      const service = (await admin(server.adminUrl, 'POST', '/admin/v1/services', { platform: 'p', name: 'n', rate: 0.01, min: 1, max: 100 })).service.id;
      const created = await admin(server.adminUrl, 'POST', '/admin/v1/accounts', { name: 'a' });
      await admin(server.adminUrl, 'POST', `/admin/v1/accounts/${created.account.id}/credits`, { amount: 1000000, reason: 'test' });
      const storage = (await admin(server.adminUrl, 'GET', '/admin/v1/stats')).storage as { file_bytes: number; used_bytes: number };
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);
      // The data file is longer than LMDB's pages: the zero-filled reserve
      // (WAL_PREALLOCATE_MB, 64 MiB by default) follows them.
      expect(statSync(join(dir, 'data.mdb')).size).toBeGreaterThanOrEqual(storage.used_bytes + 63 * 1024 * 1024);

      // Room for a few thousand orders past LMDB's last page, then the disk
      // is "full": no write may reach past the limit, whether it extends the
      // file or lands in the reserve.
      const limit = storage.used_bytes + 1024 * 1024;
      server = await spawnServer(dir, token, {}, { fileSizeLimitBytes: limit });
      const acked: string[] = [];
      const statuses = new Set<number>();
      const url = server.url;
      const worker = async (w: number): Promise<void> => {
        for (let i = 0; ; i++) {
          try {
            const r = await fetch(`${url}/api/v1/order`, {
              method: 'POST',
              headers: {
                'x-api-key': created.api_key,
                'x-api-secret': created.api_secret,
                'content-type': 'application/json',
                'idempotency-key': `w${w}-${i}`,
              },
              body: JSON.stringify({ service, target: `https://example.com/${w}/${i}`, quantity: 5 }),
            });
            statuses.add(r.status);
            const body = (await r.json()) as { order?: string };
            if (r.status === 201) acked.push(body.order!);
          } catch {
            return; // the server is gone
          }
        }
      };
      const workers = Array.from({ length: 16 }, (_, w) => worker(w));
      const exit = await server.exited;
      await Promise.all(workers);
      expect(exit.code).toBe(1);
      // LMDB's native code prints its own "Write error: …" to the same output
      // without a newline, so a JSON log line may start mid-line: read each
      // line from its first '{"level"'.
      const fatal = server
        .output()
        .split('\n')
        .map((line) => line.slice(Math.max(0, line.indexOf('{"level"'))))
        .filter((line) => line.startsWith('{"level"') && (JSON.parse(line) as { level: number }).level === 60);
      expect(fatal).toHaveLength(1);
      expect(fatal[0]).toContain('a commit failed; stopping');
      // If the reserve's top-up ran before the failure (it writes at the end
      // of the file, past the limit), it failed with one warning and orders
      // went on; whether it ran depends on timing.
      const reserveWarnings = server.output().split('\n').filter((line) => line.includes('zero-filled space'));
      expect(reserveWarnings.length).toBeLessThanOrEqual(1);
      expect(acked.length).toBeGreaterThan(100);
      for (const s of statuses) expect([201]).toContain(s);

      server = await spawnServer(dir, token);
      const verify = await admin(server.adminUrl, 'GET', '/admin/v1/verify');
      expect(verify.report.ok, JSON.stringify(verify.report)).toBe(true);
      for (const id of acked) {
        const shown = await admin(server.adminUrl, 'GET', `/admin/v1/orders/${id}`);
        expect(shown.ok, id).toBe(true);
      }
      // Stored orders are the acknowledged ones, plus at most those whose
      // commit landed just before the failure (synced, never answered).
      const stored = (await admin(server.adminUrl, 'GET', '/admin/v1/stats')).orders.pending as number;
      expect(stored).toBeGreaterThanOrEqual(acked.length);
      expect(stored - acked.length).toBeLessThanOrEqual(16);
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
