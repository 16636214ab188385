/**
 * Operator-side tools that run against a Store: ledger verification,
 * snapshots (both in a child process when the server asks, one at a time),
 * and the Prometheus metrics registry.
 */
export { verifyLedger, verifyLedgerAsync, verifyDirectory, type VerifyProgress, type VerifyReport, type BrokenInvariant, type Invariant } from './verify.js';
export { StoreFormatError } from '../wal/index.js';
export { takeSnapshot, type SnapshotReport, type CopyPace } from './snapshot.js';
export type { SnapshotResult } from './snapshot-report.js';
export { SnapshotSchedule } from './snapshot-schedule.js';
export { OperatorJobs, JobRunning, type JobProgress } from './operator-jobs.js';
export type { JobMemory } from './job-client.js';
export {
  Metrics,
  METRICS_CONTENT_TYPE,
  HTTP_DURATION_BUCKETS,
  WAL_BATCH_BUCKETS,
  WAL_SYNC_BUCKETS,
  type MetricsGauges,
} from './metrics.js';
export { formatBig } from '../money/index.js';
export { renderVerifyReport } from './render.js';
export * from './limits.js';
