/**
 * AUTH for both customer APIs, and the per-address failure limit. API v1
 * sends a key and a secret (headers), API v2 a key alone (a field; secret
 * null here). Credentials are always checked (the same constant-time
 * comparison whatever the address's count), and valid ones are served: one
 * bad client behind a shared NAT or proxy must not lock out every customer
 * there. Only failures are limited, by one limiter for v1 and v2: an
 * address that has used up its failures gets RATE for every failed attempt
 * instead of AUTH, so guessing still costs it time (docs/DECISIONS.md,
 * "blocks failures, not addresses").
 */
import type { Account } from '../../actors/index.js';
import { errorOutcome } from '../../errors/index.js';
import type { AppContext } from '../context.js';
import { sendError, type Exchange } from '../transport/reply.js';
import { refuseBlockedAddress } from './address-block.js';
import { remoteAddressKey } from './address-key.js';

/** API v2 answers AUTH with its own phrase (src/http/v2/errors.ts), whatever the message. */
const MISSING = errorOutcome('AUTH', 'Send your API key and secret in the X-API-Key and X-API-Secret headers.');
const INVALID = errorOutcome('AUTH', 'The API key or secret is not valid.');

/**
 * The account these credentials open, or null after sending the refusal.
 * `close` ends the connection with the refusal (a body left unread). The
 * client's address is read only on a failure, where it is counted.
 */
export function authenticate(ex: Exchange, ctx: AppContext, key: string, secret: string | null, close: boolean): Account | null {
  const missing = key === '' || secret === '';
  const account = missing ? null : secret === null ? ctx.registry.authenticateV2(key) : ctx.registry.authenticate(key, secret);
  if (account !== null) {
    ex.accountId = account.profile.id;
    return account;
  }
  const ip = remoteAddressKey(ex.res);
  if (refuseBlockedAddress(ex, ctx, ip, close)) return null;
  ctx.authFailures.recordFailure(ip);
  sendError(ex, missing ? MISSING : INVALID, [], close);
  return null;
}
