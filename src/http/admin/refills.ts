/**
 * The operator's refills: list them by status and move them
 * (pending → in_progress → completed | rejected). A move goes through the
 * order's wallet actor, which holds the latest refill's status on the order,
 * so two concurrent moves cannot both start from the same status. Refills
 * move no money.
 */
import { errorOutcome } from '../../errors/index.js';
import { isRefillStatus, REFILL_STATUSES, type RefillRecord, type RefillStatus } from '../../ledger/index.js';
import { renderRefill } from '../../wire/index.js';
import { applied, idCursor, invalid, optionalReason, pageLimit, unknownField, type AdminHandler } from './common.js';
import { scanPage } from './scan.js';
import { send, sendError } from '../transport/reply.js';

/**
 * GET /admin/v1/refills?status=pending&limit=100&cursor=ID — oldest first;
 * the cursor is the last id examined. Refills of every status share one
 * table, so a request examines at most the scan budget of them (scan.ts):
 * a page may hold fewer than `limit` refills while next_cursor is not null.
 */
export const listRefills: AdminHandler = async (ex, ctx, _params, _body, query) => {
  const status = query.get('status') ?? 'pending';
  if (!isRefillStatus(status)) return sendError(ex, invalid(`status must be one of ${REFILL_STATUSES.join(', ')}.`));
  const limit = pageLimit(query);
  if (!limit.ok) return sendError(ex, limit.error);
  const cursor = idCursor(query);
  if (!cursor.ok) return sendError(ex, cursor.error);
  await ctx.wal.flushed();
  // Refill ids grow with time, so id order is age order; the walk skips other statuses.
  const entries = ctx.store.tables.refills.getRange({ start: (cursor.after ?? 0) + 1 });
  const page = scanPage(entries, ({ value }) => ((value as RefillRecord).status === status ? (value as RefillRecord) : undefined), limit.limit, ctx.limits.scanEntriesMax);
  const items = page.items.map((r) => renderRefill(r).slice(0, -1) + `,"account":${r.account}}`);
  const next = page.resumeAfter === null ? 'null' : `"${page.resumeAfter.key as number}"`;
  send(ex, 200, `{"ok":true,"refills":[${items.join(',')}],"next_cursor":${next}}`);
};

/** POST /admin/v1/refills/{id}/status {status, reason?} */
export const setRefillStatus: AdminHandler = async (ex, ctx, [id], body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['status', 'reason']);
  if (bad !== null) return sendError(ex, bad);
  const reason = optionalReason(b);
  if (!reason.ok) return sendError(ex, reason.error);
  const to = b['status'];
  if (!isRefillStatus(to)) return sendError(ex, invalid(`status must be one of ${REFILL_STATUSES.join(', ')}.`));
  await ctx.wal.flushed();
  const stored = ctx.store.tables.refills.get(Number(id)) as RefillRecord | undefined;
  const account = stored === undefined ? undefined : ctx.registry.get(stored.account);
  if (stored === undefined || account === undefined) return sendError(ex, errorOutcome('NOT_FOUND', `No refill with id ${id}.`));
  const decision = await applied(
    ex,
    account.actor.send({ kind: 'refill-status', stored, to: to as RefillStatus, ...(reason.reason === undefined ? {} : { reason: reason.reason }) }),
  );
  if (decision === null) return;
  send(ex, 200, `{"ok":true,"refill":${renderRefill(decision.refill!)}}`);
};
