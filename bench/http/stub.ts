/**
 * A do-nothing order endpoint for the load generator's ceiling check
 * (ceiling.ts, run-all.ts): uWebSockets.js (through the server's own wrapper), reading
 * the body and answering 201 with the same headers and about the same body
 * as the real POST /api/v1/order, without any work. Run as a child process
 * with the port as its argument; says 'ready' over IPC once listening.
 */
import { createApp } from '../../src/http/transport/uws.js';
import { answerWhenBodyEnds } from './whole-body.js';

const port = Number(process.argv[2]);
const BODY = '{"ok":true,"order":"AbCdEfGhIjKlMnOpQrStUv","charge":1,"status":"pending","balance":999999990}';
let counter = 0;

createApp()
  .any('/*', (res) => {
    answerWhenBodyEnds(res, () => {
      res.writeStatus('201 Created');
      res.writeHeader('Content-Type', 'application/json');
      res.writeHeader('Request-Id', `req_0123abcd${(counter++).toString(36)}`);
      res.writeHeader('RateLimit-Policy', '"default";q=100000000;w=60');
      res.writeHeader('RateLimit', '"default";r=99999990;t=1');
      res.writeHeader('X-RateLimit-Limit', '100000000');
      res.writeHeader('X-RateLimit-Remaining', '99999990');
      res.writeHeader('X-RateLimit-Reset', '1');
      res.end(BODY);
    });
  })
  .listen('127.0.0.1', port, (socket) => {
    if (socket === false) {
      process.stderr.write(`stub: cannot listen on 127.0.0.1:${port}\n`);
      process.exit(1);
    }
    process.send?.('ready');
  });
