/**
 * Runs every test of the given files alone, one at a time, and reports each
 * one that fails alone: a test that passes beside its neighbours but fails
 * on its own depends on what another test left behind (an order, a balance,
 * a held job), and fails the day someone runs it with `-t` or the order of
 * the file changes.
 *
 * `npm run test:alone -- [--config FILE] [FILTER...]` takes vitest's file
 * filters (files or directories, as `npx vitest run` does; none means every
 * test file of the configuration). It starts one vitest instance and keeps
 * it: the global set-up (the build) runs once and vite's transforms are
 * cached, so each test pays only for its own file's fresh process, imports
 * and hooks. Each test runs with the anchored, escaped pattern of its full
 * name (what `-t` matches, see test-name-pattern.ts) and its id, so exactly
 * that test and its file's hooks run; the report prints the `npx vitest run
 * FILE -t PATTERN` line that reproduces each failure.
 *
 * It also reports the tests that share their full name with another test
 * of the same file: `-t` cannot select one of them alone. It exits 1 if any
 * test failed alone or a name is shared, 0 otherwise; each test's line and
 * the summary go to stdout, the tests' own output is not shown.
 */
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { createVitest, type TestCase, type TestModule, type Vitest } from 'vitest/node';
import { exactNamePattern, runnerFullName, shellQuote } from './test-name-pattern.js';

/** One test to run alone: its file, the names that make its full name, and vitest's id for it. */
interface AloneCase {
  file: string;
  names: string[];
  id: string;
}

/** What running one test alone came to. */
interface AloneOutcome {
  state: 'passed' | 'failed' | 'skipped';
  errors: string[];
  ms: number;
}

interface Options {
  config: string;
  filters: string[];
}

function parseOptions(args: readonly string[]): Options {
  const options: Options = { config: 'vitest.config.ts', filters: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--config') {
      const value = args[++i];
      if (value === undefined) throw new Error('--config needs a file: --config vitest.config.ts');
      options.config = value;
    } else if (arg.startsWith('-')) {
      throw new Error(`unknown option ${arg}: test:alone takes --config FILE and file or directory filters`);
    } else {
      options.filters.push(arg);
    }
  }
  return options;
}

/** The names from the outermost describe block to the test. */
function namesOf(test: TestCase): string[] {
  const names = [test.name];
  for (let parent = test.parent; parent.type === 'suite'; parent = parent.parent) names.unshift(parent.name);
  return names;
}

function casesOf(module: TestModule): AloneCase[] {
  const cases: AloneCase[] = [];
  for (const test of module.children.allTests()) {
    if (test.options.mode === 'skip' || test.options.mode === 'todo') continue;
    cases.push({ file: module.moduleId, names: namesOf(test), id: test.id });
  }
  return cases;
}

/** Every test of the filtered files, in file order, without running any. */
async function collectCases(vitest: Vitest, filters: readonly string[]): Promise<AloneCase[]> {
  const { testModules, unhandledErrors } = await vitest.collect([...filters]);
  const broken = testModules.flatMap((module) => module.errors().map((error) => `${relative(process.cwd(), module.moduleId)}: ${error.message}`));
  if (broken.length > 0 || unhandledErrors.length > 0) {
    throw new Error(`could not collect the tests:\n${[...broken, ...unhandledErrors.map(String)].join('\n')}`);
  }
  return testModules.sort((a, b) => a.moduleId.localeCompare(b.moduleId)).flatMap(casesOf);
}

/** The full names that more than one test of the same file carries: `-t` cannot run one of them alone. */
function sharedNames(cases: readonly AloneCase[]): string[] {
  const seen = new Map<string, number>();
  for (const c of cases) {
    const key = `${relative(process.cwd(), c.file)} > ${runnerFullName(c.names)}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...seen].filter(([, count]) => count > 1).map(([key, count]) => `${key} (${count} tests)`);
}

/** An error's name and message, then the frames of its stack that are the project's own (vitest's and Node's left out). */
function errorText(error: { name?: string; message?: string; stack?: string }): string {
  const head = `${error.name ?? 'Error'}: ${error.message ?? String(error)}`;
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line) && !/node_modules|node:internal|\(<anonymous>\)/.test(line));
  return stripVTControlCharacters([head, ...frames].join('\n'));
}

/** Runs `c` and its file's hooks, and nothing else of its file. */
async function runAlone(vitest: Vitest, c: AloneCase): Promise<AloneOutcome> {
  const startedMs = performance.now();
  vitest.setGlobalTestNamePattern(exactNamePattern(c.names));
  const spec = vitest.getModuleSpecifications(c.file)[0];
  if (spec === undefined) throw new Error(`vitest has no test file ${c.file}`);
  const single = spec.project.createSpecification(c.file, { testIds: [c.id] });
  const { testModules, unhandledErrors } = await vitest.runTestSpecifications([single]);
  const ms = performance.now() - startedMs;
  const module = testModules.find((m) => m.moduleId === c.file);
  const test = module === undefined ? undefined : [...module.children.allTests()].find((t) => t.id === c.id);
  const errors = [...(module?.errors() ?? []).map(errorText), ...unhandledErrors.map((e) => errorText(e as Error))];
  const result = test?.result();
  if (result === undefined || result.state === 'pending') return { state: 'failed', errors: [...errors, 'the test did not run: its name pattern or id selected nothing'], ms };
  if (result.state === 'failed') return { state: 'failed', errors: [...(result.errors ?? []).map(errorText), ...errors], ms };
  return { state: errors.length > 0 ? 'failed' : result.state, errors, ms };
}

function reproduction(c: AloneCase): string {
  return `npx vitest run ${relative(process.cwd(), c.file)} -t ${shellQuote(exactNamePattern(c.names).source)}`;
}

function report(c: AloneCase, outcome: AloneOutcome): void {
  const label = `${relative(process.cwd(), c.file)} > ${c.names.join(' > ')}`;
  const seconds = (outcome.ms / 1000).toFixed(1);
  process.stdout.write(`${outcome.state === 'failed' ? 'FAIL' : outcome.state === 'skipped' ? 'skip' : 'ok  '} ${label} (${seconds} s)\n`);
  if (outcome.state !== 'failed') return;
  process.stdout.write(`     ${reproduction(c)}\n`);
  for (const error of outcome.errors) process.stdout.write(`${error.replace(/^/gm, '     ')}\n`);
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const vitest = await createVitest('test', { config: options.config, watch: false, reporters: [{}], maxWorkers: 1, onConsoleLog: () => false });
  try {
    const cases = await collectCases(vitest, options.filters);
    const shared = sharedNames(cases);
    const failed: AloneCase[] = [];
    let skipped = 0;
    let totalMs = 0;
    for (const c of cases) {
      const outcome = await runAlone(vitest, c);
      totalMs += outcome.ms;
      if (outcome.state === 'failed') failed.push(c);
      if (outcome.state === 'skipped') skipped++;
      report(c, outcome);
    }
    const perTest = cases.length === 0 ? 0 : totalMs / cases.length / 1000;
    process.stdout.write(`\n${cases.length} tests run alone in ${(totalMs / 1000).toFixed(0)} s (${perTest.toFixed(2)} s a test): ${failed.length} failed alone, ${skipped} skipped themselves\n`);
    for (const c of failed) process.stdout.write(`failed alone: ${relative(process.cwd(), c.file)} > ${c.names.join(' > ')}\n`);
    for (const name of shared) process.stdout.write(`name shared, -t cannot run one alone: ${name}\n`);
    return failed.length > 0 || shared.length > 0 ? 1 : 0;
  } finally {
    await vitest.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`test:alone: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(2);
    },
  );
}
