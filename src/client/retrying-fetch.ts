/**
 * The fetch the typed client sends its requests with: it retries, a bounded
 * number of times, what is safe to retry, and gives every order and
 * subscription an Idempotency-Key so that a retried one is placed once.
 *
 * - 429 and 503 are retried for every request: the server answers them
 *   before carrying anything out. The wait is the answer's Retry-After; an
 *   answer that asks for longer than `delayMsMax` is returned as it is.
 * - A network error (no answer at all) is retried only for a request that
 *   gives the same result when repeated: GET, HEAD, DELETE, and a POST that
 *   carries an Idempotency-Key, which the server answers with the first
 *   attempt's answer (Idempotent-Replayed: true) if that attempt went through.
 * - Every attempt sends the same request, headers included: one key for all
 *   the attempts of one order.
 */
import { RETRY_ATTEMPTS, RETRY_BACKOFF_MS, RETRY_DELAY_MS_MAX } from './limits.js';

export interface RetryOptions {
  /** Attempts in all, the first included (default RETRY_ATTEMPTS; 1 turns retrying off). */
  attempts?: number;
  /** The longest wait before one retry (default RETRY_DELAY_MS_MAX). */
  delayMsMax?: number;
  /** How the client waits between attempts (default: a timer); tests pass one that moves a simulated clock. */
  sleep?: (ms: number) => Promise<void>;
  /** The fetch that sends each attempt (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
}

const RETRIED_STATUSES = new Set([429, 503]);
const REPEATABLE_METHODS = new Set(['GET', 'HEAD', 'DELETE']);
/** The POSTs that place something: an order or a subscription, each placed once under its key. */
const PLACING_PATH = /\/api\/v1\/(?:order|subscription)$/;

const timer = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An order or a subscription without an Idempotency-Key gets a fresh one; every other request is sent as it is. */
function withIdempotencyKey(request: Request): Request {
  if (request.method !== 'POST' || !PLACING_PATH.test(new URL(request.url).pathname) || request.headers.has('idempotency-key')) return request;
  const headers = new Headers(request.headers);
  headers.set('Idempotency-Key', crypto.randomUUID());
  return new Request(request, { headers });
}

/** Retry-After in milliseconds: whole seconds, or an HTTP date; null when absent or unreadable. */
function retryAfterMs(response: Response): number | null {
  const value = response.headers.get('retry-after');
  if (value === null) return null;
  if (/^[0-9]+$/.test(value.trim())) return Number(value.trim()) * 1000; // not a limit: milliseconds per second
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

export function retryingFetch(options: RetryOptions = {}): (request: Request) => Promise<Response> {
  const attempts = options.attempts ?? RETRY_ATTEMPTS;
  const delayMsMax = options.delayMsMax ?? RETRY_DELAY_MS_MAX;
  const sleep = options.sleep ?? timer;
  const send = options.fetch ?? ((request: Request) => fetch(request));
  return async (original) => {
    const request = withIdempotencyKey(original);
    const repeatable = REPEATABLE_METHODS.has(request.method) || request.headers.has('idempotency-key');
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= attempts;
      let response: Response;
      try {
        response = await send(request.clone());
      } catch (error) {
        if (last || !repeatable || request.signal.aborted) throw error;
        await sleep(Math.min(delayMsMax, RETRY_BACKOFF_MS * 2 ** (attempt - 1)));
        continue;
      }
      if (last || !RETRIED_STATUSES.has(response.status)) return response;
      const waitMs = retryAfterMs(response) ?? Math.min(delayMsMax, RETRY_BACKOFF_MS * 2 ** (attempt - 1));
      if (waitMs > delayMsMax) return response;
      await response.body?.cancel();
      await sleep(waitMs);
    }
  };
}
