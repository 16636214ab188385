/**
 * JSON for a verify report (admin API, CLI). Totals are BigInt and cannot go
 * through JSON.stringify; they are written as exact decimal JSON numbers of
 * credits, the way every other amount in the API is rendered ("0.3").
 */
import { formatBig } from '../money/index.js';
import type { VerifyReport } from './verify.js';

export function renderVerifyReport(report: VerifyReport): string {
  const { counts, totals } = report;
  return (
    `{"ok":${report.ok},"first_broken":${JSON.stringify(report.firstBroken)},` +
    `"broken":${JSON.stringify(report.broken)},` +
    `"counts":{"events":${counts.events},"accounts":${counts.accounts},"orders":${counts.orders},"idempotency_keys":${counts.idempotencyKeys}},` +
    `"totals":{"credited":${formatBig(totals.credited)},"debited":${formatBig(totals.debited)},"refunded":${formatBig(totals.refunded)}}}`
  );
}
