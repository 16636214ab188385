/**
 * `npm run bench:v2`: API v2's add against the v1 order path, in one run:
 * the same build, alternated (v1, v2, v1, v2, …), a fresh server each time,
 * each server given several short runs of durable orders at 64 connections
 * (the v2 scenario sends `POST /api/v2` form-encoded, as PHP's curl does;
 * the ledger cross-check counts only real orders, so an error answered 200
 * cannot pass for one). Prints both means, v2 ÷ v1 with its standard error,
 * and the disk's sync latency.
 */
import { variant } from './interleave.js';
import { SERVER_MAIN } from './server-process.js';
import { runComparison } from './two-variants.js';

runComparison({
  name: 'bench:v2',
  script: 'dist/bench/http/v2-vs-v1.js',
  what: 'API',
  accountsHelp: 'funded accounts',
  defaultAccounts: '10000',
  variants: [variant('v1', SERVER_MAIN, {}, ['--scenario', 'order']), variant('v2', SERVER_MAIN, {}, ['--scenario', 'v2'])],
  ratioName: 'v2 ÷ v1',
});
