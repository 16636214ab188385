/**
 * Operator-side tools that run against a Store: ledger verification,
 * snapshots, and the Prometheus metrics registry.
 */
export { verifyLedger, verifyLedgerAsync, type VerifyReport, type BrokenInvariant, type Invariant } from './verify.js';
export { takeSnapshot, type SnapshotReport } from './snapshot.js';
export {
  Metrics,
  METRICS_CONTENT_TYPE,
  HTTP_DURATION_BUCKETS,
  WAL_BATCH_BUCKETS,
  WAL_SYNC_BUCKETS,
  type MetricsGauges,
} from './metrics.js';
export { formatBig } from './money-big.js';
export { renderVerifyReport } from './render.js';
