/**
 * The server's operator jobs, one at a time: a verify or a snapshot reads
 * the whole store, so two at once would only double the load on a busy
 * server and give the operator nothing more. A request while one runs is
 * refused with `JobRunning` (the admin API answers 409 CONFLICT naming the
 * running job); the operator retries when it has finished.
 *
 * Each job runs in a child process (job-client.ts) on the store's directory.
 */
import type { VerifyReport } from '../ledger/index.js';
import { runJob, type JobControl, type JobMemory } from './job-client.js';
import type { SnapshotReport } from './snapshot.js';

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

  /** `onDone` hears how much memory each job's process used (for the log). */
  constructor(
    private readonly dataDir: string,
    private readonly onDone: (job: 'verify' | 'snapshot', memory: JobMemory) => void = () => {},
  ) {}

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

  async snapshot(out: string): Promise<SnapshotReport> {
    const done = await this.exclusive('snapshot', (control) => runJob({ job: 'snapshot', dir: this.dataDir, out }, control));
    return done.snapshot;
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
      this.onDone(job, done.memory);
      return done;
    } finally {
      this.running = null;
      this.reported = null;
    }
  }
}
