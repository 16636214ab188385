/**
 * The hand-made ledgers of `ledger.ts` as the simulator's durable image
 * (tables keyed as MemoryWal keys them), for replay tests that need no
 * LMDB store: `replayImage` runs the whole replay, `replayStateOf` gives the
 * replay's state before its first event, and `findingOf` the finding a piece
 * of the replay stops at.
 */
import { expect } from 'vitest';
import { replayLedger, type BrokenInvariant, type OrderRecord, type VerifyReport } from '../../src/ledger/index.js';
import { Broken } from '../../src/ledger/replay/finding.js';
import { newReplayState, type ReplayState } from '../../src/ledger/replay/replay-state.js';
import { imageLedgerSource, leaseKey, ORDER_COUNTS_KEY, orderIndexKey } from '../../src/wal/index.js';
import { emptyImage, tableKeyString, type DurableImage } from '../../src/wal/memory-wal.js';
import type { Ledger } from './ledger.js';

/** The same ledger as the simulator's durable image. */
export function imageOf(ledger: Ledger): DurableImage {
  const out = emptyImage();
  out.events = structuredClone(ledger.events);
  for (const table of ['wallets', 'orders', 'idempotency'] as const) {
    for (const [key, value] of ledger.rows[table]) out.tables[table].set(tableKeyString(key), structuredClone(value));
  }
  for (const order of ledger.rows.orders.values() as Iterable<OrderRecord>) {
    if (!ledger.unindexed.has(order.id)) out.tables.orderIndex.set(tableKeyString(orderIndexKey(order)), order.account);
    if (order.leaseExpiresMs !== undefined && !ledger.unleased.has(order.id)) out.tables.leases.set(tableKeyString(leaseKey(order)), order.account);
  }
  if (ledger.countsRow !== undefined) out.tables.meta.set(tableKeyString(ORDER_COUNTS_KEY), structuredClone(ledger.countsRow));
  return out;
}

/** The whole replay over the ledger's image. */
export function replayImage(ledger: Ledger): VerifyReport {
  return replayLedger(imageLedgerSource(imageOf(ledger)));
}

/** The replay's state over the ledger's tables, before any event is applied. */
export function replayStateOf(ledger: Ledger): ReplayState {
  return newReplayState(imageLedgerSource(imageOf(ledger)));
}

/** The finding `step` stops the replay at; fails the test when it does not stop it. */
export function findingOf(step: () => void): BrokenInvariant {
  try {
    step();
  } catch (error) {
    if (error instanceof Broken) return error.finding;
    throw error;
  }
  expect.fail('the step broke no invariant');
}
