/**
 * Admin endpoints for running the business: a verified snapshot taken while
 * the server serves, a ledger verification, and Prometheus metrics. Verify
 * and snapshot run in a child process, one at a time (`ctx.ops`); a second
 * one while one runs is 409 CONFLICT.
 */
import { isAbsolute } from 'node:path';
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { JobRunning, METRICS_CONTENT_TYPE, renderVerifyReport, type VerifyReport } from '../../ops/index.js';
import { countIndex, dataFileBytes, isOrderCounts, ORDER_COUNTS_KEY } from '../../wal/index.js';
import { invalid, unknownField, type AdminHandler } from './common.js';
import { send, sendError } from '../transport/reply.js';
import { PATH_CHARS_MAX } from '../limits.js';

/** POST /admin/v1/snapshot {out}: LMDB backup (no compaction) into a fresh directory, verified before success. */
export const snapshot: AdminHandler = async (ex, ctx, _params, body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['out']);
  if (bad !== null) return sendError(ex, bad);
  const out = b['out'];
  if (typeof out !== 'string' || !isAbsolute(out) || out.length > PATH_CHARS_MAX) {
    return sendError(ex, invalid("Field 'out' must be the absolute path of a new or empty directory."));
  }
  if (ctx.ops.current !== null) return sendError(ex, running(ctx.ops.current));
  // Everything acknowledged so far is in the copy.
  await ctx.wal.flushed();
  let report;
  try {
    report = await ctx.ops.snapshot(out);
  } catch (error) {
    if (error instanceof JobRunning) return sendError(ex, running(error.running));
    const message = (error as Error).message;
    ctx.log.error({ out, message }, 'snapshot failed');
    if (/ledger|invariant|verif/i.test(message)) return sendError(ex, errorOutcome('LEDGER', message));
    return sendError(ex, invalid(message));
  }
  ctx.log.info({ out, bytes: report.bytes, events: report.events }, 'snapshot taken and verified');
  send(
    ex,
    200,
    `{"ok":true,"snapshot":{"path":${JSON.stringify(report.path)},"bytes":${report.bytes},"events":${report.events},"verify":${renderVerifyReport(report.verify)}}}`,
  );
};

/** GET /admin/v1/verify: replays the log against the tables; 409 LEDGER names the first broken invariant. */
export const verify: AdminHandler = async (ex, ctx) => {
  if (ctx.ops.current !== null) return sendError(ex, running(ctx.ops.current));
  await ctx.wal.flushed();
  let report: VerifyReport;
  try {
    report = await ctx.ops.verify();
  } catch (error) {
    if (error instanceof JobRunning) return sendError(ex, running(error.running));
    throw error;
  }
  const rendered = renderVerifyReport(report);
  if (report.ok) return send(ex, 200, `{"ok":true,"report":${rendered}}`);
  const error = errorOutcome('LEDGER', report.firstBroken ?? 'The ledger does not verify.');
  send(
    ex,
    error.status,
    `{"ok":false,"error":"LEDGER","message":${JSON.stringify(error.message)},"report":${rendered},"request_id":"${ex.requestId}"}`,
    [],
    false,
    'LEDGER',
  );
};

function running(job: 'verify' | 'snapshot'): ErrorOutcome {
  return errorOutcome('CONFLICT', new JobRunning(job).message);
}

/** GET /metrics: Prometheus text format. */
export const metrics: AdminHandler = async (ex, ctx) => {
  let deepest = 0;
  for (const account of ctx.registry.loaded()) deepest = Math.max(deepest, account.actor.depth);
  const idempotency = ctx.idempotencyStats();
  const text = await ctx.metrics.render({
    accounts: ctx.registry.size,
    deepestMailbox: deepest,
    ordersByStatus: ordersByStatus(ctx),
    pendingWalEntries: ctx.wal.stats().pendingEntries,
    walCommits: ctx.wal.stats().commits,
    idempotencyRecords: idempotency.records,
    idempotencyOldestAgeMs: idempotency.oldestAgeMs,
    webhooks: ctx.webhooks.gauges(),
  });
  ex.contentType = METRICS_CONTENT_TYPE;
  send(ex, 200, text);
};

/**
 * Orders by status: the counts row the group commit keeps in the same
 * commit as the orders (O(1); committed is synced in the default sync mode).
 * Only a store never opened by the group commit lacks it: then the index
 * is counted.
 */
export function ordersByStatus(ctx: Parameters<AdminHandler>[1]): Record<string, number> {
  const row: unknown = ctx.store.tables.meta.get(ORDER_COUNTS_KEY);
  return isOrderCounts(row) ? row : countIndex(ctx.store);
}

/** The data file's length and how much of it LMDB uses (the rest is the zero-filled reserve, or pages of a commit a crash cut short). */
function storageStats(ctx: Parameters<AdminHandler>[1]): { file_bytes: number; used_bytes: number } {
  const { fileBytes, usedBytes } = dataFileBytes(ctx.store);
  return { file_bytes: fileBytes, used_bytes: usedBytes };
}

export const stats: AdminHandler = (ex, ctx) => {
  let deepest = 0;
  for (const account of ctx.registry.loaded()) deepest = Math.max(deepest, account.actor.depth);
  const w = ctx.wal.stats();
  const wal = {
    batches: w.batches,
    commits: w.commits,
    entries: w.entries,
    events: w.events,
    last_batch_entries: w.lastBatchEntries,
    last_sync_ms: Math.round(w.lastSyncMs * 1000) / 1000, // not a limit: rounds to three decimal places
    pending_entries: w.pendingEntries,
  };
  send(
    ex,
    200,
    JSON.stringify({ ok: true, accounts: ctx.registry.size, services: ctx.catalog.all().length, orders: ordersByStatus(ctx), deepest_mailbox: deepest, wal, storage: storageStats(ctx) }),
  );
};
