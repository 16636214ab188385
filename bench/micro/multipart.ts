/**
 * The multipart/form-data reader of API v2 (src/http/v2/multipart.ts)
 * against busboy on the body PHP's curl sends for an `add` with its fields
 * as an array: five text fields. The server has the whole body in memory
 * when it parses (its size limit is enforced while it arrives), so each
 * task parses one buffered body to its fields; busboy's includes the
 * stream it needs and the wait for its `close`, which it emits
 * asynchronously.
 *
 *   npm run build && node dist/bench/micro/multipart.js
 */
import busboy from 'busboy';
import { Bench } from 'tinybench';
import { parseMultipart } from '../../src/http/v2/multipart.js';

const TIME_MS = 1_000;
const FIELDS_MAX = 64;
const boundary = '------------------------d74496d66958873e';
const fields = { key: '0123456789abcdef0123456789abcdef', action: 'add', service: '12', link: 'https://instagram.com/p/abcdef', quantity: '1000' };
const body = Buffer.from(
  Object.entries(fields)
    .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
    .join('') + `--${boundary}--\r\n`,
);
const contentType = `multipart/form-data; boundary=${boundary}`;

function viaBusboy(): Promise<[string, string][]> {
  return new Promise((resolve, reject) => {
    const out: [string, string][] = [];
    const reader = busboy({ headers: { 'content-type': contentType }, limits: { fields: FIELDS_MAX, files: 0 }, defParamCharset: 'utf8' });
    reader.on('field', (name, value) => out.push([name, value]));
    reader.on('error', reject);
    reader.on('close', () => resolve(out));
    reader.end(body);
  });
}

const own = parseMultipart(body, boundary, FIELDS_MAX);
const theirs = await viaBusboy();
if (!own.ok || JSON.stringify(own.fields) !== JSON.stringify(theirs)) throw new Error('the two readers disagree on the benchmark body');

const bench = new Bench({ name: 'multipart reader, one 5-field body', time: TIME_MS });
bench.add('src/http/v2/multipart.ts (synchronous)', () => void parseMultipart(body, boundary, FIELDS_MAX));
bench.add('busboy 1.6 (stream, close awaited)', async () => void (await viaBusboy()));
await bench.run();
process.stdout.write(`\n| task | ops/s | median µs | p99 µs |\n|---|---:|---:|---:|\n`);
for (const task of bench.tasks) {
  const r = task.result as { throughput?: { mean: number }; latency?: { p50?: number; p99?: number } } | undefined;
  const us = (ms: number | undefined) => ((ms ?? 0) * 1000).toFixed(1); // not a limit: microseconds per millisecond
  process.stdout.write(`| ${task.name} | ${Math.round(r?.throughput?.mean ?? 0).toLocaleString('en')} | ${us(r?.latency?.p50)} | ${us(r?.latency?.p99)} |\n`);
}
