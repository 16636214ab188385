/**
 * The narration check (scripts/narration.ts) finds the lines that tell how
 * the work went and lets the product's own words through. It runs here as
 * an operator runs it, `node dist/scripts/narration.js ROOT`, over a planted
 * tree. The planted lines are assembled from pieces so that this file itself
 * stays clean for the check over the real tree, which runs here too.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = 'dist/scripts/narration.js';
const roots: string[] = [];

/** A temporary tree holding `files` (path relative to the root → text). */
function plant(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'coa-narration-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function check(root: string): { status: number | null; lines: string[] } {
  const run = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });
  return { status: run.status, lines: run.stdout.split('\n').filter((l) => l !== '') };
}

/** Lines a reader of the product would rightly read: none of them narrates. */
const CLEAN = [
  '# credit-order-api',
  'A scenario session opens a fresh data directory and seeds the accounts.',
  'The peer commits each order in its own PostgreSQL session with synchronous_commit on.',
  'During a rotation the old secret still signs beside the new one for 24 hours.',
  'A cursor must be the next_cursor of an earlier page.',
  'The key used to seal webhook secrets lives outside the database.',
  'After a revoke the API v2 key no longer works.',
  'Stop it with Ctrl-C; it answers what is in flight and exits 0.',
  'Figures: `npm run bench:http` at commit 25baf74, disk sync latency 0.15 ms.',
].join('\n');

/** One narrating line per pattern family, each split inside a word so that this file does not narrate. */
const PLANTED = [
  ['Measured in sess', 'ion 18.'],
  ['Fixed for iss', 'ue 16.'],
  ['The batch size was tr', 'ied before and lost.'],
  ['The sweep previ', 'ously ran inside the commit.'],
  ['The dispatcher polled; it us', 'ed to poll every second.'],
  ['The cursor is no', 'w kept in meta instead of the queue table.'],
  ['What th', 'is session measured on its disk.'],
].map((pieces) => pieces.join(''));

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('narration check', () => {
  it('finds no line of this project that narrates the work', () => {
    expect(check('.')).toEqual({ status: 0, lines: [] });
  });

  it('passes a tree that says what the product is and does', () => {
    const root = plant({ 'README.md': CLEAN, 'docs/guide.md': CLEAN, 'src/part/file.ts': `// ${CLEAN.split('\n')[2]}\nexport const x = 1;\n` });
    expect(check(root)).toEqual({ status: 0, lines: [] });
  });

  it('lists each narrating line as file:line: text and exits 1', () => {
    const body = PLANTED.map((l) => `// ${l}`).join('\n');
    const root = plant({ 'README.md': CLEAN, 'test/part/file.test.ts': `${body}\nexport const y = 2;\n` });
    const { status, lines } = check(root);
    expect(status).toBe(1);
    expect(lines).toEqual(PLANTED.map((l, i) => `test/part/file.test.ts:${i + 1}: // ${l}`));
  });

  it('reads README.md, docs/, bench/, scripts/ and src/ alike, and skips dist/ and the generated OpenAPI document', () => {
    const line = PLANTED[0]!;
    const root = plant({
      'README.md': `${CLEAN}\n${line}\n`,
      'docs/guide.md': line,
      'bench/RESULTS.md': line,
      'scripts/tool.ts': `// ${line}`,
      'src/part/file.ts': `/** ${line} */`,
      'dist/src/part/file.js': `// ${line}`,
      'docs/openapi.json': JSON.stringify({ description: line }),
    });
    const { status, lines } = check(root);
    expect(status).toBe(1);
    expect(lines.map((l) => l.slice(0, l.indexOf(':'))).sort()).toEqual(['README.md', 'bench/RESULTS.md', 'docs/guide.md', 'scripts/tool.ts', 'src/part/file.ts']);
  });
});
