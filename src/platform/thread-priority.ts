/**
 * Runs the libuv thread pool, where lmdb-js runs each write transaction
 * (the commit and its fdatasync), at a lower priority than the event loop.
 *
 * Why: when that thread wakes (work queued, or a sync finished) on a busy
 * machine, Linux lets it preempt whatever runs, often the event loop in the
 * middle of a burst of requests, whose replies and next batch then wait.
 * At nice 5 it waits for a free core instead. Measured with the order
 * benchmark (docs/DECISIONS.md). Raising a nice value needs no privilege.
 *
 * Which threads: the pool's threads are found by asking them. Opening
 * `/proc/thread-self/stat` from the pool (any asynchronous fs call runs
 * there) reads the stat line of the pool thread that opened it, whose first
 * field is its thread id. Enough reads at once reach every pool thread
 * (UV_THREADPOOL_SIZE, default 4); the pool's threads live as long as the
 * process, so their ids stay valid.
 */
import { readFile } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { THREADPOOL_THREADS_DEFAULT, THREADPOOL_THREADS_MAX } from './limits.js';

export type ThreadPoolPriority = { nice: number; threads: number[] } | { skipped: string };

/** The pool's size as libuv reads it from UV_THREADPOOL_SIZE, or null when that is not a plain count. */
function poolSize(env: NodeJS.ProcessEnv): number | null {
  const raw = env['UV_THREADPOOL_SIZE'];
  if (raw === undefined || raw === '') return THREADPOOL_THREADS_DEFAULT;
  return /^\d+$/.test(raw) && Number(raw) >= 1 && Number(raw) <= THREADPOOL_THREADS_MAX ? Number(raw) : null;
}

/** Thread ids of the pool threads that answered, at most `rounds` rounds of reads. */
async function poolThreadIds(expected: number, rounds = 20): Promise<number[]> {
  const seen = new Set<number>();
  for (let round = 0; round < rounds && seen.size < expected; round++) {
    const lines = await Promise.all(Array.from({ length: expected * 8 }, () => readFile('/proc/thread-self/stat', 'latin1')));
    for (const line of lines) seen.add(Number(line.slice(0, line.indexOf(' '))));
  }
  seen.delete(process.pid); // never the event loop's own thread
  return [...seen].sort((a, b) => a - b);
}

export async function lowerThreadPoolPriority(nice: number, env: NodeJS.ProcessEnv = process.env): Promise<ThreadPoolPriority> {
  if (nice === 0) return { skipped: 'THREADPOOL_NICE is 0' };
  if (process.platform !== 'linux') return { skipped: `per-thread priorities are only set on Linux, not ${process.platform}` };
  const expected = poolSize(env);
  if (expected === null) return { skipped: `UV_THREADPOOL_SIZE=${String(env['UV_THREADPOOL_SIZE'])} is not a plain thread count` };
  try {
    const threads = await poolThreadIds(expected);
    if (threads.length !== expected) return { skipped: `found ${threads.length} of the thread pool's ${expected} threads` };
    for (const id of threads) setPriority(id, nice);
    return { nice, threads };
  } catch (error) {
    return { skipped: `could not set the thread pool's priority: ${(error as Error).message}` };
  }
}
