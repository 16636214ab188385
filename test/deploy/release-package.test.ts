/**
 * A release is what `npm pack` makes: the built server (dist/src), the
 * lockfile as npm-shrinkwrap.json (so that `npm ci --omit=dev` installs the
 * exact tree), the service unit and the docs, and no sources. Unpacked with
 * only the production dependencies beside it, its `prepare` (which
 * `npm ci` runs) needs no TypeScript and `npm start` serves.
 *
 * The production dependencies are linked from this checkout's node_modules,
 * chosen by the shrinkwrap's own marks (`dev`), rather than downloaded: the
 * test runs offline. A dev dependency the server imported would then not
 * resolve, and the start would fail.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve('.');
let dir: string;
let app: string;
let files: string[];

interface LockEntry {
  dev?: boolean;
}

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'credit-order-api-release-'));
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], ROOT)) as { filename: string; files: { path: string }[] }[];
  files = packed[0]!.files.map((f) => f.path);
  execFileSync('tar', ['-xzf', join(dir, packed[0]!.filename), '-C', dir]);
  app = join(dir, 'package');
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Links every production package the shrinkwrap lists at the top of node_modules (nested ones come inside their parent). */
function linkProductionDependencies(): string[] {
  const lock = JSON.parse(readFileSync(join(app, 'npm-shrinkwrap.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const linked: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!/^node_modules\/(@[^/]+\/)?[^/]+$/.test(path) || entry.dev === true) continue;
    // An optional package for another platform is listed but not installed.
    if (!existsSync(join(ROOT, path))) continue;
    mkdirSync(dirname(join(app, path)), { recursive: true });
    symlinkSync(join(ROOT, path), join(app, path));
    linked.push(path.slice('node_modules/'.length));
  }
  return linked;
}

describe('the release tarball', () => {
  it('holds the built server, the service unit, the docs and the shrinkwrapped lockfile, and no sources', () => {
    for (const path of ['package.json', 'npm-shrinkwrap.json', 'dist/src/main.js', 'dist/src/cli/main.js', 'dist/src/ops/job-process.js', 'deploy/credit-order-api.service', 'docs/deployment.md', 'scripts/build-when-stale.mjs']) {
      expect(files).toContain(path);
    }
    expect(files.filter((path) => /^(src|test|bench)\/|^dist\/(bench|scripts|test)\/|^scripts\/(?!build-when-stale\.mjs$)/.test(path))).toEqual([]);
    expect(readFileSync(join(app, 'npm-shrinkwrap.json'), 'utf8')).toBe(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    // The shrinkwrap exists only inside the tarball: the checkout keeps its package-lock.json alone.
    expect(existsSync(join(ROOT, 'npm-shrinkwrap.json'))).toBe(false);
  });

  it('with production dependencies only, its prepare needs no TypeScript and npm start serves in production', async () => {
    const linked = linkProductionDependencies();
    expect(linked).toEqual(expect.arrayContaining(['lmdb', 'pino', 'prom-client', '@trufflesuite/uws-js-unofficial']));
    expect(linked).not.toContain('typescript');
    expect(linked).not.toContain('vitest');
    npm(['run', 'prepare', '--silent'], app);

    const data = join(dir, 'data');
    const server = spawn('npm', ['start', '--silent'], {
      cwd: app,
      detached: true,
      env: { ...process.env, NODE_ENV: 'production', DATA_DIR: data, PORT: '0', ADMIN_PORT: '0', SEED_DEMO: undefined, ADMIN_TOKEN: 'release-token' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    // 'close': npm and the server it runs have exited and their output has all been read.
    const exited = new Promise<number | null>((done) => server.on('close', (code) => done(code)));
    try {
      const listening = await new Promise<{ port: number; adminPort: number }>((done, fail) => {
        const read = (chunk: Buffer): void => {
          output += chunk.toString();
          const line = output.split('\n').find((l) => l.includes('"msg":"listening"'));
          if (line !== undefined) done(JSON.parse(line) as { port: number; adminPort: number });
        };
        server.stdout!.on('data', read);
        server.stderr!.on('data', read);
        void exited.then((code) => fail(new Error(`npm start exited (${code}) before listening:\n${output}`)));
      });
      const base = `http://127.0.0.1:${listening.port}`;
      expect((await fetch(`${base}/api/v1/openapi.json`)).status).toBe(200);
      const refused = await fetch(`${base}/api/v1/balance`);
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { error: string }).error).toBe('AUTH');
      const accounts = await fetch(`http://127.0.0.1:${listening.adminPort}/admin/v1/accounts`, { headers: { authorization: 'Bearer release-token' } });
      expect(((await accounts.json()) as { accounts: unknown[] }).accounts).toEqual([]);
    } finally {
      // Ctrl-C in a terminal: SIGINT to npm and the server it runs.
      process.kill(-server.pid!, 'SIGINT');
    }
    await exited;
    expect(output).toContain('"msg":"stopped cleanly"');
    expect(output).not.toContain('Seeded');
  }, 60_000);
});
