/**
 * The parts of `src/` import each other in one direction only (see
 * docs/ARCHITECTURE.md). This test reads every source file's imports and
 * fails on an import that goes the wrong way, or on a folder that is not in
 * the table: a new part of the product must say where it sits.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';


/**
 * What each part may import, besides itself and the shared root modules
 * (`src/*.ts`: clock, ids, errors, log, config …). The composition root
 * (`src/server.ts`, `src/main.ts`) is a root module and imports everything;
 * no folder imports it.
 */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  money: [],
  ledger: ['money'],
  wal: ['ledger', 'money'],
  actors: ['ledger', 'wal', 'money', 'forcejoin'],
  ops: ['ledger', 'wal', 'money'],
  forcejoin: [],
  http: ['actors', 'ledger', 'wal', 'ops', 'money', 'forcejoin', 'webhooks'],
  // Webhooks: endpoints, the outbox the actors write (through an injected function) and its dispatcher.
  webhooks: ['ledger', 'wal', 'money'],
  // The CLI talks to the server over HTTP; `verify --data-dir` runs ops' verify itself on a stopped server's files.
  cli: ['ops', 'money'],
};

/** Root modules that wire the parts together: no part may import them. */
const COMPOSITION_ROOT = new Set(['server', 'main', 'seed']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** `ledger` for src/ledger/x.ts; the module's own name for a root module such as src/clock.ts. */
function partOf(SRC: string, file: string): { part: string; root: boolean } {
  const parts = relative(SRC, file).split(sep);
  if (parts.length === 1) return { part: parts[0]!.replace(/\.ts$/, ''), root: true };
  return { part: parts[0]!, root: false };
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2]!;
    if (spec.startsWith('.')) found.push(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
  }
  return found;
}

/** Every import that breaks the table, as "from → to" lines. */
function violations(SRC: string): string[] {
  const bad: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = partOf(SRC, file);
    if (!from.root && MAY_IMPORT[from.part] === undefined) {
      bad.push(`src/${from.part} is not in the table of parts: add it to docs/ARCHITECTURE.md and MAY_IMPORT`);
      continue;
    }
    for (const target of relativeImports(file)) {
      const to = partOf(SRC, target);
      if (from.root) continue; // the root modules may import any part
      if (to.root) {
        if (COMPOSITION_ROOT.has(to.part)) bad.push(`${relative(SRC, file)} → ${to.part}.ts (the composition root)`);
        continue;
      }
      if (to.part === from.part) continue;
      if (!MAY_IMPORT[from.part]!.includes(to.part)) bad.push(`${relative(SRC, file)} → src/${to.part}`);
    }
  }
  return [...new Set(bad)].sort();
}

describe('architecture', () => {
  it('every import in src/ follows the one direction of docs/ARCHITECTURE.md', () => {
    expect(violations(resolve('src'))).toEqual([]);
  });

  it('reports a wrong-way import, an import of the composition root and an undeclared folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'coa-arch-'));
    try {
      const write = (path: string, text: string): void => {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      };
      write('wal/store.ts', 'export const x = 1;\n');
      write('ledger/rules.ts', "import { x } from '../wal/store.js';\nexport const y = x;\n");
      write('ops/verify.ts', "import { start } from '../server.js';\nexport const z = start;\n");
      write('server.ts', "import { y } from './ledger/rules.js';\nexport const start = y;\n");
      write('gadgets/thing.ts', 'export const w = 1;\n');
      expect(violations(dir)).toEqual([
        'ledger/rules.ts → src/wal',
        'ops/verify.ts → server.ts (the composition root)',
        'src/gadgets is not in the table of parts: add it to docs/ARCHITECTURE.md and MAY_IMPORT',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
