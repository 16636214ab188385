/**
 * The parts of `src/` import each other in one direction only (see
 * docs/ARCHITECTURE.md). This test reads every source file's imports, the
 * root included, and fails on an import that goes the wrong way, on a folder
 * that is not in the table, on any file at the root but `main.ts`, and on
 * any circle of imports between files. Inside src/http it holds the
 * concerns to their own table: no API dialect imports another, and the
 * shared concerns import no dialect.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceFiles, withTree } from './source-tree.js';

/**
 * What each part may import besides itself. `app` is the composition root:
 * it imports the parts, and no part imports it; `main.ts`, the only file at
 * the root, imports `app` and `platform`.
 */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  // platform holds `assert`: the parts that check invariants import it.
  platform: [],
  money: ['platform'],
  errors: [],
  ids: ['platform'],
  // The ledger and money take platform's assert and units of time and size.
  ledger: ['money', 'errors', 'platform'],
  // The records customers receive, shared by the HTTP answers and the webhook messages.
  wire: ['ledger', 'money'],
  wal: ['ledger', 'money', 'ids', 'platform'],
  actors: ['ledger', 'wal', 'money', 'ids', 'platform', 'wire', 'forcejoin'],
  ops: ['ledger', 'wal', 'money', 'platform'],
  forcejoin: ['platform'],
  // Webhooks: endpoints, the outbox the actors write (through an injected function) and its dispatcher.
  webhooks: ['ledger', 'wal', 'money', 'platform', 'wire'],
  http: ['actors', 'ledger', 'wal', 'ops', 'money', 'errors', 'ids', 'platform', 'wire', 'forcejoin', 'webhooks'],
  // The CLI talks to the server over HTTP; `verify --data-dir` runs ops' verify itself on a stopped server's files.
  // It reads the admin API's page sizes from ops/limits.ts itself, which imports nothing, so a command does not load LMDB.
  cli: ['ops', 'money', 'ids', 'platform'],
  // The typed client for customers: openapi-fetch over the generated types; it imports no part of the server.
  client: [],
  // Replicated mode: the group's log, lease and follower in PostgreSQL; the WAL's seam (DurableLog, the LMDB group commit) is all it knows of storage.
  replication: ['wal', 'platform'],
  app: ['actors', 'forcejoin', 'http', 'ids', 'ledger', 'money', 'ops', 'platform', 'replication', 'wal', 'webhooks', 'wire', 'errors'],
};

const ROOT_FILES: Readonly<Record<string, readonly string[]>> = { main: ['app', 'platform'] };


/** `ledger` for src/ledger/x.ts; `main.ts` (root) for src/main.ts. */
function partOf(src: string, file: string): { part: string; root: boolean } {
  const parts = relative(src, file).split(sep);
  if (parts.length === 1) return { part: parts[0]!.replace(/\.ts$/, ''), root: true };
  return { part: parts[0]!, root: false };
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

function relativeImports(file: string): string[] {
  const found: string[] = [];
  for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const spec = m[1] ?? m[2]!;
    if (spec.startsWith('.')) found.push(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
  }
  return found;
}

/**
 * Another part is imported through its `index.ts`, its public surface. The
 * exceptions are leaf files that import nothing: a part's bounds
 * (`limits.ts`) and platform's units (`units.ts`), which the CLI and the
 * ledger take directly so that a CLI command loads neither the logger nor
 * LMDB.
 */
const PUBLIC_FILES = new Set(['index.ts', 'limits.ts', 'units.ts']);

/** Every import that breaks the table, as "from → to" lines. */
function violations(src: string): string[] {
  const bad: string[] = [];
  for (const file of sourceFiles(src)) {
    const from = partOf(src, file);
    const allowed = from.root ? ROOT_FILES[from.part] : MAY_IMPORT[from.part];
    if (allowed === undefined) {
      bad.push(from.root ? `src/${from.part}.ts is at the root: only main.ts may be` : `src/${from.part} is not in the table of parts: add it to docs/ARCHITECTURE.md and MAY_IMPORT`);
      continue;
    }
    for (const target of relativeImports(file)) {
      const to = partOf(src, target);
      if (to.part === from.part && !to.root) continue;
      if (to.root || !allowed.includes(to.part)) bad.push(`${relative(src, file)} → ${to.root ? `${to.part}.ts` : `src/${to.part}`}`);
      else if (!PUBLIC_FILES.has(basename(target))) bad.push(`${relative(src, file)} → ${relative(src, target)} (import src/${to.part}/index.ts)`);
    }
  }
  return [...new Set(bad)].sort();
}

/**
 * Inside src/http, what each concern may import besides itself: the shared
 * concerns (the transport, the guards, order intake, the lifecycle
 * operations) import no dialect and not the admin API; the dialects (v1,
 * v2) and admin build on them and never on each other. Every concern may
 * import the handlers' context (context.ts) and the bounds of the HTTP part
 * (limits.ts); only the folder's own root files (index.ts, mount.ts) import
 * the dialects.
 */
const HTTP_MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  transport: [],
  guards: ['transport'],
  orders: ['transport'],
  lifecycle: ['transport', 'orders'],
  v1: ['transport', 'guards', 'orders', 'lifecycle'],
  v2: ['transport', 'guards', 'orders', 'lifecycle'],
  admin: ['transport', 'orders'],
};

const HTTP_SHARED_ROOT_FILES: readonly string[] = ['context.ts', 'limits.ts'];

/** Every import inside src/http that breaks HTTP_MAY_IMPORT, as "from → to" lines. */
function httpViolations(src: string): string[] {
  const http = join(src, 'http');
  if (!existsSync(http)) return [];
  const bad: string[] = [];
  for (const file of sourceFiles(http)) {
    const from = relative(http, file).split(sep);
    if (from.length === 1) continue;
    const allowed = HTTP_MAY_IMPORT[from[0]!];
    if (allowed === undefined) {
      bad.push(`src/http/${from[0]} is not in the table of http concerns: add it to HTTP_MAY_IMPORT`);
      continue;
    }
    for (const target of relativeImports(file)) {
      const to = relative(http, target).split(sep);
      if (to[0] === '..') continue;
      if (to.length === 1 ? !HTTP_SHARED_ROOT_FILES.includes(to[0]!) : to[0] !== from[0] && !allowed.includes(to[0]!)) {
        bad.push(`${relative(src, file)} → src/http/${to.length === 1 ? to[0] : to[0] + '/'}`);
      }
    }
  }
  return [...new Set(bad)].sort();
}

/** Every circle of imports between files (each once, as "a → b → a"). */
function circles(src: string): string[] {
  const graph = new Map(sourceFiles(src).map((file) => [file, relativeImports(file)]));
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next].map((f) => relative(src, f)).join(' → '));
      else if (state.get(next) === undefined) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (state.get(file) === undefined) visit(file);
  return found.sort();
}

/** The table itself has no circle: a part never reaches itself through others. */
function tableCircles(): string[] {
  const found: string[] = [];
  const reach = (part: string, seen: string[]): void => {
    for (const next of MAY_IMPORT[part] ?? []) {
      if (next === seen[0]) found.push([...seen, next].join(' → '));
      else if (!seen.includes(next)) reach(next, [...seen, next]);
    }
  };
  for (const part of Object.keys(MAY_IMPORT)) reach(part, [part]);
  return found;
}


describe('architecture', () => {
  it('every import in src/ follows the one direction of docs/ARCHITECTURE.md', () => {
    expect(violations(resolve('src'))).toEqual([]);
  });

  it('no file in src/ imports itself back through others', () => {
    expect(circles(resolve('src'))).toEqual([]);
  });

  it('inside src/http, no dialect imports another and the shared concerns import no dialect', () => {
    expect(httpViolations(resolve('src'))).toEqual([]);
  });

  it('the table of parts has no circle', () => {
    expect(tableCircles()).toEqual([]);
  });

  it("reports a wrong-way import, an import of the composition root, of another part's internals, a root file and an undeclared folder", () => {
    withTree(
      {
        'wal/store.ts': 'export const x = 1;\n',
        'wal/index.ts': "export { x } from './store.js';\n",
        'wal/limits.ts': 'export const LIMIT = 1;\n',
        'ops/snap.ts': "import { x } from '../wal/store.js';\nimport { x as y } from '../wal/index.js';\nimport { LIMIT } from '../wal/limits.js';\nexport const s = x + y + LIMIT;\n",
        'ledger/rules.ts': "import { x } from '../wal/store.js';\nexport const y = x;\n",
        'ops/verify.ts': "import { start } from '../app/server.js';\nexport const z = start;\n",
        'app/server.ts': "import { y } from '../ledger/rules.js';\nexport const start = y;\n",
        'app/index.ts': "export { start } from './server.js';\n",
        'main.ts': "import { start } from './app/index.js';\nimport { q } from './render.js';\nstart;q;\n",
        'render.ts': "export const q = 1;\n",
        'gadgets/thing.ts': 'export const w = 1;\n',
      },
      (dir) =>
        expect(violations(dir)).toEqual([
          'app/server.ts → ledger/rules.ts (import src/ledger/index.ts)',
          'ledger/rules.ts → src/wal',
          'main.ts → render.ts',
          'ops/snap.ts → wal/store.ts (import src/wal/index.ts)',
          'ops/verify.ts → src/app',
          'src/gadgets is not in the table of parts: add it to docs/ARCHITECTURE.md and MAY_IMPORT',
          'src/render.ts is at the root: only main.ts may be',
        ]),
    );
  });

  it('reports, inside src/http, a dialect importing another, a shared concern importing a dialect, a root file other than the context, and an undeclared concern', () => {
    withTree(
      {
        'http/context.ts': 'export const c = 1;\n',
        'http/mount.ts': "import { v } from './v1/routes.js';\nexport const m = v;\n",
        'http/transport/reply.ts': "import { e } from '../v2/errors.js';\nexport const r = e;\n",
        'http/v1/routes.ts': "import { e } from '../v2/errors.js';\nimport { c } from '../context.js';\nexport const v = e + c;\n",
        'http/v2/errors.ts': 'export const e = 1;\n',
        'http/v2/routes.ts': "import { r } from '../transport/reply.js';\nimport { m } from '../mount.js';\nexport const w = r + m;\n",
        'http/gadgets/thing.ts': 'export const g = 1;\n',
      },
      (dir) =>
        expect(httpViolations(dir)).toEqual([
          'http/transport/reply.ts → src/http/v2/',
          'http/v1/routes.ts → src/http/v2/',
          'http/v2/routes.ts → src/http/mount.ts',
          'src/http/gadgets is not in the table of http concerns: add it to HTTP_MAY_IMPORT',
        ]),
    );
  });

  it('reports a circle between files of one part', () => {
    withTree(
      {
        'ops/a.ts': "import type { B } from './b.js';\nexport type A = B;\n",
        'ops/b.ts': "import type { C } from './c.js';\nexport type B = C;\n",
        'ops/c.ts': "import type { A } from './a.js';\nexport type C = A | 1;\n",
      },
      (dir) => expect(circles(dir)).toEqual(['ops/a.ts → ops/b.ts → ops/c.ts → ops/a.ts']),
    );
  });
});
