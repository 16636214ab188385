/**
 * Admin endpoints for running the business: a verified snapshot taken while
 * the server serves, a ledger verification, and Prometheus metrics.
 */
import { isAbsolute } from 'node:path';
import { errorOutcome } from '../errors.js';
import { METRICS_CONTENT_TYPE, renderVerifyReport, takeSnapshot, verifyLedgerAsync } from '../ops/index.js';
import { invalid, unknownField, type AdminHandler } from './admin-common.js';
import { ordersByStatus } from './admin-orders.js';
import { send, sendError } from './reply.js';

/** POST /admin/v1/snapshot {out}: LMDB backup (no compaction) into a fresh directory, verified before success. */
export const snapshot: AdminHandler = async (ex, ctx, _params, body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['out']);
  if (bad !== null) return sendError(ex, bad);
  const out = b['out'];
  if (typeof out !== 'string' || !isAbsolute(out) || out.length > 4096) {
    return sendError(ex, invalid("Field 'out' must be the absolute path of a new or empty directory."));
  }
  // Everything acknowledged so far is in the copy.
  await ctx.wal.flushed();
  let report;
  try {
    report = await takeSnapshot(ctx.store, out);
  } catch (error) {
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
  await ctx.wal.flushed();
  const report = await verifyLedgerAsync(ctx.store);
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

/** GET /metrics: Prometheus text format. */
export const metrics: AdminHandler = (ex, ctx) => {
  let deepest = 0;
  for (const account of ctx.registry.loaded()) deepest = Math.max(deepest, account.actor.depth);
  const text = ctx.metrics.render({
    accounts: ctx.registry.size,
    deepestMailbox: deepest,
    ordersByStatus: ordersByStatus(ctx),
    pendingWalEntries: ctx.wal.stats().pendingEntries,
    walCommits: ctx.wal.stats().commits,
  });
  if (ex.aborted) return;
  ex.done = true;
  ex.res.cork(() => {
    ex.res.writeStatus('200 OK').writeHeader('Content-Type', METRICS_CONTENT_TYPE).end(text);
  });
};
