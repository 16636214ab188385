/**
 * Reading an order's JSON body (src/http/transport/json-request.ts): the
 * Content-Type check for the type nearly every client sends, which is
 * recognised as it is, against one with a parameter, which takes the
 * general path (split at ';', trimmed, lower-cased) that every type took
 * before; and the whole parse of an order body.
 *
 *   npm run build && node dist/bench/micro/run.js jsonRequest
 */
import { Bench } from 'tinybench';
import { isJsonContentType, parseJson } from '../../src/http/transport/json-request.js';

const TIME_MS = 300;

export async function jsonRequest(print: (bench: Bench) => void): Promise<void> {
  const bench = new Bench({ name: 'reading an order body', time: TIME_MS });
  const body = Buffer.from(JSON.stringify({ service: 1, target: 'https://instagram.com/p/abcdef', quantity: 1000 }));
  // Fresh strings, as each request's header is.
  const plain = (): string => 'application/' + 'json'.slice(0);
  const withParameter = (): string => 'application/json; ' + 'charset=utf-8'.slice(0);
  let sink = 0;
  bench
    .add("isJsonContentType('application/json; charset=utf-8'): the general path", () => {
      sink += isJsonContentType(withParameter()) ? 1 : 0;
    })
    .add("isJsonContentType('application/json'): recognised as it is", () => {
      sink += isJsonContentType(plain()) ? 1 : 0;
    })
    .add('parseJson of an order body', () => {
      sink += parseJson('application/json', body).ok ? 1 : 0;
    });
  await bench.run();
  print(bench);
  if (sink === 0) throw new Error('the bench bodies are JSON');
}
