import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openApiText } from '../../src/http/v1/openapi.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

describe('OpenAPI lint', () => {
  it('every operation has a unique operationId, and every customer route is described', () => {
    const doc = JSON.parse(openApiText());
    const ids: string[] = [];
    for (const [path, item] of Object.entries<Record<string, { operationId?: string }>>(doc.paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (op === undefined) continue;
        expect(op.operationId, `${method.toUpperCase()} ${path}`).toMatch(/^[a-z][A-Za-z]+$/);
        ids.push(op.operationId!);
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
    for (const path of ['/api/v1/cancel', '/api/v1/refill', '/api/v1/refill_status']) expect(doc.paths).toHaveProperty([path]);
  });

  it('@redocly/cli lint reports no errors on docs/openapi.json (offline: no telemetry, no update check)', async () => {
    const run = promisify(execFile);
    const bin = `${root}node_modules/.bin/redocly`;
    const result = await run(bin, ['lint', 'docs/openapi.json', '--config', 'redocly.yaml', '--format', 'json'], {
      cwd: root,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      timeout: 60_000,
    }).catch((error: { stdout?: string; stderr?: string; code?: number }) => error);
    const stdout = (result as { stdout?: string }).stdout ?? '';
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { totals: { errors: number }; problems: { ruleId: string; message: string; severity: string }[] };
    const errors = report.problems.filter((p) => p.severity === 'error');
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);
  }, 90_000);
});
