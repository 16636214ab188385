/**
 * What `/metrics` shows of the last snapshot (on request or scheduled), as
 * plain gauges: its start time, length, size and whether it was taken and
 * verified. Alert when `coa_snapshot_last_ok` is 0, or when
 * `time() - coa_snapshot_last_start_time_seconds` exceeds twice
 * SNAPSHOT_EVERY. Before the first snapshot since start every gauge is 0.
 */
import { MS_PER_SECOND } from '../platform/index.js';
import type { SnapshotResult } from './snapshot-report.js';

export interface GaugeSample {
  name: string;
  help: string;
  value: number;
}

export function snapshotGauges(last: SnapshotResult | null): GaugeSample[] {
  return [
    { name: 'coa_snapshot_last_start_time_seconds', help: 'When the last snapshot started, Unix seconds (0: none since start).', value: last === null ? 0 : last.atMs / MS_PER_SECOND },
    { name: 'coa_snapshot_last_duration_seconds', help: 'How long the last snapshot took, copy and verification.', value: last === null ? 0 : last.durationMs / MS_PER_SECOND },
    { name: 'coa_snapshot_last_bytes', help: "The last snapshot's size (0 when it failed).", value: last?.bytes ?? 0 },
    { name: 'coa_snapshot_last_ok', help: '1 when the last snapshot was taken and verified, 0 when it failed (or none was taken since start).', value: last !== null && last.error === null ? 1 : 0 },
  ];
}
