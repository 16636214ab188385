/**
 * The operator's refills: list them by status and move them
 * (pending → in_progress → completed | rejected). A move goes through the
 * order's wallet actor, which holds the latest refill's status on the order,
 * so two concurrent moves cannot both start from the same status. Refills
 * move no money.
 */
import { errorOutcome } from '../../errors.js';
import { isRefillStatus, REFILL_STATUSES, type RefillRecord, type RefillStatus } from '../../ledger/index.js';
import { renderRefill } from '../../render.js';
import { applied, invalid, optionalReason, unknownField, type AdminHandler } from './common.js';
import { send, sendError } from '../reply.js';

const PAGE_MAX = 500;

/** GET /admin/v1/refills?status=pending&limit=100&cursor=ID — oldest first; the cursor is the last id seen. */
export const listRefills: AdminHandler = async (ex, ctx, _params, _body, query) => {
  const status = query.get('status') ?? 'pending';
  if (!isRefillStatus(status)) return sendError(ex, invalid(`status must be one of ${REFILL_STATUSES.join(', ')}.`));
  const limitText = query.get('limit') ?? '100';
  const limit = Number(limitText);
  if (!/^\d+$/.test(limitText) || limit < 1 || limit > PAGE_MAX) return sendError(ex, invalid(`limit must be an integer from 1 to ${PAGE_MAX}.`));
  const cursorText = query.get('cursor');
  if (cursorText !== null && !/^[1-9][0-9]{0,15}$/.test(cursorText)) return sendError(ex, invalid('cursor must be the next_cursor of an earlier page.'));
  await ctx.wal.flushed();
  const refills: RefillRecord[] = [];
  let next: number | null = null;
  // Refill ids grow with time, so id order is age order; the walk skips other statuses.
  for (const { value } of ctx.store.tables.refills.getRange({ start: cursorText === null ? 1 : Number(cursorText) + 1 })) {
    const refill = value as RefillRecord;
    if (refill.status !== status) continue;
    if (refills.length === limit) {
      next = refills[refills.length - 1]!.id;
      break;
    }
    refills.push(refill);
  }
  const items = refills.map((r) => renderRefill(r).slice(0, -1) + `,"account":${r.account}}`);
  send(ex, 200, `{"ok":true,"refills":[${items.join(',')}],"next_cursor":${next === null ? 'null' : `"${next}"`}}`);
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
