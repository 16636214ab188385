/**
 * What a first start does to a data directory, with the real process: a
 * development start on an empty directory seeds the demo account and prints
 * its key and secret once; a production start (NODE_ENV=production) never
 * seeds and never prints a secret, whatever the directory holds.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnServer } from '../helpers/server-process.js';
import { WAIT_DEADLINE_MS, waitFor } from '../helpers/wait-for.js';

type Spawned = Awaited<ReturnType<typeof spawnServer>>;

const MAIN = join(process.cwd(), 'dist/src/main.js');
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-first-start-'));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Waits for main's closing line (printed after the seed, if any), then stops the process cleanly. */
async function finishStart(server: Spawned): Promise<string> {
  await waitFor("main's closing line, `Customer API:`", () => server.output().includes('Customer API:'), WAIT_DEADLINE_MS, () => `output so far:\n${server.output()}`);
  return server.output();
}

async function stop(server: Spawned): Promise<void> {
  server.child.kill('SIGTERM');
  expect((await server.exited).code).toBe(0);
}

async function count(server: Spawned, token: string, resource: 'accounts' | 'services'): Promise<number> {
  const response = await fetch(`${server.adminUrl}/admin/v1/${resource}`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as Record<string, unknown[]>;
  expect(response.status).toBe(200);
  return body[resource]!.length;
}

describe('the first start of a data directory', () => {
  it('outside production seeds an empty directory once, printing the demo key and secret; a restart seeds nothing', async () => {
    const dir = tempDir();
    const env = { NODE_ENV: 'development', SEED_DEMO: undefined };
    const first = await spawnServer(dir, 'first-start-token', env);
    const printed = await finishStart(first);
    expect(printed).toContain('Seeded a demo account');
    expect(printed).toMatch(/API secret: \S+/);
    expect(await count(first, 'first-start-token', 'accounts')).toBe(1);
    await stop(first);

    const second = await spawnServer(dir, 'first-start-token', env);
    expect(await finishStart(second)).not.toContain('Seeded');
    expect(await count(second, 'first-start-token', 'accounts')).toBe(1);
    await stop(second);
  });

  it("outside production leaves a directory holding an operator's data alone", async () => {
    const dir = tempDir();
    const operator = await spawnServer(dir, 'first-start-token', { SEED_DEMO: 'false' });
    const created = await fetch(`${operator.adminUrl}/admin/v1/services`, {
      method: 'POST',
      headers: { authorization: 'Bearer first-start-token', 'content-type': 'application/json' },
      body: JSON.stringify({ platform: 'p', name: 'Operator service', rate: 0.01, min: 1, max: 100 }),
    });
    expect(created.status).toBe(201);
    await stop(operator);

    const seeding = await spawnServer(dir, 'first-start-token', { NODE_ENV: 'development', SEED_DEMO: 'true' });
    expect(await finishStart(seeding)).not.toContain('Seeded');
    expect(await count(seeding, 'first-start-token', 'accounts')).toBe(0);
    expect(await count(seeding, 'first-start-token', 'services')).toBe(1);
    await stop(seeding);
  });

  it('in production never seeds and prints no secret: no demo key, no admin token', async () => {
    const dir = tempDir();
    const server = await spawnServer(dir, 'unused', { NODE_ENV: 'production', SEED_DEMO: undefined, ADMIN_TOKEN: undefined });
    const printed = await finishStart(server);
    const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
    expect(printed).toContain(`Admin token generated into ${join(dir, 'admin-token')}`);
    expect(printed).not.toContain(token);
    expect(printed).not.toContain('Seeded');
    expect(printed).not.toMatch(/API (secret|key)|sec_|key_/);
    expect(await count(server, token, 'accounts')).toBe(0);
    expect(await count(server, token, 'services')).toBe(0);
    await stop(server);
  });

  it('in production refuses SEED_DEMO=true with a sentence, before touching the data directory', async () => {
    const dir = join(tempDir(), 'data');
    const run = promisify(execFile)(process.execPath, [MAIN], { env: { ...process.env, NODE_ENV: 'production', SEED_DEMO: 'true', DATA_DIR: dir, PORT: '0', ADMIN_PORT: '0' } });
    const failure = (await run.then(
      () => null,
      (error: unknown) => error,
    )) as { code: number; stderr: string } | null;
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain('SEED_DEMO (--seed-demo) cannot be true with NODE_ENV=production');
    expect(existsSync(dir)).toBe(false);
  });
});
