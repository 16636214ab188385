/**
 * Files readable by others: the data directory, LMDB's files, the
 * generated admin token and snapshots are the server user's alone, and the
 * start-up message says where the generated token is, never what it is.
 * Runs the real process with a umask of 022 (files 0644 and directories 0755
 * unless the server asks otherwise).
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnServer } from '../helpers/server-process.js';

const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8);

describe('data directory, LMDB files, admin token and snapshots are private', () => {
  it('a fresh DATA_DIR is 0700, data.mdb, lock.mdb and admin-token 0600; the token is not printed; a snapshot is 0700/0600', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'credit-order-api-files-'));
    const dir = join(parent, 'data');
    const previousUmask = process.umask(0o022);
    try {
      // An empty ADMIN_TOKEN means "none set": the server generates one.
      const server = await spawnServer(dir, '');
      try {
        expect(mode(dir)).toBe('700');
        for (const file of ['data.mdb', 'lock.mdb', 'admin-token']) expect(mode(join(dir, file))).toBe('600');
        const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
        const out = join(parent, 'snap');
        const r = await fetch(`${server.adminUrl}/admin/v1/snapshot`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ out }),
        });
        expect(r.status).toBe(200);
        expect(mode(out)).toBe('700');
        for (const file of ['data.mdb', 'lock.mdb']) expect(mode(join(out, file))).toBe('600');
        server.child.kill('SIGTERM');
        expect((await server.exited).code).toBe(0);
        expect(token.length).toBeGreaterThanOrEqual(22);
        expect(server.output()).not.toContain(token);
        expect(server.output()).toContain(`Admin token generated into ${join(dir, 'admin-token')}`);
      } finally {
        server.child.kill('SIGKILL');
      }
    } finally {
      process.umask(previousUmask);
      rmSync(parent, { recursive: true, force: true });
    }
  }, 60_000);
});
