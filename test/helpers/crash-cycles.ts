/**
 * Kill cycles against the server as a real process: `runCrashCycles` of the
 * built `scripts/crash/kill-cycles.js` (the global set-up compiles the
 * project before any test runs), and the verdict every run must reach.
 */
import { expect } from 'vitest';
import type { CrashOptions, CrashReport } from '../../scripts/crash/kill-cycles.js';

export async function runCrashCycles(options: CrashOptions): Promise<CrashReport> {
  const built = (await import('../../dist/scripts/crash/kill-cycles.js' as string)) as { runCrashCycles(options: CrashOptions): Promise<CrashReport> };
  return built.runCrashCycles(options);
}

/**
 * No problem found and no acknowledged order lost, with orders acknowledged
 * with and without an Idempotency-Key, and cancels and refills acknowledged
 * under the kills too (each cycle runs until it has both) and checked after
 * each restart.
 */
export function expectNothingAcknowledgedLost(report: CrashReport, seed: number): void {
  expect(report.problems, `seed ${seed}`).toEqual([]);
  expect(report.lost).toBe(0);
  expect(report.acknowledged).toBeGreaterThan(0);
  expect(report.acknowledgedWithKey).toBeGreaterThan(0);
  expect(report.cancelsAcknowledged).toBeGreaterThanOrEqual(report.cycles);
  expect(report.refillsAcknowledged).toBeGreaterThanOrEqual(report.cycles);
}
