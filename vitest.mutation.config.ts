import { defineConfig } from 'vitest/config';

/**
 * The test files Stryker runs against each mutant (`npm run test:mutation`,
 * stryker.config.json): the fast files that exercise src/ledger, src/wal
 * and src/money in this process. Files that run the built server as a
 * child process (test/crash, the bench checks) cannot see a mutant, so they
 * are left out, and so is the build step. The simulator runs fewer seeds
 * than in the suite, enough to reach every fault path.
 *
 * MUTATION_SCOPE narrows the files for a run over part of the code:
 * `rules` (`npm run test:mutation:rules`) to the pure tests of the money
 * rules (rules.ts and src/money), `wal` (`npm run test:mutation:wal`) to
 * the tests of the group commit and the commit log (test/wal/fail-stop.test.ts
 * aside: it swaps a table's encoder, which a process shared with other files
 * does not undo; the contract suite's fail-stop cases cover the same rule).
 */
const ALL = ['test/ledger/**/*.test.ts', 'test/money/**/*.test.ts', 'test/wal/**/*.test.ts', 'test/sim/**/*.test.ts', 'test/ops/verify*.test.ts'];
const SCOPES: Record<string, string[]> = {
  rules: ['test/ledger/rules.test.ts', 'test/ledger/decide.test.ts', 'test/ledger/replay/*.test.ts', 'test/money/money.test.ts', 'test/ops/verify-invariants.test.ts'],
  wal: ['test/wal/contract.test.ts', 'test/wal/group-commit.test.ts', 'test/wal/commit-log.test.ts', 'test/wal/log-first.test.ts', 'test/wal/durability.test.ts', 'test/wal/log-mode-server.test.ts'],
};

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
    include: SCOPES[process.env['MUTATION_SCOPE'] ?? ''] ?? ALL,
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    env: { SIM_SEEDS: '20', SIM_STEPS: '150' },
  },
});
