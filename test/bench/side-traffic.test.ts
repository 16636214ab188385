/**
 * The webhooks benchmark's reference traffic (`bench:http --side-traffic
 * N`): two processes of their own post signed messages to each other until
 * stopped, and neither outlives the bench, even one killed without stopping
 * them. A reference that silently sent nothing would make the machine look
 * free; one left running would slow every later run.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startSideTraffic } from '../../bench/http/side-traffic.js';
import { waitFor } from '../helpers/wait-for.js';
import { alive } from '../helpers/processes.js';

const SIDE_TRAFFIC_DEADLINE_MS = 20_000;

const until = (check: () => Promise<boolean>, what: string): Promise<void> => waitFor(what, check, SIDE_TRAFFIC_DEADLINE_MS);

describe('side traffic for the webhooks benchmark', () => {
  it('posts between its own two processes until closed', async () => {
    const side = await startSideTraffic(100);
    try {
      await until(async () => (await side.answered()) >= 20, '20 posts answered');
      const before = await side.answered();
      await until(async () => (await side.answered()) > before, 'more posts answered later');
    } finally {
      await side.close();
    }
  });

  it('leaves nothing behind when the bench that started it dies without stopping it', async () => {
    const script = `import('${pathToFileURL(resolve('dist/bench/http/side-traffic.js')).href}').then(async ({ startSideTraffic }) => process.send((await startSideTraffic(50)).pids))`;
    const bench = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const [pids] = (await Promise.race([once(bench, 'message'), once(bench, 'exit').then(() => Promise.reject(new Error('the bench process ended before starting side traffic')))])) as [number[]];
    expect(pids).toHaveLength(2);
    expect(pids.every(alive)).toBe(true);
    bench.kill('SIGKILL');
    await until(async () => !pids.some(alive), 'both side-traffic processes gone');
  });

  it('says so, rather than waiting for ever, when its receiver has died', async () => {
    const side = await startSideTraffic(50);
    try {
      process.kill(side.pids[0]!, 'SIGKILL');
      await expect(side.answered()).rejects.toThrow(/its receive process ended/);
    } finally {
      await side.close();
    }
  });

  it('refuses a rate that is not a whole number of posts a second', async () => {
    await expect(startSideTraffic(0)).rejects.toThrow(/whole number of posts a second/);
    await expect(startSideTraffic(2.5)).rejects.toThrow(/whole number of posts a second/);
  });
});
