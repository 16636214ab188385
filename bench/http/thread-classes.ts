/**
 * Which thread of a Node server is which, so that bench:cpu can split the
 * server's CPU into the event loop, the libuv thread pool (where lmdb-js
 * runs its write transactions, and so the commits' B-tree work, pwrite and
 * fdatasync) and the rest (V8's platform workers, which do concurrent
 * marking and compilation, V8's delayed-task scheduler, the inspector's I/O
 * starter).
 *
 * The thread's name (/proc/<pid>/task/<tid>/comm) says so where the runtime
 * names its threads (libuv 1.48 and later call theirs `libuv-worker`).
 * Node 20 ships libuv 1.46 and names none: every thread is `node`. Then the
 * outermost frames of each thread's stack tell them apart (libuv's `worker`
 * in threadpool.c, `PlatformWorkerThread`, `DelayedTaskScheduler`,
 * `StartIoThreadMain`), read once per server with gdb in batch mode, which
 * stops the process for the few seconds it takes (before the measured run).
 * Without gdb the pool and the rest are reported together.
 */
import { spawnSync } from 'node:child_process';
import { threadRuntimes } from './procstat.js';

export type ThreadClass = 'event loop' | 'thread pool' | 'rest';

export const THREAD_CLASSES: readonly ThreadClass[] = ['event loop', 'thread pool', 'rest'];

/** What one thread is, in words, e.g. "libuv thread pool worker". */
export type ThreadRole = string;

export const ROLE_LOOP = 'event loop (main thread)';
export const ROLE_POOL = 'libuv thread pool worker';
const ROLE_UNKNOWN = 'unidentified';

/** Names the runtime gives its threads, and, from gdb, the functions its threads start in. */
const ROLE_PATTERNS: readonly { pattern: RegExp; role: ThreadRole }[] = [
  { pattern: /libuv-worker|\bworker \(arg=.*threadpool\.c|threadpool\.c.*\bworker\b/, role: ROLE_POOL },
  { pattern: /PlatformWorkerThread|V8Worker/, role: 'V8 platform worker' },
  { pattern: /DelayedTaskScheduler|DelayedTaskSch/, role: 'V8 delayed-task scheduler' },
  { pattern: /StartIoThreadMain|SignalInspector|node::inspector/, role: 'inspector I/O starter' },
];

/** A thread's role from its id, its name and (when gdb read it) the text of its stack. */
export function roleOf(pid: number, tid: number, comm: string, stack = ''): ThreadRole {
  if (tid === pid) return ROLE_LOOP;
  for (const { pattern, role } of ROLE_PATTERNS) if (pattern.test(comm) || pattern.test(stack)) return role;
  return ROLE_UNKNOWN;
}

export function classOf(role: ThreadRole): ThreadClass {
  if (role === ROLE_LOOP) return 'event loop';
  if (role === ROLE_POOL) return 'thread pool';
  return 'rest';
}

/** gdb's `thread apply all bt` output → each thread's stack text, by thread id (LWP). */
export function parseGdbStacks(text: string): Map<number, string> {
  const stacks = new Map<number, string>();
  const header = /^Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP (\d+)\)[^\n]*$/gm;
  const heads = [...text.matchAll(header)];
  heads.forEach((m, i) => {
    const end = heads[i + 1]?.index ?? text.length;
    stacks.set(Number(m[1]), text.slice(m.index! + m[0].length, end));
  });
  return stacks;
}

export interface ThreadMap {
  /** Role by thread id, for every thread alive when it was read. */
  roles: Map<number, ThreadRole>;
  /** False when the pool could not be told apart from the rest (no names, no gdb). */
  poolKnown: boolean;
}

/** The stacks of every thread of `pid` from gdb, or null when gdb is missing or fails. */
function gdbStacks(pid: number): Map<number, string> | null {
  const result = spawnSync('gdb', ['-batch', '-nx', '-p', String(pid), '-ex', 'thread apply all bt -4'], { encoding: 'utf8', maxBuffer: 16 * 2 ** 20 });
  if (result.error !== undefined || result.status !== 0) return null;
  const stacks = parseGdbStacks(result.stdout);
  return stacks.size === 0 ? null : stacks;
}

/** Reads the threads of `pid` and names each one; asks gdb only when the names do not tell. */
export function mapThreads(pid: number, useGdb: boolean): ThreadMap {
  const threads = threadRuntimes(pid) ?? [];
  const named = threads.map((t) => roleOf(pid, t.tid, t.comm));
  const stacks = useGdb && named.includes(ROLE_UNKNOWN) ? gdbStacks(pid) : null;
  const roles = new Map(threads.map((t) => [t.tid, roleOf(pid, t.tid, t.comm, stacks?.get(t.tid) ?? '')]));
  return { roles, poolKnown: [...roles.values()].includes(ROLE_POOL) };
}

/** "event loop (main thread) 1; libuv thread pool worker 4; V8 platform worker 4; …", for the report. */
export function describeThreads(map: ThreadMap): string {
  const counts = new Map<ThreadRole, number>();
  for (const role of map.roles.values()) counts.set(role, (counts.get(role) ?? 0) + 1);
  return [...counts.entries()].map(([role, n]) => `${role} ×${n} (${classOf(role)})`).join(', ');
}
