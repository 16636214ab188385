import { defineConfig } from 'vitest/config';

/**
 * Two projects, run side by side. Every test file makes its own ports
 * (port 0) and its own temporary directories, so files run in parallel:
 * `main` holds most of the suite, two files at a time; `crash` holds the
 * slow fault tests (test/crash: real server processes killed, traced,
 * power cut), one file at a time beside it, so that they neither wait for
 * the rest nor crowd it out. `npx vitest run --project crash` runs only
 * them.
 */
export default defineConfig({
  test: {
    globalSetup: ['test/global-build.ts'],
    // uWebSockets.js and LMDB are native addons: run each file in its own
    // process rather than in worker threads.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: { name: 'main', include: ['test/**/*.test.ts'], exclude: ['test/crash/**'], maxWorkers: 2 },
      },
      {
        extends: true,
        test: { name: 'crash', include: ['test/crash/**/*.test.ts'], maxWorkers: 1 },
      },
    ],
  },
});
