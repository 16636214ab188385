/**
 * The systemd unit in deploy/ is one systemd accepts without a warning, and
 * it says what the deployment guide promises: production mode, a restart
 * policy, a descriptor limit, hardening, and write access to the data
 * directory only (and the snapshot directory).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const UNIT = 'deploy/credit-order-api.service';
const text = readFileSync(UNIT, 'utf8');

function analyzer(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v systemd-analyze'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** The unit's `Key=value` lines, every value of a key in order. */
function settings(): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m !== null) map.set(m[1]!, [...(map.get(m[1]!) ?? []), m[2]!]);
  }
  return map;
}

describe('the systemd unit', () => {
  it('runs the built server in production, restarts it on failure, and lets it write only its data and snapshot directories', () => {
    const s = settings();
    const one = (key: string) => s.get(key)?.[0];
    expect(one('ExecStart')).toBe('/usr/bin/node /opt/credit-order-api/dist/src/main.js');
    expect(s.get('Environment')).toEqual(expect.arrayContaining(['NODE_ENV=production', 'DATA_DIR=/var/lib/credit-order-api']));
    expect(one('Restart')).toBe('on-failure');
    expect(Number(one('LimitNOFILE'))).toBeGreaterThanOrEqual(65536);
    expect(one('NoNewPrivileges')).toBe('yes');
    expect(one('ProtectSystem')).toBe('strict');
    expect(one('PrivateTmp')).toBe('yes');
    expect(one('ProtectHome')).toBe('yes');
    expect(s.get('ReadWritePaths')).toEqual(['/var/lib/credit-order-api', '-/var/backups/credit-order-api']);
    expect(one('StateDirectory')).toBe('credit-order-api');
    // The server drains in at most 10 s on SIGTERM; systemd must wait longer before it kills.
    expect(Number(one('TimeoutStopSec'))).toBeGreaterThan(10);
  });

  it('passes systemd-analyze verify without a warning', (ctx) => {
    const analyze = analyzer();
    if (analyze === null) return ctx.skip('systemd-analyze is not installed here: the unit file is not verified');
    const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-unit-'));
    try {
      // verify checks that ExecStart's program exists: point it at the node running this test when it lives elsewhere.
      const file = join(dir, 'credit-order-api.service');
      writeFileSync(file, text.replace('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `));
      const result = spawnSync(analyze, ['verify', file], { encoding: 'utf8', cwd: dir });
      expect(result.stderr + result.stdout).toBe('');
      expect(result.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
