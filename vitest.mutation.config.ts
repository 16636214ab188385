import { defineConfig } from 'vitest/config';

/**
 * The test files Stryker runs against each mutant (`npm run test:mutation`,
 * stryker.config.json): fast files that exercise the mutated code in this
 * process. MUTATION_SCOPE picks them for the part being mutated, so that a
 * mutant of the ledger never waits for the WAL's tests and the reverse:
 *
 * - `ledger` (src/ledger, src/money): the ledger's and money's own tests,
 *   verify's, and the simulator (fewer seeds than in the suite, enough to
 *   reach every fault path);
 * - `rules` (rules.ts and src/money alone, `npm run test:mutation:rules`):
 *   the pure tests of the money rules;
 * - `wal` (src/wal): the WAL's tests and the replay's LMDB source.
 *
 * Stryker's per-test coverage then runs, for each mutant, only the tests
 * that reached it. Left out everywhere: files that run the built server as
 * a child process (test/crash, the bench checks), which cannot see a
 * mutant, and test/wal/fail-stop.test.ts, which swaps a table's encoder in
 * a process shared with other files (the contract suite's fail-stop cases
 * cover the same rule in-process).
 *
 * A test here normally takes well under a second (a few under load);
 * TEST_MS_MAX ends one that hangs (a mutant that never resolves a promise)
 * when Stryker's own timeout (net time × 1.5 + timeoutMS) has not already.
 */
const TEST_MS_MAX = 30_000; // not a limit: a test's deadline under mutation, long enough for the slowest property and durability tests on a loaded machine
const LEDGER = ['test/ledger/**/*.test.ts', 'test/money/**/*.test.ts', 'test/sim/**/*.test.ts', 'test/ops/verify*.test.ts'];
const WAL = ['test/wal/**/*.test.ts', 'test/ledger/replay/ledger-source.test.ts'];
const SCOPES: Record<string, string[]> = {
  ledger: LEDGER,
  rules: ['test/ledger/rules.test.ts', 'test/ledger/decide.test.ts', 'test/ledger/replay/*.test.ts', 'test/money/money.test.ts', 'test/ops/verify-invariants.test.ts'],
  wal: WAL,
};
const scope = process.env['MUTATION_SCOPE'] ?? '';
const include = SCOPES[scope];
if (include === undefined) throw new Error(`MUTATION_SCOPE must be one of ${Object.keys(SCOPES).join(', ')}, not '${scope}' (npm run test:mutation sets it)`);

export default defineConfig({
  plugins: [
    {
      // Stryker's vitest runner asks for isolated worker threads. uWebSockets.js
      // and LMDB are native addons: a worker thread that ends with one of
      // their handles open aborts the process, so the files run in a child
      // process instead, one reused for every file (not isolated), which
      // saves starting a process and loading the modules for each file.
      name: 'native-addons-run-in-forks',
      configureVitest({ project }) {
        project.config.pool = 'forks';
        project.config.isolate = false;
      },
    },
  ],
  test: {
    include,
    exclude: ['test/wal/fail-stop.test.ts'],
    pool: 'forks',
    testTimeout: TEST_MS_MAX,
    hookTimeout: TEST_MS_MAX,
    env: { SIM_SEEDS: '20', SIM_STEPS: '150' },
  },
});
