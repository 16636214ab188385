/**
 * The closed catalogue of error codes. Each code has exactly one HTTP status
 * (VALIDATION has a few, each for one named situation), a
 * stable name and a one-line meaning used in the README and OpenAPI.
 * Expected outcomes are values of this type, never exceptions.
 */
export const ERRORS = {
  AUTH: { status: 401, meaning: 'API key or secret missing or invalid.' },
  BANNED: { status: 403, meaning: 'API access is disabled on the account.' },
  RATE: { status: 429, meaning: 'Rate limit exceeded; retry after Retry-After seconds.' },
  BALANCE: { status: 402, meaning: 'Not enough credits for the order.' },
  SERVICE: { status: 422, meaning: 'Service unknown or disabled.' },
  QTY: { status: 422, meaning: "Quantity outside the service's min..max." },
  FORCEJOIN: { status: 403, meaning: 'Required Telegram channel not joined.' },
  VALIDATION: { status: 400, meaning: 'Bad payload, query or header (413 body too large, 415 wrong content type, 431 headers too large).' },
  NOT_FOUND: { status: 404, meaning: "Unknown route, or an order that is not this account's." },
  METHOD: { status: 405, meaning: 'The route exists but not with this HTTP method (Allow lists the right ones).' },
  CONFLICT: { status: 409, meaning: 'The order or subscription cannot make that move (it is final, or the move goes backwards), or (admin API) a verify or snapshot is already running.' },
  LEDGER: { status: 409, meaning: 'Admin API: the ledger does not verify; the message names the first broken invariant.' },
  IDEMPOTENCY: { status: 422, meaning: 'Idempotency-Key reused with a different payload.' },
  INTERNAL: { status: 500, meaning: 'Server fault.' },
  UNAVAILABLE: { status: 503, meaning: 'Server draining or overloaded; retry after Retry-After seconds.' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

/** An error outcome: code, HTTP status, plain-sentence message, extra fields. */
export interface ErrorOutcome {
  code: ErrorCode;
  status: number;
  message: string;
  extra?: Record<string, string | number>;
}

export function errorOutcome(
  code: ErrorCode,
  message: string,
  extra?: Record<string, string | number>,
  status: number = ERRORS[code].status,
): ErrorOutcome {
  return extra === undefined ? { code, status, message } : { code, status, message, extra };
}

/**
 * Serialises an error body. Extra values are numbers or strings; money
 * values arrive pre-rendered as exact decimal strings marked with `raw:`
 * so that they are emitted as JSON numbers without passing through floats.
 */
export function renderError(outcome: ErrorOutcome, requestId: string): string {
  let body = `{"ok":false,"error":"${outcome.code}","message":${JSON.stringify(outcome.message)}`;
  if (outcome.extra !== undefined) {
    for (const [key, value] of Object.entries(outcome.extra)) {
      if (typeof value === 'string' && value.startsWith('raw:')) body += `,"${key}":${value.slice(4)}`;
      else body += `,"${key}":${JSON.stringify(value)}`;
    }
  }
  return body + `,"request_id":${JSON.stringify(requestId)}}`;
}
