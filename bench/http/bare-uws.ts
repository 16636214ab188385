/**
 * The ceiling of bench:cpu: uWebSockets.js used directly, with no code from
 * src/, answering every request with a fixed JSON body. It does what any
 * server must do for the order request and nothing more: it registers
 * `onAborted`, reads the body to its last chunk, and answers 201 with one
 * Content-Type header and a body of the size and shape of a real order
 * answer, corked into one write. Its CPU per request is the unit the issue's
 * targets are stated in: what the order path costs beyond answering HTTP.
 *
 * Run as a child process with the port as its argument; says 'ready' over
 * IPC once listening. Like the server, it refuses uWS's pure-JavaScript
 * fallback and turns off the `uWebSockets: 20` header.
 */
import { createRequire } from 'node:module';
import type * as UwsTypes from '@trufflesuite/uws-js-unofficial';
import { answerWhenBodyEnds } from './whole-body.js';

const require = createRequire(import.meta.url);
const uws = require('@trufflesuite/uws-js-unofficial') as typeof UwsTypes;
const native = uws as unknown as Record<string, unknown>;
if (typeof native['H3App'] !== 'function' || typeof native['_cfg'] !== 'function') {
  process.stderr.write('bare-uws: the uWebSockets.js native binary did not load; a ceiling on the JavaScript fallback would mean nothing\n');
  process.exit(1);
}
(native['_cfg'] as (key: string) => void)('silent');

const port = Number(process.argv[2]);
/** The shape of POST /api/v1/order's 201 answer, with a wallet of the benchmarks' size. */
const BODY = '{"ok":true,"order":"zYLiFtESxERVB71E4toTQw","number":123456,"charge":1,"status":"pending","balance":999876543}';

uws
  .App()
  .post('/*', (res) => {
    answerWhenBodyEnds(res, () => {
      res.writeStatus('201 Created').writeHeader('Content-Type', 'application/json').end(BODY);
    });
  })
  .listen('127.0.0.1', port, (socket) => {
    if (socket === false) {
      process.stderr.write(`bare-uws: cannot listen on 127.0.0.1:${port}\n`);
      process.exit(1);
    }
    process.send?.('ready');
  });
