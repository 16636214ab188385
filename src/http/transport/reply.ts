/**
 * Writing responses with uWebSockets.js: one place that knows the status
 * lines, the common headers and the rule that a write after an `await` must
 * be corked and must not touch an aborted response.
 */
import { renderError, type ErrorOutcome } from '../../errors/index.js';
import { reportFault, type FaultSink } from '../../platform/index.js';
import type { Answer } from './answer.js';
import type { HttpResponse } from './uws.js';

const STATUS_LINES: Record<number, string> = {
  200: '200 OK',
  201: '201 Created',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  402: '402 Payment Required',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  409: '409 Conflict',
  413: '413 Content Too Large',
  415: '415 Unsupported Media Type',
  422: '422 Unprocessable Content',
  429: '429 Too Many Requests',
  431: '431 Request Header Fields Too Large',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

const JSON_TYPE = 'application/json';

/** A reply's head up to the Request-Id's value: the status line's text, the Content-Type line and the Request-Id's name. */
function headStart(status: number, contentType: string): string {
  return `${STATUS_LINES[status] ?? String(status)}\r\nContent-Type: ${contentType}\r\nRequest-Id: `;
}

/** headStart of every JSON reply, built once for each status. */
const JSON_HEAD_STARTS: Readonly<Record<number, string>> = Object.fromEntries(Object.keys(STATUS_LINES).map((status) => [status, headStart(Number(status), JSON_TYPE)]));

/** Per-request state the handler keeps next to the uWS response. */
export interface Exchange {
  res: HttpResponse;
  requestId: string;
  aborted: boolean;
  done: boolean;
  /** Extra headers to send with whatever reply goes out (rate-limit headers). */
  headers: string[];
  /** Route label for metrics and the access log (the path pattern, never the raw URL). */
  route: string;
  /** The request's method as uWS reads it (lower case); '' until the dispatcher reads it. */
  method: string;
  /** The account the credentials opened; null before authentication and on the admin API. */
  accountId: number | null;
  /** The reply's Content-Type: JSON but for the few text answers (Prometheus metrics). */
  contentType: string;
  startedMs: number;
  observer: RequestObserver | null;
  /** A HEAD request: the reply carries headers but no body. */
  head: boolean;
  /**
   * Set when the request speaks another dialect than v1's (API v2): every
   * error is answered in it, whoever sends it. Null: v1's error body.
   */
  dialect: ErrorDialect | null;
  /**
   * Set when the reply shows what a read saw in the store: the reply waits
   * for it (see Wal.readBarrier) so that it never shows a change that is
   * not durable yet.
   */
  barrier: (() => Promise<void> | null) | null;
}

/** What is recorded of every answered request, once, as its reply is written (metrics, the access log). */
export interface RequestObserver {
  answered(ex: Exchange, status: number, code: string | null): void;
}

/** How a dialect answers an error outcome (API v2: HTTP 200 and its own sentence). */
export interface ErrorDialect {
  errorAnswer(error: ErrorOutcome): Answer;
}

export function newExchange(res: HttpResponse, requestId: string, observer: RequestObserver | null = null): Exchange {
  const exchange: Exchange = {
    res,
    requestId,
    aborted: false,
    done: false,
    headers: [],
    route: 'unknown',
    method: '',
    accountId: null,
    contentType: JSON_TYPE,
    startedMs: performance.now(),
    observer,
    head: false,
    dialect: null,
    barrier: null,
  };
  res.onAborted(() => {
    exchange.aborted = true;
  });
  return exchange;
}

/**
 * Sends a reply once. `close` ends the connection afterwards (used when the
 * request body was not read, so the connection cannot be reused).
 */
export function send(ex: Exchange, status: number, body: string, extraHeaders: string[] = [], close = false, code: string | null = null): void {
  if (ex.aborted || ex.done) return;
  ex.done = true;
  const barrier = ex.barrier?.() ?? null;
  if (barrier === null) write(ex, status, body, extraHeaders, close, code);
  // A failed sync stops the process (fail-stop): nothing is answered then. A throw while writing is
  // caught, as `guarded` would catch it on the synchronous path (where, done set, nothing more is sent).
  else
    barrier.then(
      () => {
        try {
          write(ex, status, body, extraHeaders, close, code);
        } catch {
          // Nothing more can be sent on this exchange.
        }
      },
      () => {},
    );
}

function write(ex: Exchange, status: number, body: string, extraHeaders: string[], close: boolean, code: string | null): void {
  if (ex.aborted) return;
  ex.observer?.answered(ex, status, code);
  const head = headOf(ex, status, extraHeaders);
  const { res } = ex;
  res.cork(() => {
    res.writeStatus(head);
    if (ex.head) res.endWithoutBody(Buffer.byteLength(body), close);
    else if (close) res.end(body, true);
    else endPaced(res, body);
  });
}

/**
 * The reply's status line and headers as one text, which uWS writes after
 * `HTTP/1.1 ` and ends with a line break; `end` then adds Date and
 * Content-Length. Each writeHeader call is one more entry into the native
 * module and two more strings converted there, so the whole head goes in
 * one writeStatus. Every value in it is the server's own text (a status, a
 * request id, numbers, constant method lists), never a client's, so none
 * can hold a line break that would start a header of its own.
 */
function headOf(ex: Exchange, status: number, extraHeaders: string[]): string {
  let head = (ex.contentType === JSON_TYPE ? JSON_HEAD_STARTS[status] : undefined) ?? headStart(status, ex.contentType);
  head += ex.requestId;
  for (let i = 0; i < ex.headers.length; i += 2) head += `\r\n${ex.headers[i]!}: ${ex.headers[i + 1]!}`;
  for (let i = 0; i < extraHeaders.length; i += 2) head += `\r\n${extraHeaders[i]!}: ${extraHeaders[i + 1]!}`;
  return head;
}

/**
 * Ends a reply without having uWS buffer it for a client that does not read
 * its answers. `end` would copy whatever the socket cannot take into a
 * per-connection buffer with no bound, so one connection that pipelines
 * thousands of requests and never reads would make the server hold every
 * answer. `tryEnd` hands over only what the socket takes now; the rest waits
 * here and goes out as the client reads (onWritable). Until it has all gone,
 * the reply is unfinished, and uWS closes the connection when another
 * request arrives on it (it never pipelines behind an unfinished reply):
 * such a client is disconnected, holding at most one answer, while a slow
 * client that reads its answer is served at its own pace.
 */
export function endPaced(res: HttpResponse, body: string): void {
  const size = Buffer.byteLength(body);
  const [, done] = res.tryEnd(body, size);
  if (done) return;
  const bytes = Buffer.from(body);
  res.onWritable((offset) => {
    // A throw here would stop the process (the binding exits when this
    // handler returns no boolean); uWS clears the handler once the reply is
    // done or aborted, so none is expected.
    try {
      return res.tryEnd(bytes.subarray(offset), size)[0];
    } catch {
      return true;
    }
  });
}

/** An error's status and body in the request's dialect. */
export function errorAnswer(ex: Exchange, error: ErrorOutcome): Answer {
  if (ex.dialect !== null) return ex.dialect.errorAnswer(error);
  return { status: error.status, body: renderError(error, ex.requestId) };
}

export function sendError(ex: Exchange, error: ErrorOutcome, extraHeaders: string[] = [], close = false): void {
  const answer = errorAnswer(ex, error);
  send(ex, answer.status, answer.body, extraHeaders, close, error.code);
}


/**
 * Runs a handler step so that a thrown error (a storage error, say)
 * answers 500 INTERNAL and is logged, instead of leaving the client hanging
 * or, in a promise callback, stopping the process. A broken invariant
 * (InvariantError) is the exception: it goes to the fail-stop handler,
 * which stops the process, and the request gets no answer, as a request
 * whose commit failed gets none.
 */
export function guarded(ctx: FaultSink, ex: Exchange, step: () => void): void {
  try {
    step();
  } catch (error) {
    failed(ctx, ex, error, 'request failed');
  }
}

/**
 * A request's step failed unexpectedly: a broken invariant stops the
 * process and the request gets no answer; anything else is logged and
 * answered 500 INTERNAL with `message`.
 */
export function failed(ctx: FaultSink, ex: Exchange, error: unknown, what: string, message = 'The server failed to complete this request.'): void {
  if (reportFault(ctx, error, what, { requestId: ex.requestId, route: ex.route })) return;
  sendError(ex, { code: 'INTERNAL', status: 500, message });
}
