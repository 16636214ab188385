/**
 * What the server records of every answered request, as its reply is
 * written: the request counter and duration histogram of /metrics, and one
 * access-log line at info.
 *
 * The line carries the method, the route pattern (never the raw URL, whose
 * query may hold an API v2 key), the status, the error code (null on
 * success), the duration from the request's arrival to its reply in
 * milliseconds, the request id (the Request-Id header the client got) and
 * the account the credentials opened (null before authentication and on the
 * admin API). It never carries a header, a body, a key or a secret.
 */
import type { Logger } from 'pino';
import type { Metrics } from '../../ops/index.js';
import { MS_PER_SECOND } from '../../platform/index.js';
import type { Exchange, RequestObserver } from './reply.js';

export function requestObserver(metrics: Metrics, log: Logger): RequestObserver {
  // The level is fixed at start-up: at warn or above, a request builds no line at all.
  const logging = log.isLevelEnabled('info');
  // The line's fields are the fixed ones below, none of them a secret, so it
  // skips the logger's redaction: its wildcard paths cost about 5 µs a line,
  // twice the rest of the line (bench/RESULTS.md).
  const access = log.child({}, { redact: { paths: [] } });
  return {
    answered(ex: Exchange, status: number, code: string | null): void {
      const durationMs = performance.now() - ex.startedMs;
      metrics.countRequest(ex.route, status, code, durationMs / MS_PER_SECOND);
      if (!logging) return;
      access.info(
        { method: ex.method.toUpperCase(), route: ex.route, status, code, durationMs: Math.round(durationMs * MS_PER_SECOND) / MS_PER_SECOND, requestId: ex.requestId, account: ex.accountId },
        'request',
      );
    },
  };
}
