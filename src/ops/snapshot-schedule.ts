/**
 * Scheduled snapshots (SNAPSHOT_EVERY, SNAPSHOT_DIR, SNAPSHOT_KEEP): every
 * period after the last one finished, a verified snapshot through the
 * operator jobs (a child process, one job at a time) into a new directory
 * of SNAPSHOT_DIR named for its start time, then the oldest scheduled
 * snapshots beyond SNAPSHOT_KEEP are removed. Only directories with the
 * schedule's names are ever removed; anything else in SNAPSHOT_DIR is left
 * alone. A snapshot that fails is logged and recorded (`/metrics`,
 * `coa stats`), its directory is left for inspection, and the schedule goes
 * on; one that finds a verify or snapshot running tries again a minute later.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type Clock, PRIVATE_DIR_MODE } from '../platform/index.js';
import { SNAPSHOT_BUSY_RETRY_MS } from './limits.js';
import { JobRunning, type OperatorJobs } from './operator-jobs.js';
import type { SnapshotResult } from './snapshot-report.js';

/** A scheduled snapshot's directory: `snapshot-` and its UTC start time, so names sort in time order. */
const SCHEDULED_NAME = /^snapshot-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z(-\d+)?$/;

export interface SnapshotScheduleConfig {
  everyMs: number;
  dir: string;
  keep: number;
}

export interface SnapshotScheduleHooks {
  /** Resolves once everything acknowledged is durable, so the snapshot holds it. */
  beforeSnapshot: () => Promise<void>;
  /** Hears each outcome (for the log). */
  onResult: (result: SnapshotResult, removed: string[]) => void;
  /** Hears a failure of the schedule's own work (creating SNAPSHOT_DIR, removing old snapshots). */
  onError: (error: unknown) => void;
}

export class SnapshotSchedule {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly jobs: OperatorJobs,
    private readonly config: SnapshotScheduleConfig,
    private readonly clock: Clock,
    private readonly hooks: SnapshotScheduleHooks,
  ) {}

  start(): void {
    this.stopped = false;
    this.after(this.config.everyMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * Takes one scheduled snapshot now and prunes; null when a verify or
   * snapshot was running, so none was taken.
   */
  async runOnce(): Promise<SnapshotResult | null> {
    const dir = resolve(this.config.dir);
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await this.hooks.beforeSnapshot();
    try {
      await this.jobs.snapshot(this.freshPath(dir), true);
    } catch (error) {
      if (error instanceof JobRunning) return null;
    }
    const result = this.jobs.lastSnapshot!;
    const removed = result.error === null ? await this.prune(dir) : [];
    this.hooks.onResult(result, removed);
    return result;
  }

  private after(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.runOnce().then(
        (result) => this.after(result === null ? SNAPSHOT_BUSY_RETRY_MS : this.config.everyMs),
        (error: unknown) => {
          this.hooks.onError(error);
          this.after(this.config.everyMs);
        },
      );
    }, delayMs);
    this.timer.unref();
  }

  /** `snapshot-2026-11-27T05-40-00Z`, with `-2`, `-3`… when one of that second exists. */
  private freshPath(dir: string): string {
    const stamp = new Date(this.clock.wallMs()).toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/:/g, '-');
    let path = join(dir, `snapshot-${stamp}`);
    for (let n = 2; existsSync(path); n++) path = join(dir, `snapshot-${stamp}-${n}`);
    return path;
  }

  /** Removes the oldest scheduled snapshots beyond `keep`; returns their paths. */
  private async prune(dir: string): Promise<string[]> {
    const names = (await readdir(dir)).filter((name) => SCHEDULED_NAME.test(name)).sort(byTime);
    const old = names.slice(0, Math.max(0, names.length - this.config.keep)).map((name) => join(dir, name));
    for (const path of old) await rm(path, { recursive: true, force: true });
    return old;
  }
}

/** Time order of scheduled names: by stamp, then by the `-n` of one second. */
function byTime(a: string, b: string): number {
  const [stampA, nA] = split(a);
  const [stampB, nB] = split(b);
  return stampA === stampB ? nA - nB : stampA < stampB ? -1 : 1;
}

function split(name: string): [string, number] {
  const m = /^(.*Z)(?:-(\d+))?$/.exec(name)!;
  return [m[1]!, m[2] === undefined ? 1 : Number(m[2])];
}
