export { openStore, STRUCTURES_KEY, CHAIN_KEY, type Store, type SyncMode } from './store.js';
export { LmdbGroupCommit, type GroupCommitOptions } from './group-commit.js';
export { FileReserve, dataFileBytes, type FileReserveOptions, type FileReserveStats } from './file-reserve.js';
export { IdempotencySweeper, type SweepResult } from './idempotency-sweeper.js';
export { MemoryWal } from './memory-wal.js';
export type { Wal, WalStats } from './wal.js';
export * from './entry.js';
export { newBatch, type Batch } from './batch.js';
export { countEvent, countIndex, isOrderCounts, loadOrderCounts, noOrders, ORDER_COUNTS_KEY, type OrderCounts } from './order-counts.js';
