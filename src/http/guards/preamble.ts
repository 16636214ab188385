/**
 * The checks every customer request passes once its route is known and
 * before its credentials are read, the same for v1 and v2: the server is
 * not shutting down, the headers fit their limit, and the body has one
 * framing. Each refusal closes the connection.
 */
import { errorOutcome } from '../../errors/index.js';
import type { AppContext } from '../context.js';
import { unavailable } from '../transport/deliver.js';
import { countHeaders, type HeaderCounts } from '../transport/header-counts.js';
import { sendError, type Exchange } from '../transport/reply.js';
import type { HttpRequest } from '../transport/uws.js';

/** Two framings of one body: refused rather than guessing which one a proxy in front of us used (request smuggling). */
const TWO_LENGTHS = errorOutcome('VALIDATION', 'Send exactly one Content-Length header.');

/** The request's header counts, or null after sending the refusal. */
export function preamble(ex: Exchange, ctx: AppContext, req: HttpRequest): HeaderCounts | null {
  const why = ctx.unavailable();
  if (why !== null) {
    unavailable(ex, why, true);
    return null;
  }
  const seen = countHeaders(req);
  const bytesMax = ctx.limits.headerBytesMax;
  if (seen.bytes > bytesMax) {
    sendError(ex, errorOutcome('VALIDATION', `The request headers are larger than the limit of ${bytesMax} bytes.`, undefined, 431), [], true);
    return null;
  }
  if (seen.contentLength > 1) {
    sendError(ex, TWO_LENGTHS, [], true);
    return null;
  }
  return seen;
}
