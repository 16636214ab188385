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
