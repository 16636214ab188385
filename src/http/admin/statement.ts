/**
 * GET /admin/v1/accounts/{id}/statement?from=&to=&limit=&cursor=: every
 * movement of the account's money (ledger/statement.ts), oldest first, with
 * its time, kind, amount, the balance it left, the order and its number,
 * and the reason, a page at a time.
 *
 * The log is the record of every movement, so the statement reads it and
 * needs nothing written on the order path: it waits for the durable log,
 * finds `from` by bisecting the log's times (wal/log-times.ts) and walks
 * forward, stopping at `to`, keeping this account's movements. Other
 * accounts' events are skipped, so one request examines at most the scan
 * budget of events (scan.ts): a page may hold fewer than `limit` movements,
 * even none, while next_cursor is not null. The cursor holds the last
 * position examined and the balance known there, which a plan grant (an
 * event without a balance) shows.
 */
import { statementLine, type LogEvent, type StatementLine } from '../../ledger/index.js';
import { formatMicro } from '../../money/index.js';
import { firstSeqAtOrAfter } from '../../wal/index.js';
import type { ErrorOutcome } from '../../errors/index.js';
import type { AppContext } from '../context.js';
import { send, sendError } from '../transport/reply.js';
import { findAccount, invalid, pageLimit, type AdminHandler } from './common.js';
import { scanPage } from './scan.js';

/** Every query parameter the statement reads. */
export const STATEMENT_QUERY = ['from', 'to', 'limit', 'cursor'] as const;

/** A date (midnight UTC) or a date and time with a zone, as ISO 8601 writes them. */
const INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

type Parsed<T> = { ok: true; value: T } | { ok: false; error: ErrorOutcome };

function instant(query: URLSearchParams, name: string): Parsed<number | null> {
  const text = query.get(name);
  if (text === null) return { ok: true, value: null };
  const ms = INSTANT.test(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(ms)) {
    return { ok: false, error: invalid(`${name} must be an ISO 8601 date or time with its zone, such as 2026-01-31 or 2026-01-31T18:00:00Z.`) };
  }
  return { ok: true, value: ms };
}

interface Cursor {
  seq: number;
  balance: number | null;
}

function encodeCursor(account: number, cursor: Cursor): string {
  return Buffer.from(JSON.stringify([account, cursor.seq, cursor.balance])).toString('base64url');
}

function decodeCursor(text: string, account: number): Cursor | null {
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 3 && v[0] === account && Number.isSafeInteger(v[1]) && (v[2] === null || Number.isSafeInteger(v[2]))) {
      return { seq: v[1] as number, balance: v[2] as number | null };
    }
  } catch {
    // fall through: not a cursor this server issued
  }
  return null;
}

export const accountStatement: AdminHandler = async (ex, ctx, [id], _body, query) => {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const accountId = account.profile.id;
  const from = instant(query, 'from');
  if (!from.ok) return sendError(ex, from.error);
  const to = instant(query, 'to');
  if (!to.ok) return sendError(ex, to.error);
  if (from.value !== null && to.value !== null && from.value >= to.value) return sendError(ex, invalid('from must be earlier than to.'));
  const page = pageLimit(query);
  if (!page.ok) return sendError(ex, page.error);
  const cursorText = query.get('cursor');
  const cursor = cursorText === null ? null : decodeCursor(cursorText, accountId);
  if (cursorText !== null && cursor === null) return sendError(ex, invalid(`cursor is not one this server returned for account ${accountId}'s statement; start without it.`));
  // Only durable movements are shown.
  await ctx.wal.flushed();
  const log = ctx.store.log;
  const start = cursor !== null ? cursor.seq + 1 : from.value === null ? 1 : firstSeqAtOrAfter(log, from.value);
  const startBalance = cursor?.balance ?? null;
  let known = startBalance;
  const scanned = scanPage(eventsBefore(log.getRange({ start }), to.value), ({ key, value }) => {
    const line = statementLine(key, value, accountId, known);
    if (line !== null && line.balance !== null) known = line.balance;
    return line ?? undefined;
  }, page.limit, ctx.limits.scanEntriesMax);
  const lines = scanned.items;
  let lastBalance = startBalance;
  for (const line of lines) lastBalance = line.balance ?? lastBalance;
  const next = scanned.resumeAfter === null ? 'null' : `"${encodeCursor(accountId, { seq: scanned.resumeAfter.key, balance: lastBalance })}"`;
  send(ex, 200, `{"ok":true,"account":${accountId},"movements":[${lines.map((l) => renderLine(ctx, l)).join(',')}],"next_cursor":${next}}`);
};

/** The log's entries up to the first one stamped at or after `toMs` (all of them when null). */
function* eventsBefore(entries: Iterable<{ key: number; value: LogEvent }>, toMs: number | null): Generator<{ key: number; value: LogEvent }> {
  for (const entry of entries) {
    if (toMs !== null && entry.value.atMs >= toMs) return;
    yield entry;
  }
}

function renderLine(ctx: AppContext, l: StatementLine): string {
  // A refund's event names the order only; its number is on the order.
  const number = l.number ?? (l.order === null ? null : (ctx.orders.read(l.order)?.number ?? null));
  return (
    `{"seq":${l.seq},"at":"${new Date(l.atMs).toISOString()}","kind":"${l.kind}","amount":${formatMicro(l.amount)},` +
    `"balance":${l.balance === null ? 'null' : formatMicro(l.balance)},"order":${JSON.stringify(l.order)},"number":${number},"reason":${JSON.stringify(l.reason)}}`
  );
}
