/** Pieces every admin handler shares: errors, account lookup, applying a wallet command. */
import type { Account, Delivery } from '../../actors/index.js';
import type { Decision } from '../../ledger/index.js';
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { ADMIN_PAGE_DEFAULT, ADMIN_PAGE_MAX } from '../../ops/index.js';
import type { AppContext } from '../context.js';
import { sendError, type Exchange } from '../transport/reply.js';
import { REASON_CHARS_MAX } from '../limits.js';

export type AdminHandler = (ex: Exchange, ctx: AppContext, params: string[], body: unknown, query: URLSearchParams) => void | Promise<void>;

export function invalid(message: string): ErrorOutcome {
  return errorOutcome('VALIDATION', message);
}

/** A listing's `limit` query parameter: ADMIN_PAGE_DEFAULT when absent, an integer from 1 to ADMIN_PAGE_MAX otherwise. */
export function pageLimit(query: URLSearchParams): { ok: true; limit: number } | { ok: false; error: ErrorOutcome } {
  const text = query.get('limit') ?? String(ADMIN_PAGE_DEFAULT);
  const limit = Number(text);
  if (!/^\d+$/.test(text) || limit < 1 || limit > ADMIN_PAGE_MAX) return { ok: false, error: invalid(`limit must be an integer from 1 to ${ADMIN_PAGE_MAX}.`) };
  return { ok: true, limit };
}

/** A cursor that is the last id of an earlier page (accounts, refills): a positive safe integer, or null when absent. */
export function idCursor(query: URLSearchParams): { ok: true; after: number | null } | { ok: false; error: ErrorOutcome } {
  const text = query.get('cursor');
  if (text === null) return { ok: true, after: null };
  if (!/^[1-9][0-9]{0,15}$/.test(text) || !Number.isSafeInteger(Number(text))) return { ok: false, error: invalid('cursor must be the next_cursor of an earlier page.') };
  return { ok: true, after: Number(text) };
}

/**
 * Refuses a query parameter the route does not read, and one given twice
 * (which of the two would count is a guess), naming it: an ignored typo
 * (`statuss=canceled`) would answer a wider listing than the one asked for.
 */
export function unknownParameter(query: URLSearchParams, allowed: readonly string[]): ErrorOutcome | null {
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (!allowed.includes(name)) {
      const known = allowed.length === 0 ? 'this endpoint takes no query parameters' : `allowed: ${allowed.join(', ')}`;
      return invalid(`Query parameter '${name}' is not allowed here; ${known}.`);
    }
    if (seen.has(name)) return invalid(`Query parameter '${name}' is given more than once; give it once.`);
    seen.add(name);
  }
  return null;
}

/** Rejects fields the endpoint does not know, so typos do not pass silently. */
export function unknownField(body: Record<string, unknown>, allowed: string[]): ErrorOutcome | null {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) return invalid(`Field '${key}' is not allowed here; allowed: ${allowed.join(', ')}.`);
  }
  return null;
}

export function findAccount(ex: Exchange, ctx: AppContext, id: string): Account | null {
  const account = ctx.registry.get(Number(id));
  if (account === undefined) sendError(ex, errorOutcome('NOT_FOUND', `No account with id ${id}.`));
  return account ?? null;
}

/** The optional `reason` an operator gives for a change; it is written into the log event. */
export function optionalReason(body: Record<string, unknown>): { ok: true; reason: string | undefined } | { ok: false; error: ErrorOutcome } {
  const reason = body['reason'];
  if (reason === undefined) return { ok: true, reason: undefined };
  if (typeof reason !== 'string' || reason.trim() === '' || reason.length > REASON_CHARS_MAX) {
    return { ok: false, error: invalid(`Field 'reason' must be a non-empty string of at most ${REASON_CHARS_MAX} characters.`) };
  }
  return { ok: true, reason: reason.trim() };
}

/** The account of a durable order, for a command about it; sends NOT_FOUND and returns null when there is none. */
export async function orderAccount(ex: Exchange, ctx: AppContext, id: string): Promise<Account | null> {
  await ctx.wal.flushed();
  const stored = ctx.orders.read(id);
  const account = stored === undefined ? undefined : ctx.registry.get(stored.account);
  if (account !== undefined) return account;
  sendError(ex, errorOutcome('NOT_FOUND', `No order with id ${id}.`));
  return null;
}

/**
 * The one way an admin handler applies a wallet command: 503 when the
 * wallet's mailbox is full; otherwise it waits until the change is durable
 * and sends the refusal when the decision refused. Returns the accepted
 * decision, for the handler's answer, or null when an answer was sent.
 */
export async function applied(ex: Exchange, delivery: Delivery | null): Promise<Decision | null> {
  if (delivery === null) {
    busy(ex);
    return null;
  }
  await delivery.durable;
  const { outcome } = delivery.decision;
  if (outcome.kind !== 'error') return delivery.decision;
  sendError(ex, outcome.error);
  return null;
}

export function busy(ex: Exchange): void {
  sendError(ex, errorOutcome('UNAVAILABLE', 'The wallet is busy; retry shortly.', { retry_after: 1 }), ['Retry-After', '1']);
}
