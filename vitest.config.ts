import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-build.ts'],
    // uWebSockets.js and LMDB are native addons: run each file in its own
    // process rather than in worker threads.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
