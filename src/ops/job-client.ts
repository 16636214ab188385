/**
 * Runs one operator job (verify, snapshot) in a child Node process and
 * returns its result. The child opens the data directory itself, read-only,
 * with its own read transaction: the server's event loop, heap and LMDB
 * environment are not involved, and the memory the job touches (its heap and
 * the store's pages it maps) is the child's, released when it exits.
 *
 * The child runs at a lower CPU priority (nice `JOB_NICE`), so that on a
 * busy machine the serving process and its commit thread are scheduled
 * first and the job takes what is left.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { VerifyReport } from '../ledger/index.js';
import type { CopyPace } from './paced-copy.js';
import type { SnapshotReport } from './snapshot-report.js';
import { JOB_NICE, JOB_STDERR_BYTES_MAX } from './limits.js';

export type JobRequest = { job: 'verify'; dir: string } | { job: 'snapshot'; dir: string; out: string; pace: CopyPace };

/** The child's memory when the job ended (Linux /proc; zeros elsewhere). */
export interface JobMemory {
  /** Peak resident set (VmHWM): heap, code and mapped store pages together. */
  peakRssBytes: number;
  /** Resident anonymous memory (heap and buffers) at the end. */
  rssAnonBytes: number;
  /** Resident file-backed memory (mostly the store's mapped pages, which the kernel can drop) at the end. */
  rssFileBytes: number;
}

export type VerifyDone = { job: 'verify'; report: VerifyReport; memory: JobMemory };
export type SnapshotDone = { job: 'snapshot'; snapshot: SnapshotReport; memory: JobMemory };

/** Messages between the server and the job process (structured clone: BigInt totals pass as they are). */
export type ToChild = { type: 'start'; request: JobRequest; pause: boolean } | { type: 'resume' };
export type FromChild =
  | { type: 'paused' }
  /** How far the job's replay is: events replayed of the log's total (a snapshot's once its copy is made). */
  | { type: 'progress'; events: number; total: number }
  | { type: 'done'; result: VerifyDone | SnapshotDone }
  | { type: 'failed'; message: string };

export interface JobControl {
  /**
   * Called once the child holds its read transaction, before it reads
   * anything; the job goes on when the returned promise settles. For tests
   * that need a job to be running at a known point.
   */
  onPaused?: () => Promise<void>;
  /** Aborting kills the child (the server is closing). */
  signal?: AbortSignal;
  /** Hears the child's progress reports. */
  onProgress?: (events: number, total: number) => void;
}

/**
 * The compiled child script. Compiled code finds it beside this file; under
 * vitest this file runs from its TypeScript source and the child from the
 * build in dist/ (the test setup builds it first).
 */
function childScript(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return join(dirname(here), 'job-process.js');
  return join(dirname(here), '..', '..', 'dist', 'src', 'ops', 'job-process.js');
}

export function runJob(request: Extract<JobRequest, { job: 'verify' }>, control?: JobControl): Promise<VerifyDone>;
export function runJob(request: Extract<JobRequest, { job: 'snapshot' }>, control?: JobControl): Promise<SnapshotDone>;
export function runJob(request: JobRequest, control: JobControl = {}): Promise<VerifyDone | SnapshotDone> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = fork(childScript(), [], { execArgv: [], serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    } catch (error) {
      reject(error as Error);
      return;
    }
    let settled = false;
    let stderr = '';
    const settle = (error: Error | null, result?: VerifyDone | SnapshotDone): void => {
      if (settled) return;
      settled = true;
      control.signal?.removeEventListener('abort', abort);
      if (error === null) resolve(result!);
      else reject(error);
    };
    const abort = (): void => {
      child.kill('SIGKILL');
      settle(new Error(`The ${request.job} was stopped because the server is closing.`));
    };
    if (control.signal?.aborted === true) return abort();
    control.signal?.addEventListener('abort', abort);
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, JOB_NICE);
      } catch {
        // Not permitted or not supported here: the job runs at normal priority.
      }
    }
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-JOB_STDERR_BYTES_MAX);
    });
    child.on('message', (raw) => {
      const message = raw as FromChild;
      if (message.type === 'paused') {
        void (control.onPaused?.() ?? Promise.resolve()).finally(() => {
          if (child.connected) child.send({ type: 'resume' } satisfies ToChild);
        });
      } else if (message.type === 'progress') {
        control.onProgress?.(message.events, message.total);
      } else if (message.type === 'done') {
        settle(null, message.result);
      } else {
        settle(new Error(message.message));
      }
    });
    child.on('error', (error) => settle(error));
    child.on('exit', (code, signal) => {
      settle(new Error(`The ${request.job} process stopped before it finished (${signal ?? `exit code ${code}`})${stderr === '' ? '.' : `: ${stderr.trim()}`}`));
    });
    child.send({ type: 'start', request, pause: control.onPaused !== undefined } satisfies ToChild);
  });
}
