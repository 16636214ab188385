/**
 * Every curl line in the README runs, as written, against the real server
 * started on an ephemeral port with the demo seed `npm start` makes, so the
 * README cannot drift from the product. The shell variables the README sets
 * for the reader (`KEY`, `SECRET`, `V2KEY`, `API`) are given the demo
 * account's credentials and the test server's address; an order id or number
 * the README shows in an answer stands for the one the server really gave,
 * in the commands after it. Each answer must be a success (HTTP 2xx, `ok`
 * true on API v1, no `error` on API v2) and hold every field name the
 * README's answer shows; values such as ids and balances may differ.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedIfEmpty, type SeedResult } from '../../src/app/seed.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { requireTool } from '../helpers/tools.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const HAS_CURL = requireTool('curl', "the README's curl examples") === null;

/** The variables a reader of the README sets from what `npm start` printed. */
const VARIABLES = ['KEY', 'SECRET', 'V2KEY', 'API'] as const;

interface Example {
  /** The command as the README writes it, continuation lines joined. */
  command: string;
  /** The answer the README shows under it (its `# ` lines joined), or null. */
  shown: string | null;
  line: number;
}

/** The curl commands of the README's shell blocks, each with the answer shown under it. */
function readmeExamples(markdown: string): Example[] {
  const lines = markdown.split('\n');
  const examples: Example[] = [];
  let inShell = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('```')) {
      inShell = !inShell && /^```(?:sh|bash|shell)\s*$/.test(line);
      continue;
    }
    if (!inShell || !line.startsWith('curl ')) continue;
    const start = i;
    let command = line;
    while (command.endsWith('\\') && i + 1 < lines.length) command = `${command.slice(0, -1).trimEnd()} ${lines[++i]!.trim()}`;
    const shown: string[] = [];
    while (i + 1 < lines.length && lines[i + 1]!.startsWith('#')) shown.push(lines[++i]!.replace(/^#\s*/, ''));
    examples.push({ command, shown: shown.length === 0 ? null : shown.join(''), line: start + 1 });
  }
  return examples;
}

/** The field names an answer shows (`"name":`), in order, without repeats. */
function shownFields(shown: string): string[] {
  return [...new Set([...shown.matchAll(/"([A-Za-z_][A-Za-z0-9_]*)"\s*:/g)].map((m) => m[1]!))];
}

/** Every key of a parsed JSON value, at any depth. */
function keysOf(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) keysOf(v, into);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      into.add(k);
      keysOf(v, into);
    }
  }
  return into;
}

/** The top-level `"order":` value an answer shows (an id or a number), as written. */
function shownOrder(shown: string): string | null {
  const m = /^\{"(?:ok":true,")?order":("?)([A-Za-z0-9_-]+)\1[,}]/.exec(shown);
  return m === null ? null : m[2]!;
}

function run(command: string, env: Record<string, string>): Promise<{ status: number; body: string }> {
  // `-w` appends the status line; `set -u` makes a variable the README never sets an error, not an empty string.
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', `set -u\n${command} -w '\\n%{http_code}'`], { env: { ...process.env, ...env }, timeout: 20_000 }, (error, stdout, stderr) => {
      if (error !== null) return reject(new Error(`${command}\n${stderr || error.message}`));
      const cut = stdout.lastIndexOf('\n');
      resolve({ status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) });
    });
  });
}

describe('the README examples', () => {
  const examples = readmeExamples(README);

  it('are found: a first order on v1, API v2, a webhook registration, each with the answer it shows', () => {
    const paths = examples.map((e) => /\$API(\/api\/v[12][a-z_/]*)/.exec(e.command)?.[1]);
    expect(paths).toEqual(expect.arrayContaining(['/api/v1/balance', '/api/v1/services', '/api/v1/order', '/api/v1/status', '/api/v2', '/api/v1/webhooks']));
    expect(examples.filter((e) => e.shown === null).map((e) => `README.md:${e.line}`)).toEqual([]);
    const used = new Set(examples.flatMap((e) => [...e.command.matchAll(/\$([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!)));
    expect([...used].sort()).toEqual([...VARIABLES].sort());
    // The line that tells the reader to set them, with the address `npm start` serves on.
    expect(README).toMatch(/^KEY=key_… +SECRET=sec_… +V2KEY=… +API=http:\/\/127\.0\.0\.1:8080$/m);
  });

  describe.skipIf(!HAS_CURL)('run with curl against the real server and the demo seed', () => {
    let t: TestServer;
    let seed: SeedResult;

    beforeAll(async () => {
      t = await startTestServer();
      seed = (await seedIfEmpty(t.server.context))!;
    });
    afterAll(() => t.close());

    it('each answers with success and the fields the README shows', async () => {
      const env = { KEY: seed.apiKey, SECRET: seed.apiSecret, V2KEY: seed.v2Key, API: t.url };
      const ids = new Map<string, string>();
      const problems: string[] = [];
      for (const example of examples) {
        let command = example.command;
        for (const [shown, real] of ids) command = command.replace(new RegExp(`\\border=${shown}\\b`, 'g'), `order=${real}`);
        const { status, body } = await run(command, env);
        const where = `README.md:${example.line}`;
        let answer: any;
        try {
          answer = JSON.parse(body);
        } catch {
          problems.push(`${where}: the answer is not JSON: ${body}`);
          continue;
        }
        if (status < 200 || status > 299) problems.push(`${where}: HTTP ${status}: ${body}`);
        if (command.includes('/api/v1/') && answer.ok !== true) problems.push(`${where}: not ok: ${body}`);
        if (command.includes('/api/v2') && 'error' in answer) problems.push(`${where}: API v2 error: ${body}`);
        const keys = keysOf(answer);
        const missing = shownFields(example.shown!).filter((f) => !keys.has(f));
        if (missing.length > 0) problems.push(`${where}: the answer lacks ${missing.join(', ')} that the README shows: ${body}`);
        const order = shownOrder(example.shown!);
        if (order !== null && answer.order !== undefined) ids.set(order, String(answer.order));
      }
      expect(problems).toEqual([]);
    });
  });
});
