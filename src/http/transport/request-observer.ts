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
 *
 * The line is built by hand, in pino's frame (platform's `infoLine`): its
 * fields are fixed and none is a secret, so it needs neither pino's
 * serialisation nor its redaction (about 2.5 µs a line between them,
 * bench/RESULTS.md), and it waits in the log's buffer instead of costing
 * a write(2) of its own. Every string in it is escaped with JSON.stringify
 * (the method is the client's); the known methods and the route patterns
 * are escaped once and kept.
 */
import type { Logger } from 'pino';
import type { Metrics } from '../../ops/index.js';
import { infoLine, MS_PER_SECOND } from '../../platform/index.js';
import type { Exchange, RequestObserver } from './reply.js';

/** The methods clients send, quoted once; any other is quoted as it comes. */
const QUOTED_METHODS: Readonly<Record<string, string>> = Object.fromEntries(['get', 'head', 'post', 'put', 'patch', 'delete', 'options'].map((m) => [m, JSON.stringify(m.toUpperCase())]));

export function requestObserver(metrics: Metrics, log: Logger): RequestObserver {
  // The level is fixed at start-up: at warn or above, a request builds no line at all.
  const access = infoLine(log, 'request');
  // Routes are the patterns of the route tables (never a URL), so this holds one entry per pattern.
  const quotedRoutes = new Map<string, string>();
  const quotedRoute = (route: string): string => {
    let quoted = quotedRoutes.get(route);
    if (quoted === undefined) quotedRoutes.set(route, (quoted = JSON.stringify(route)));
    return quoted;
  };
  return {
    answered(ex: Exchange, status: number, code: string | null): void {
      const durationMs = performance.now() - ex.startedMs;
      metrics.countRequest(ex.route, status, code, durationMs / MS_PER_SECOND);
      if (access === null) return;
      access(
        `"method":${QUOTED_METHODS[ex.method] ?? JSON.stringify(ex.method.toUpperCase())},"route":${quotedRoute(ex.route)},"status":${status},` +
          `"code":${code === null ? 'null' : JSON.stringify(code)},"durationMs":${millisecondsText(durationMs)},` +
          `"requestId":${JSON.stringify(ex.requestId)},"account":${ex.accountId}`,
      );
    },
  };
}

/**
 * Milliseconds with three decimals, as a JSON number ("4.181", "0.050"):
 * built from whole microseconds, which is several times cheaper than
 * printing the rounded double.
 */
function millisecondsText(ms: number): string {
  const us = Math.max(0, Math.round(ms * MS_PER_SECOND));
  const whole = Math.floor(us / MS_PER_SECOND);
  return `${whole}.${String(us - whole * MS_PER_SECOND).padStart(3, '0')}`;
}
