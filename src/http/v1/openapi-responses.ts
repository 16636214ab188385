/**
 * The responses of the OpenAPI document: the headers the server sends, and
 * every status an operation answers with, each error status with the codes
 * it carries. The test helpers hold every response the HTTP tests receive
 * to these (test/helpers/openapi-check.ts): a status or a header the server
 * sends that is not declared here fails the test that received it.
 */
import { ERRORS, type ErrorCode } from '../../errors/index.js';

export const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });

/** Every header a v1 response may carry, as `components.headers`. */
export const HEADERS = {
  'Request-Id': {
    description: 'The id of this request, as the server logs it; quote it when asking the operator about a request.',
    required: true,
    schema: { type: 'string', minLength: 1 },
  },
  'RateLimit-Policy': {
    description: "The key's rate limit (IETF RateLimit draft): requests per 60-second window. Sent on every response that counted against the key.",
    schema: { type: 'string', pattern: '^"default";q=[0-9]+;w=60$' },
  },
  RateLimit: {
    description: 'Requests left (r) and seconds until the bucket is full again (t). Sent on every response that counted against the key.',
    schema: { type: 'string', pattern: '^"default";r=[0-9]+;t=[0-9]+$' },
  },
  'X-RateLimit-Limit': {
    description: "The same limit in the common form, requests per minute; sent, like X-RateLimit-Remaining and X-RateLimit-Reset, only where the operator sets RATE_LIMIT_HEADERS=both.",
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Remaining': { description: 'Requests left now (RATE_LIMIT_HEADERS=both only).', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { description: 'Seconds until the bucket is full again (RATE_LIMIT_HEADERS=both only).', schema: { type: 'integer', minimum: 0 } },
  'Retry-After': { description: 'Whole seconds to wait before retrying.', required: true, schema: { type: 'integer', minimum: 1 } },
  'Idempotent-Replayed': {
    description: 'Present when this is the remembered answer to an earlier request with the same Idempotency-Key and payload.',
    schema: { type: 'string', enum: ['true'] },
  },
  Allow: { description: 'The methods the route accepts.', required: true, schema: { type: 'string', minLength: 1 } },
} as const;

export type HeaderName = keyof typeof HEADERS;

const RATE_HEADERS: readonly HeaderName[] = ['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

function headers(names: readonly HeaderName[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of ['Request-Id', ...names]) out[name] = { $ref: `#/components/headers/${name}` };
  return out;
}

/** An error status that is not its code's usual one: VALIDATION's for a body or headers too large and a wrong content type. */
const VARIANTS = {
  TOO_LARGE: { code: 'VALIDATION', status: 413, meaning: 'The body is larger than the limit (the error carries it as limit, in bytes).' },
  MEDIA_TYPE: { code: 'VALIDATION', status: 415, meaning: 'The body is not sent as Content-Type: application/json.' },
  HEADERS_TOO_LARGE: { code: 'VALIDATION', status: 431, meaning: 'The request headers are larger than the limit; the connection is closed.' },
} as const satisfies Record<string, { code: ErrorCode; status: number; meaning: string }>;

export type Refusal = ErrorCode | keyof typeof VARIANTS;

/** What every authenticated operation may answer besides its own outcomes. */
export const COMMON: readonly Refusal[] = ['AUTH', 'BANNED', 'RATE', 'VALIDATION', 'HEADERS_TOO_LARGE', 'INTERNAL', 'UNAVAILABLE'];
/** What every operation with a JSON body may answer besides COMMON. */
export const BODY: readonly Refusal[] = ['TOO_LARGE', 'MEDIA_TYPE'];

/** A success answer of an authenticated operation. */
export function success(description: string, schema: unknown, also: readonly HeaderName[] = []): Record<string, unknown> {
  return { description, headers: headers([...RATE_HEADERS, ...also]), ...json(schema) };
}

/** A public answer: only Request-Id. */
export function publicAnswer(description: string, schema: unknown): Record<string, unknown> {
  return { description, headers: headers([]), ...json(schema) };
}

function refusalOf(refusal: Refusal): { code: ErrorCode; status: number; meaning: string } {
  if (refusal in VARIANTS) return VARIANTS[refusal as keyof typeof VARIANTS];
  const code = refusal as ErrorCode;
  return { code, status: ERRORS[code].status, meaning: ERRORS[code].meaning };
}

/** The error body of one status: the Error schema, its `error` limited to the codes that status carries. */
function errorSchema(codes: readonly ErrorCode[]): unknown {
  return { allOf: [{ $ref: '#/components/schemas/Error' }, { type: 'object', properties: { error: { enum: [...new Set(codes)] } } }] };
}

/** Headers an operation adds to some of its refusals: those of the statuses `on` names. */
export interface RefusalHeaders {
  headers: readonly HeaderName[];
  on: readonly Refusal[];
}

/**
 * The error responses for `refusals`, keyed by status; 429 and 503 carry
 * Retry-After, and the statuses of `also.on` carry `also.headers` (an order
 * replays a remembered business refusal with Idempotent-Replayed).
 */
export function refusals(refusals: readonly Refusal[], also: RefusalHeaders = { headers: [], on: [] }): Record<string, unknown> {
  const byStatus = new Map<number, { codes: ErrorCode[]; lines: string[] }>();
  for (const refusal of refusals) {
    const { code, status, meaning } = refusalOf(refusal);
    const entry = byStatus.get(status) ?? { codes: [], lines: [] };
    entry.codes.push(code);
    entry.lines.push(`${code}: ${meaning}`);
    byStatus.set(status, entry);
  }
  const alsoOn = new Set(also.on.map((refusal) => refusalOf(refusal).status));
  const out: Record<string, unknown> = {};
  for (const [status, { codes, lines }] of [...byStatus].sort(([a], [b]) => a - b)) {
    const retry: HeaderName[] = status === ERRORS.RATE.status || status === ERRORS.UNAVAILABLE.status ? ['Retry-After'] : [];
    const extra = alsoOn.has(status) ? also.headers : [];
    out[String(status)] = { description: lines.join(' '), headers: headers([...RATE_HEADERS, ...retry, ...extra]), ...json(errorSchema(codes)) };
  }
  return out;
}

/**
 * The answers to a request no operation describes, as `components.responses`:
 * a path the API does not serve, and a served path with a method it does
 * not accept.
 */
export const ROUTE_RESPONSES = {
  NotFound: { description: `NOT_FOUND: ${ERRORS.NOT_FOUND.meaning}`, headers: headers([]), ...json(errorSchema(['NOT_FOUND'])) },
  MethodNotAllowed: { description: `METHOD: ${ERRORS.METHOD.meaning}`, headers: headers(['Allow']), ...json(errorSchema(['METHOD'])) },
};
