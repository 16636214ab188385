import { defineConfig } from 'vitest/config';

/**
 * The test files Stryker runs against each mutant of src/ledger, src/wal and
 * src/money (`npm run test:mutation`, stryker.config.json): the fast files
 * that exercise those parts in this process. Files that run the built server
 * as a child process (test/crash, the bench checks) cannot see a mutant, so
 * they are left out, and so is the build step. The simulator runs fewer seeds
 * than in the suite, enough to reach every fault path.
 */
export default defineConfig({
  plugins: [
    {
      // Stryker's vitest runner asks for worker threads. uWebSockets.js and
      // LMDB are native addons: a worker thread that ends with one of their
      // handles open aborts the process, so each test file runs in a child
      // process of its own, as in vitest.config.ts.
      name: 'native-addons-run-in-forks',
      configureVitest({ project }) {
        project.config.pool = 'forks';
      },
    },
  ],
  test: {
    include: [
      'test/ledger/**/*.test.ts',
      'test/money/**/*.test.ts',
      'test/wal/**/*.test.ts',
      'test/sim/**/*.test.ts',
      'test/ops/verify*.test.ts',
    ],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    env: { SIM_SEEDS: '20', SIM_STEPS: '150' },
  },
});
