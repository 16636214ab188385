/**
 * The typed client's types are the OpenAPI document's, and the package
 * publishes the client at `credit-order-api/client`.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { clientTypesText } from '../../scripts/client-types.js';
import { buildOpenApi } from '../../src/http/v1/openapi.js';
import { VERSION } from '../../src/platform/version.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('typed client', () => {
  it('src/client/openapi-types.ts is what openapi-typescript makes of the generated document (run `npm run openapi` when this fails)', async () => {
    const committed = readFileSync(`${root}src/client/openapi-types.ts`, 'utf8');
    expect(committed).toBe(await clientTypesText(JSON.parse(JSON.stringify(buildOpenApi(VERSION)))));
  });

  it('package.json exports ./client, with its types, and Node resolves credit-order-api/client to the built client', async () => {
    const manifest = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { name: string; exports: Record<string, { types: string; default: string }> };
    const entry = manifest.exports['./client']!;
    expect(entry).toEqual({ types: './dist/src/client/index.d.ts', default: './dist/src/client/index.js' });
    expect(existsSync(`${root}dist/src/client/index.d.ts`)).toBe(true);
    const script = "const m = await import('credit-order-api/client'); process.stdout.write(JSON.stringify([import.meta.resolve('credit-order-api/client'), typeof m.createApiClient, typeof m.retryingFetch]));";
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
    expect(JSON.parse(stdout)).toEqual([new URL(entry.default, `file://${root}`).href, 'function', 'function']);
  });
});
