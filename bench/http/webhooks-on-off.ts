/**
 * `npm run bench:webhooks`: the order path with webhooks on against off, in
 * one run: the same build, alternated (off, on, on, off, off, on, …), a fresh server
 * each time, several short runs of durable orders at 64 connections each.
 * "On": every load account has an endpoint (order.updated) at a local
 * receiver (bench:http --webhooks), so every order also writes an outbox
 * row in its own commit and is then delivered, signed, and its row removed
 * in a commit of its own. "Off": the same endpoints registered disabled
 * (bench:http --webhooks --webhooks-disabled), so no message is written. Prints both means, on ÷ off with its standard
 * error (target ≥ 0.90) and the disk's sync latency.
 */
import { variant } from './interleave.js';
import { SERVER_MAIN } from './server-process.js';
import { runComparison } from './two-variants.js';

runComparison({
  name: 'bench:webhooks',
  script: 'dist/bench/http/webhooks-on-off.js',
  what: 'variant',
  accountsHelp: 'funded accounts, each with an endpoint when on',
  defaultAccounts: '2000',
  // "Off" makes the same admin requests and registers the same endpoints,
  // disabled, so that the two variants differ only in the messages (a
  // control, not a correction: the admin requests themselves measure no
  // cost).
  variants: [variant('webhooks off', SERVER_MAIN, {}, ['--webhooks', '--webhooks-disabled']), variant('webhooks on', SERVER_MAIN, {}, ['--webhooks'])],
  ratioName: 'on ÷ off',
});
