/**
 * `npm run cluster` (the built dist/scripts/cluster/run.js) as an operator
 * runs it: it prints a URL and a demo key that take an order through
 * HAProxy, and Ctrl-C leaves no process and no temporary directory behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, descendants } from '../helpers/processes.js';
import { postgresMissing } from '../helpers/replicated-group.js';

type HaproxyModule = typeof import('../../scripts/cluster/haproxy.js');
const haproxy = (await import('../../dist/scripts/cluster/haproxy.js' as string)) as HaproxyModule;
const missing = (await postgresMissing()) ?? (haproxy.haproxyPresent() ? null : haproxy.HAPROXY_MISSING);
if (missing !== null) console.log(`npm run cluster test skipped: ${missing}`);

const RUN = 'dist/scripts/cluster/run.js';

function waitPrinted(child: ChildProcess, marker: string, output: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (output().includes(marker)) resolve();
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`npm run cluster exited (${code}) before printing "${marker}":\n${output()}`)));
  });
}

function printed(text: string, label: string): string {
  const match = new RegExp(`${label}: (\\S+)`).exec(text);
  if (match === null) throw new Error(`npm run cluster did not print "${label}":\n${text}`);
  return match[1]!;
}

describe.skipIf(missing !== null)('npm run cluster', () => {
  let child: ChildProcess | null = null;
  afterAll(() => {
    if (child !== null && child.exitCode === null) child.kill('SIGINT');
  });

  it('prints a URL and a demo key that place an order through HAProxy, and stops every process on Ctrl-C', async () => {
    let output = '';
    child = spawn(process.execPath, [RUN], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    await waitPrinted(child, 'Ctrl-C stops everything.', () => output);

    const url = printed(output, 'Customer API \\(HAProxy\\)');
    const response = await fetch(`${url}/api/v1/order`, {
      method: 'POST',
      headers: { 'x-api-key': printed(output, 'Demo API key'), 'x-api-secret': printed(output, 'Demo API secret'), 'content-type': 'application/json' },
      body: JSON.stringify({ service: Number(printed(output, 'Demo service')), target: 'https://instagram.com/example', quantity: 100 }),
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ ok: true, status: 'pending', charge: 0.1 });

    const started = descendants(child.pid!);
    // PostgreSQL primary and standby, two nodes, HAProxy, at the least.
    expect(started.length).toBeGreaterThanOrEqual(5);
    const root = /node data and logs in (\S+)\)/.exec(output)![1]!;
    expect(existsSync(root)).toBe(true);

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(started.filter(alive)).toEqual([]);
    expect(existsSync(root)).toBe(false);
  }, 180_000);
});
