import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ADMIN_ROUTES } from '../../src/http/admin/index.js';

/** `METHOD /path` for every endpoint the operator guide's admin table names (query strings dropped, `{x}` for a parameter). */
function documented(): string[] {
  const guide = readFileSync(new URL('../../docs/operator-guide.md', import.meta.url), 'utf8');
  const start = guide.indexOf('| Endpoint | Body | Answer |');
  expect(start).toBeGreaterThan(-1);
  const rows = guide.slice(start).split('\n\n')[0]!.split('\n').slice(2);
  const found = new Set<string>();
  for (const row of rows) {
    const endpoints = row.split('|')[1] ?? '';
    for (const m of endpoints.matchAll(/`(GET|POST|PATCH|DELETE) ([^`?]+)(?:\?[^`]*)?`/g)) found.add(`${m[1]} ${m[2]!.replace(/\{[a-z_]+\}/g, '{x}')}`);
  }
  return [...found].sort();
}

describe('admin routes', () => {
  it('the admin table of the operator guide documents exactly the routes the admin API serves', () => {
    const served = [...new Set(ADMIN_ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path.replace(/:[a-z]+/g, '{x}')}`))].sort();
    expect(documented()).toEqual(served);
  });
});
