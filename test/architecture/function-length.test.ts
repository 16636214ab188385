/**
 * No function in `src/` is longer than a reader takes in at once
 * (FUNCTION_LINES_MAX), except a declarative table marked as one. The
 * checker is scripts/long-functions.ts, which an operator runs as
 * `node dist/scripts/long-functions.js` to list them.
 */
import { describe, expect, it } from 'vitest';
import { FUNCTION_LINES_MAX, longFunctions, longFunctionsIn } from '../../scripts/long-functions.js';

/** A function of `bodyLines` statements, with what stands on the line above it. */
function functionText(name: string, bodyLines: number, above = ''): string {
  const body = Array.from({ length: bodyLines }, (_, i) => `  total += ${i};`).join('\n');
  return `${above}\nexport function ${name}(): number {\n  let total = 0;\n${body}\n  return total;\n}\n`;
}

describe('function length', () => {
  it(`no function in src/ is over ${FUNCTION_LINES_MAX} lines`, () => {
    expect(longFunctions('src').map((f) => `${f.file}:${f.line} ${f.name}: ${f.lines} lines`)).toEqual([]);
  });

  it('names a long function, a long method and a long arrow; passes one at the limit and a marked table', () => {
    const atLimit = functionText('fits', FUNCTION_LINES_MAX - 4);
    const tooLong = functionText('sprawls', FUNCTION_LINES_MAX - 3);
    const table = functionText('routes', 120, '// declarative table: one row per route, read as a list');
    const method = `class Worker {\n  run(): void {\n${'    void 0;\n'.repeat(FUNCTION_LINES_MAX)}  }\n}\n`;
    const arrow = `const handle = (): void => {\n${'  void 0;\n'.repeat(FUNCTION_LINES_MAX)}};\n`;
    const found = longFunctionsIn('x.ts', [atLimit, tooLong, table, method, arrow].join('\n'));
    expect(found.map((f) => [f.name, f.lines])).toEqual([
      ['sprawls', FUNCTION_LINES_MAX + 1],
      ['run', FUNCTION_LINES_MAX + 2],
      ['handle', FUNCTION_LINES_MAX + 2],
    ]);
  });
});
