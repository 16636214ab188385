/**
 * The server's operator jobs, one at a time: a verify or a snapshot reads
 * the whole store, so two at once would only double the load on a busy
 * server and give the operator nothing more. A request while one runs is
 * refused with `JobRunning` (the admin API answers 409 CONFLICT naming the
 * running job); the operator retries when it has finished.
 *
 * Each job runs in a child process (job-client.ts) on the store's directory.
 */
import { resolve } from 'node:path';
import type { VerifyReport } from '../ledger/index.js';
import type { Clock } from '../platform/index.js';
import { runJob, type JobControl, type JobMemory } from './job-client.js';
import type { CopyPace } from './paced-copy.js';
import type { SnapshotReport, SnapshotResult } from './snapshot-report.js';

export interface OperatorJobsOptions {
  /** The snapshot copy's rate (SNAPSHOT_MB_PER_SECOND). */
  pace: CopyPace;
  /** Times the last snapshot's start and length. */
  clock: Clock;
  /** Hears how much memory each job's process used (for the log). */
  onDone?: (job: 'verify' | 'snapshot', memory: JobMemory) => void;
}

export class JobRunning extends Error {
  constructor(readonly running: 'verify' | 'snapshot') {
    super(`A ${running} is already running; only one verify or snapshot runs at a time, so try again when it has finished.`);
    this.name = 'JobRunning';
  }
}

/** The running job and how far its replay is (null figures until its first report; a snapshot reports once its copy is made). */
export interface JobProgress {
  job: 'verify' | 'snapshot';
  events: number | null;
  total: number | null;
}

export class OperatorJobs {
  private running: 'verify' | 'snapshot' | null = null;
  private reported: { events: number; total: number } | null = null;
  private readonly closing = new AbortController();
  private pauseNext: (() => Promise<void>) | null = null;
  private last: SnapshotResult | null = null;

  constructor(
    private readonly dataDir: string,
    private readonly options: OperatorJobsOptions,
  ) {}

  /** The last snapshot's outcome since the server started, or null before the first. */
  get lastSnapshot(): SnapshotResult | null {
    return this.last;
  }

  /** The job running now, or null. */
  get current(): 'verify' | 'snapshot' | null {
    return this.running;
  }

  /** The running job's progress, or null when none runs (the CLI draws it on the operator's terminal). */
  progress(): JobProgress | null {
    if (this.running === null) return null;
    return { job: this.running, events: this.reported?.events ?? null, total: this.reported?.total ?? null };
  }

  async verify(): Promise<VerifyReport> {
    const done = await this.exclusive('verify', (control) => runJob({ job: 'verify', dir: this.dataDir }, control));
    return done.report;
  }

  /** Takes a verified snapshot into `out` and records its outcome (a refusal because a job runs is not an outcome). */
  async snapshot(out: string, scheduled = false): Promise<SnapshotReport> {
    const { clock, pace } = this.options;
    const atMs = clock.wallMs();
    const startedMs = clock.monotonicMs();
    const result = (bytes: number, error: string | null): SnapshotResult => ({ atMs, durationMs: clock.monotonicMs() - startedMs, bytes, path: resolve(out), scheduled, error });
    try {
      const done = await this.exclusive('snapshot', (control) => runJob({ job: 'snapshot', dir: this.dataDir, out, pace }, control));
      this.last = result(done.snapshot.bytes, null);
      return done.snapshot;
    } catch (error) {
      if (!(error instanceof JobRunning)) this.last = result(0, (error as Error).message);
      throw error;
    }
  }

  /**
   * For tests: the next job stops once its process holds its read
   * transaction, until `release` is called; `paused` resolves at that moment.
   */
  holdNext(): { paused: Promise<void>; release: () => void } {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let paused!: () => void;
    const reached = new Promise<void>((resolve) => (paused = resolve));
    this.pauseNext = () => {
      paused();
      return released;
    };
    return { paused: reached, release };
  }

  /** Stops a running job (the server is closing). */
  close(): void {
    this.closing.abort();
  }

  private async exclusive<T extends { memory: JobMemory }>(job: 'verify' | 'snapshot', start: (control: JobControl) => Promise<T>): Promise<T> {
    if (this.running !== null) throw new JobRunning(this.running);
    this.running = job;
    this.reported = null;
    const control: JobControl = { signal: this.closing.signal, onProgress: (events, total) => (this.reported = { events, total }) };
    if (this.pauseNext !== null) control.onPaused = this.pauseNext;
    this.pauseNext = null;
    try {
      const done = await start(control);
      this.options.onDone?.(job, done.memory);
      return done;
    } finally {
      this.running = null;
      this.reported = null;
    }
  }
}
