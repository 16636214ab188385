/**
 * Lists every function in `src/` longer than FUNCTION_LINES_MAX lines (the
 * length a reader takes in at once). A declarative table, such as a route
 * table or a schema built inside a function, is exempt when the line above
 * the function says `// declarative table` with the reason.
 *
 * `node dist/scripts/long-functions.js` prints them and exits 1 if any;
 * test/architecture/function-length.test.ts runs the same check.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import ts from 'typescript';
import { sourceFiles } from './source-files.js';

export const FUNCTION_LINES_MAX = 70;
const EXEMPT = /\/\/ declarative table\b/;

export interface LongFunction {
  file: string;
  line: number;
  name: string;
  lines: number;
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = node as { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent !== undefined && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))) return parent.name.getText(source);
  return '(anonymous)';
}

/** The functions of one file's text over the limit. */
export function longFunctionsIn(file: string, text: string, max = FUNCTION_LINES_MAX): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const lines = text.split('\n');
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as { body?: ts.Node }).body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const count = end - start + 1;
      const statementLine = source.getLineAndCharacterOfPosition((ts.isVariableDeclaration(node.parent) ? node.parent.parent.parent : node).getStart(source)).line;
      const exempt = statementLine > 0 && EXEMPT.test(lines[statementLine - 1] ?? '');
      if (count > max && !exempt) found.push({ file, line: start + 1, name: nameOf(node, source), lines: count });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

export function longFunctions(dir: string, max = FUNCTION_LINES_MAX): LongFunction[] {
  return sourceFiles(dir).flatMap((file) => longFunctionsIn(relative(process.cwd(), file), readFileSync(file, 'utf8'), max));
}

if (process.argv[1] !== undefined && import.meta.url === new URL(process.argv[1], 'file://').href) {
  const found = longFunctions('src');
  for (const f of found) process.stdout.write(`${f.file}:${f.line} ${f.name}: ${f.lines} lines\n`);
  process.stdout.write(`${found.length} function(s) over ${FUNCTION_LINES_MAX} lines\n`);
  process.exitCode = found.length === 0 ? 0 : 1;
}
