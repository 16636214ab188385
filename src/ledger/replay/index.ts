/** The ledger replay: checks that a store's log and tables tell the same story about money (see replay-ledger.ts). */
export { replayLedger } from './replay-ledger.js';
export type { VerifyReport } from './report.js';
export type { BrokenInvariant, Invariant } from './finding.js';
export { isCounts, type LedgerSource, type SourceRow, type StatusCounts } from './ledger-source.js';
