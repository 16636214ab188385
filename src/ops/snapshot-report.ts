import type { VerifyReport } from '../ledger/index.js';

/** What a snapshot reports: where it is, how big, and the verification of the copy. */
export interface SnapshotReport {
  /** Absolute path of the snapshot directory. */
  path: string;
  /** Size of the copied data file. */
  bytes: number;
  /** Log events in the snapshot. */
  events: number;
  verify: VerifyReport;
}

/** The last snapshot's outcome, for `/metrics` and `coa stats`: taken on request or on the schedule. */
export interface SnapshotResult {
  /** Wall time it started, Unix milliseconds. */
  atMs: number;
  durationMs: number;
  /** The copy's size; 0 when it failed. */
  bytes: number;
  path: string;
  /** Taken by the schedule (SNAPSHOT_EVERY) rather than asked for. */
  scheduled: boolean;
  /** Null when it was taken and verified; else why not, in a sentence. */
  error: string | null;
}
