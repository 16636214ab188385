/**
 * `npm run test:alone` (scripts/test-alone.ts) runs each test of the given
 * files alone and names every one that fails alone. It runs here as a
 * developer runs it, `node dist/scripts/test-alone.js --config FILE`, over a
 * planted project whose tests share a counter: one of them passes in file
 * order and fails alone, and two carry the same full name.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exactNamePattern } from '../../scripts/test-name-pattern.js';

const SCRIPT = resolve('dist/scripts/test-alone.js');
/** The tool starts vitest and five test processes: generous for a loaded machine, and a bound on a hang. */
const TOOL_DEADLINE_MS = 120_000;

/** A planted test file: the second test counts on the order the first one placed. */
const PLANTED_TESTS = `
let orders = 0;
describe('a wallet', () => {
  test('places an order', () => {
    orders += 1;
    expect(orders).toBe(1);
  });
  test('sees the order placed before it (1 + 1) [leftover]', () => {
    expect(orders).toBe(1);
  });
  test.skip('is skipped by its author', () => {
    expect(true).toBe(false);
  });
});
test('a top-level test with $pecial ^chars.*', () => {
  expect(orders).toBe(0);
});
describe('twice', () => {
  test('the same name', () => {});
});
describe('twice', () => {
  test('the same name', () => {});
});
`;

describe('exactNamePattern: what -t matches to select one test', () => {
  it('matches the describe and test names joined by spaces, and nothing longer or shorter', () => {
    const pattern = exactNamePattern(['a wallet', 'places an order']);
    expect(pattern.test('a wallet places an order')).toBe(true);
    expect(pattern.test('a wallet places an order twice')).toBe(false);
    expect(pattern.test('in a wallet places an order')).toBe(false);
    expect(pattern.test('places an order')).toBe(false);
  });

  it('takes regular-expression characters in a name literally', () => {
    const pattern = exactNamePattern(['refunds (partial) 5+5 [x] $1.00 ^a|b \\ {2}?*']);
    expect(pattern.test('refunds (partial) 5+5 [x] $1.00 ^a|b \\ {2}?*')).toBe(true);
    expect(pattern.test('refunds partial 55 x 1X00 a')).toBe(false);
  });
});

describe('test:alone over a planted project', () => {
  let root = '';
  let run: { status: number | null; stdout: string; stderr: string };

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'coa-test-alone-'));
    writeFileSync(join(root, 'vitest.config.mjs'), "export default { test: { globals: true, include: ['**/*.check.ts'], pool: 'forks' } };\n");
    writeFileSync(join(root, 'wallet.check.ts'), PLANTED_TESTS);
    run = spawnSync(process.execPath, [SCRIPT, '--config', 'vitest.config.mjs'], { cwd: root, encoding: 'utf8', timeout: TOOL_DEADLINE_MS });
  }, TOOL_DEADLINE_MS + 10_000);

  afterAll(() => {
    if (root !== '') rmSync(root, { recursive: true, force: true });
  });

  it('names the test that fails alone, with the command that reproduces it and its error, and exits 1', () => {
    expect(run.stderr).toBe('');
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^FAIL wallet\.check\.ts > a wallet > sees the order placed before it \(1 \+ 1\) \[leftover\] \(/m);
    expect(run.stdout).toContain("npx vitest run wallet.check.ts -t '^a wallet sees the order placed before it \\(1 \\+ 1\\) \\[leftover\\]$'");
    expect(run.stdout).toMatch(/^ {5}AssertionError: expected \+0 to be 1.*\n {5}\s+at .*wallet\.check\.ts:9:20/m);
    expect(run.stdout).toContain('failed alone: wallet.check.ts > a wallet > sees the order placed before it (1 + 1) [leftover]');
  });

  it('runs every other test alone and passes it, the top-level one with regex characters in its name included', () => {
    expect(run.stdout).toMatch(/^ok {3}wallet\.check\.ts > a wallet > places an order \(/m);
    expect(run.stdout).toMatch(/^ok {3}wallet\.check\.ts > a top-level test with \$pecial \^chars\.\* \(/m);
    expect(run.stdout.match(/^ok {3}wallet\.check\.ts > twice > the same name \(/gm)).toHaveLength(2);
  });

  it('leaves out the tests their authors skip, and counts what it ran', () => {
    expect(run.stdout).not.toContain('is skipped by its author');
    expect(run.stdout).toMatch(/^5 tests run alone in \d+ s \(\d+\.\d\d s a test\): 1 failed alone, 0 skipped themselves$/m);
  });

  it('names a full name two tests share, which -t cannot select alone', () => {
    expect(run.stdout).toContain('name shared, -t cannot run one alone: wallet.check.ts > twice the same name (2 tests)');
  });
});
