/**
 * Settings are declared once, in `SETTINGS` (src/app/config.ts); the README's
 * configuration table is the operator's copy. This test keeps the two in
 * step: every setting has its row with the same variable, flag and default,
 * and every row with a flag names a setting that exists.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { flagName, loadConfig, SETTINGS } from '../../src/app/config.js';

/** The README's configuration rows: `| \`VAR\` | \`--flag\` | \`default\` | … |`. */
function readmeRows(): Map<string, { flag: string; def: string }> {
  const rows = new Map<string, { flag: string; def: string }>();
  for (const line of readFileSync('README.md', 'utf8').split('\n')) {
    const m = /^\| `([A-Z][A-Z0-9_]*)` \| (?:`(--[a-z-]+)`)? *\| ([^|]*) \|/.exec(line);
    if (m !== null) rows.set(m[1]!, { flag: m[2] ?? '', def: m[3]!.trim() });
  }
  return rows;
}

describe('configuration', () => {
  const rows = readmeRows();

  it('every setting has a README row with its variable, flag and default', () => {
    const problems: string[] = [];
    for (const s of SETTINGS) {
      const row = rows.get(s.env);
      if (row === undefined) {
        problems.push(`${s.env} has no row in the README's configuration table`);
        continue;
      }
      if (row.flag !== `--${flagName(s.key)}`) problems.push(`${s.env}: the README says ${row.flag || 'no flag'}, the flag is --${flagName(s.key)}`);
      // An empty default means "not set" (the README says what happens then).
      if (s.def !== '' && row.def !== `\`${s.def}\``) problems.push(`${s.env}: the README's default is ${row.def}, the default is ${s.def}`);
    }
    expect(problems).toEqual([]);
  });

  it('every README row with a flag is a setting', () => {
    const known = new Set<string>(SETTINGS.map((s) => s.env));
    const stale = [...rows].filter(([, row]) => row.flag !== '').map(([env]) => env).filter((env) => !known.has(env));
    expect(stale).toEqual([]);
  });

  it("RATE_LIMIT_HEADERS is 'ietf' unless set to 'both'; anything else stops the start with a sentence naming it", () => {
    expect(loadConfig([], {}).rateLimitHeaders).toBe('ietf');
    expect(loadConfig([], { RATE_LIMIT_HEADERS: 'both' }).rateLimitHeaders).toBe('both');
    expect(loadConfig(['--rate-limit-headers', 'both'], {}).rateLimitHeaders).toBe('both');
    expect(() => loadConfig([], { RATE_LIMIT_HEADERS: 'x' })).toThrow(`RATE_LIMIT_HEADERS (--rate-limit-headers) must be 'ietf' or 'both'; got "x".`);
  });

  it('each documented flag is the one loadConfig reads', () => {
    // The flag in the table is what an operator types: it must change the setting.
    const config = loadConfig(['--mailbox-max', '7', '--log-level', 'warn'], {});
    expect(config.mailboxMax).toBe(7);
    expect(config.logLevel).toBe('warn');
  });
});
