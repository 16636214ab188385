/**
 * Every bound of a part (a queue, batch, window, size, count or time) is
 * written once, in that part's `limits.ts`, with its reason; operator
 * settings and their defaults are written in `src/app/config.ts`. This test
 * reads every source file and fails on a numeric literal of four or more
 * digits, or one written with `_` separators, anywhere else: such a number is
 * almost always a limit that belongs in a limits file, or a second copy of
 * one. A line that holds such a number and is not a limit (a unit such as
 * milliseconds per second, a format's magic number, demo data) says so with
 * a `// not a limit: <reason>` comment.
 */
import { readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles, withTree } from './source-tree.js';

/** Files whose numbers are limits or settings by design. */
function isLimitsFile(path: string): boolean {
  return path.endsWith(`${sep}limits.ts`) || path === join('app', 'config.ts');
}

/** The marker: the words "not a limit", a colon and a reason of a few words. */
const MARKER = /\/\/ not a limit: \S+( \S+){2,}/;

/** Four or more digits (after a 0x, 0o or 0b prefix, if any), or digits grouped with `_`. */
function looksLikeLimit(literal: string): boolean {
  if (literal.includes('_')) return true;
  const digits = literal.replace(/^0[xob]/i, '').replace(/n$/, '').split(/[.eE]/)[0]!;
  return digits.replace(/^0+(?=.)/, '').length >= 4;
}


/** Every unmarked limit-like literal outside the limits files, as "file:line literal". */
function strayLiterals(src: string): string[] {
  const found: string[] = [];
  for (const path of sourceFiles(src)) {
    const file = relative(src, path);
    if (isLimitsFile(file)) continue;
    const text = readFileSync(path, 'utf8');
    const lines = text.split('\n');
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    const visit = (node: ts.Node): void => {
      if ((ts.isNumericLiteral(node) || ts.isBigIntLiteral(node)) && looksLikeLimit(node.getText(source))) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        if (!MARKER.test(lines[line]!)) found.push(`${file.split(sep).join('/')}:${line + 1} ${node.getText(source)}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}


describe('limits', () => {
  it('every number of four or more digits in src/ is in a limits file or the settings table, or says why it is not a limit', () => {
    expect(strayLiterals(resolve('src'))).toEqual([]);
  });

  it('reports a limit written outside the limits files, and only that', () => {
    withTree(
      {
        'wal/limits.ts': '/** Reason. */\nexport const PENDING_ENTRIES_MAX = 200_000;\n',
        'app/config.ts': "export const SETTINGS = [{ def: '1024', max: 65536 }];\n",
        'wal/queue.ts': [
          "import { PENDING_ENTRIES_MAX } from './limits.js';",
          'const BATCH_ENTRIES_MAX = 4096;',
          'const pendingMax = 200_000;',
          'const inFlight = 64;',
          'const bytes = 0x10000;',
          'const micro = 1_000_000n;',
          '// 123456 in a comment is prose',
          "const text = 'at most 2048 characters';",
          'const msPerSecond = 1_000; // not a limit: milliseconds per second',
          'const bare = 1_000; // not a limit',
          'export const all = [PENDING_ENTRIES_MAX, BATCH_ENTRIES_MAX, pendingMax, inFlight, bytes, micro, text, msPerSecond, bare];',
        ].join('\n'),
      },
      (dir) =>
        expect(strayLiterals(dir)).toEqual([
          'wal/queue.ts:2 4096',
          'wal/queue.ts:3 200_000',
          'wal/queue.ts:5 0x10000',
          'wal/queue.ts:6 1_000_000n',
          'wal/queue.ts:10 1_000',
        ]),
    );
  });
});
