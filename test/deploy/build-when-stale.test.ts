/**
 * `npm start` and `prepare` compile only when the build is missing or older
 * than the sources (scripts/build-when-stale.mjs), on a one-file project of
 * their own: a current build is left as it is, a changed, added or deleted
 * source builds again, a release without sources needs no TypeScript, and
 * stale sources without TypeScript stop with a sentence.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const SCRIPT = resolve('scripts/build-when-stale.mjs');
const TYPESCRIPT = resolve('node_modules/typescript');
let project: string;

/** A project with one source file, this repository's script and TypeScript. */
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'credit-order-api-build-'));
  mkdirSync(join(project, 'scripts'));
  mkdirSync(join(project, 'src'));
  mkdirSync(join(project, 'node_modules'));
  copyFileSync(SCRIPT, join(project, 'scripts/build-when-stale.mjs'));
  symlinkSync(TYPESCRIPT, join(project, 'node_modules/typescript'));
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { outDir: 'dist', rootDir: '.', module: 'NodeNext', target: 'ES2022' }, include: ['src/**/*.ts'] }));
  writeFileSync(join(project, 'src/main.ts'), 'export const answer: number = 1;\n');
  ageSources();
});

/** Dates every source a minute back, so that only a change made after it is newer than a build made now. */
function ageSources(): void {
  const minuteAgoS = Date.now() / 1000 - 60;
  for (const path of ['tsconfig.json', 'scripts', 'scripts/build-when-stale.mjs', ...readdirSync(join(project, 'src')).map((name) => `src/${name}`), 'src']) {
    utimesSync(join(project, path), minuteAgoS, minuteAgoS);
  }
}

afterEach(() => rmSync(project, { recursive: true, force: true }));

function run(...args: string[]): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, [join(project, 'scripts/build-when-stale.mjs'), ...args], { encoding: 'utf8' });
  return { status: result.status, stderr: result.stderr };
}

const built = () => join(project, 'dist/src/main.js');

/** Marks the built file so that a rebuild shows: tsc rewrites it, with a new time. */
function markBuilt(): void {
  utimesSync(built(), 1, 1);
}

const rewritten = () => statSync(built()).mtimeMs !== 1000;

// Each step runs tsc, which takes seconds to start on a busy machine.
describe('building only when stale', { timeout: 240_000 }, () => {
  it('builds a project without a build, then leaves a current build alone', () => {
    expect(run().status).toBe(0);
    expect(readFileSync(built(), 'utf8')).toContain('answer = 1');
    markBuilt();
    expect(run().status).toBe(0);
    expect(rewritten()).toBe(false);
  });

  it('builds again when a source changes, a source is added, or one is deleted', () => {
    expect(run().status).toBe(0);
    markBuilt();
    writeFileSync(join(project, 'src/main.ts'), 'export const answer: number = 2;\n');
    expect(run().status).toBe(0);
    expect(readFileSync(built(), 'utf8')).toContain('answer = 2');

    ageSources();
    markBuilt();
    writeFileSync(join(project, 'src/extra.ts'), 'export const extra = 3;\n');
    expect(run().status).toBe(0);
    expect(rewritten()).toBe(true);
    expect(existsSync(join(project, 'dist/src/extra.js'))).toBe(true);

    ageSources();
    // A deleted file leaves no newer file behind: its directory's change counts.
    markBuilt();
    unlinkSync(join(project, 'src/extra.ts'));
    expect(run().status).toBe(0);
    expect(rewritten()).toBe(true);
  });

  it('--always builds a current project', () => {
    expect(run().status).toBe(0);
    markBuilt();
    expect(run('--always').status).toBe(0);
    expect(rewritten()).toBe(true);
  });

  it('a release (dist/ without sources) starts without TypeScript; stale sources without it stop with a sentence', () => {
    expect(run().status).toBe(0);
    markBuilt();
    unlinkSync(join(project, 'node_modules/typescript'));
    rmSync(join(project, 'src'), { recursive: true });
    expect(run()).toEqual({ status: 0, stderr: '' });
    expect(rewritten()).toBe(false);

    mkdirSync(join(project, 'src'));
    writeFileSync(join(project, 'src/main.ts'), 'export const answer: number = 4;\n');
    const stale = run();
    expect(stale.status).toBe(1);
    expect(stale.stderr).toContain('dist/ is missing or older than the sources, and TypeScript is not installed');
  });

  it('refuses an argument it does not know', () => {
    const wrong = run('--force');
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain('unknown: --force');
  });
});
