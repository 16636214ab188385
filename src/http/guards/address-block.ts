/**
 * The per-address limit on failed authentications, checked by both
 * customer APIs once a key or secret has failed (one limiter: a v1 failure
 * and a v2 failure from one address count together). Valid credentials are
 * served whatever their address's count.
 */
import { errorOutcome } from '../../errors/index.js';
import type { AppContext } from '../context.js';
import { sendError, type Exchange } from '../transport/reply.js';

/** Sends the RATE refusal and returns true when the address is blocked. */
export function refuseBlockedAddress(ex: Exchange, ctx: AppContext, ip: string, close: boolean): boolean {
  const blockedS = ctx.authFailures.tracking ? ctx.authFailures.blockedForS(ip) : 0;
  if (blockedS === 0) return false;
  sendError(
    ex,
    errorOutcome('RATE', `Too many failed authentications from this address; retry in ${blockedS} seconds.`, { retry_after: blockedS }),
    ['Retry-After', String(blockedS)],
    close,
  );
  return true;
}
