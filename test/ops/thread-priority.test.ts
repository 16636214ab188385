/**
 * THREADPOOL_NICE on the real server process: libuv's thread pool (where
 * lmdb-js runs the write transactions) gets the nice value, every other
 * thread of the process keeps its own, and 0 leaves them all alone.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnServer } from '../helpers/server-process.js';
import { loadConfig } from '../../src/app/config.js';

/** Nice value per thread id of a process (field 19 of /proc/PID/task/TID/stat; the name in field 2 has no spaces here). */
function niceByThread(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1').split(' ');
    out.set(Number(tid), Number(fields[18]));
  }
  return out;
}

describe.runIf(process.platform === 'linux')('THREADPOOL_NICE (real server process)', () => {
  const cases: { env: Record<string, string>; nice: number; poolThreads: number }[] = [
    { env: {}, nice: 5, poolThreads: 4 },
    { env: { THREADPOOL_NICE: '12', UV_THREADPOOL_SIZE: '2' }, nice: 12, poolThreads: 2 },
    { env: { THREADPOOL_NICE: '0' }, nice: 0, poolThreads: 0 },
  ];
  for (const { env, nice, poolThreads } of cases) {
    it(`${JSON.stringify(env)}: ${poolThreads} pool threads at nice ${nice}, the rest as started`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-nice-'));
      const server = await spawnServer(dir, 'nice-token', env);
      try {
        const pid = server.child.pid!;
        const base = niceByThread(pid).get(pid)!;
        const lowered = [...niceByThread(pid)].filter(([, n]) => n !== base);
        expect(lowered.map(([, n]) => n)).toEqual(Array(poolThreads).fill(nice));
        expect(lowered.map(([tid]) => tid)).not.toContain(pid);
        const line = server.output().split('\n').find((l) => l.includes('thread pool'));
        if (poolThreads > 0) expect(JSON.parse(line!)).toMatchObject({ nice, threads: lowered.map(([tid]) => tid).sort((a, b) => a - b) });
        else expect(JSON.parse(line!)).toMatchObject({ reason: 'THREADPOOL_NICE is 0' });
        // The pool still does its work: an order is committed and acknowledged.
        const r = await fetch(`${server.adminUrl}/admin/v1/accounts`, {
          method: 'POST',
          headers: { authorization: 'Bearer nice-token', 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'a' }),
        });
        expect(r.status).toBe(201);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
        rmSync(dir, { recursive: true, force: true });
      }
    }, 30_000);
  }
});

describe('THREADPOOL_NICE', () => {
  it('is checked at start-up: 0 to 19, else a sentence naming the variable', () => {
    expect(loadConfig([], {}).threadpoolNice).toBe(5);
    expect(loadConfig([], { THREADPOOL_NICE: '19' }).threadpoolNice).toBe(19);
    for (const bad of ['20', '-1', 'low', '2.5']) {
      expect(() => loadConfig([], { THREADPOOL_NICE: bad })).toThrow(/^THREADPOOL_NICE \(--threadpool-nice\) must be an integer from 0 to 19/);
    }
  });
});
