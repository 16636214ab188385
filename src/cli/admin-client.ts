import { AdminApiError, CliError } from './errors.js';
import { encodeJsonBody, type RequestBody } from './json-number.js';
import { MS_PER_SECOND } from '../platform/units.js';
import { DEFAULT_TIMEOUT_S } from './limits.js';

export type JsonObject = Record<string, unknown>;

export interface AdminRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Path below the admin base URL, starting with `/`. */
  path: string;
  body?: RequestBody;
}

export interface AdminResponse {
  status: number;
  body: JsonObject;
  /** The body exactly as received, printed by `--json` so no number is re-rounded. */
  raw: string;
}

const DEFAULT_TIMEOUT_MS = DEFAULT_TIMEOUT_S * MS_PER_SECOND;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Node's fetch hides the real reason in `cause`: a socket error code
 * (for dual-stack hosts, inside `cause.errors`), or a plain message such as
 * "bad port" for ports fetch refuses to use.
 */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown; errors?: { code?: unknown }[] } }).cause;
  const code = cause?.code ?? cause?.errors?.[0]?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (typeof code === 'string') return code;
  if (typeof cause?.message === 'string' && cause.message !== '') return cause.message;
  return err instanceof Error ? err.message : String(err);
}

function networkError(err: unknown, baseUrl: string, timeoutMs: number): CliError {
  if (err instanceof Error && err.name === 'TimeoutError') {
    return new CliError(`the server at ${baseUrl} did not answer within ${timeoutMs / MS_PER_SECOND} seconds.`);
  }
  return new CliError(
    `the server is not reachable at ${baseUrl} (${networkReason(err)}). Start it with \`npm start\`, ` +
      'or point the CLI at it with --admin-url or ADMIN_URL.',
  );
}

function apiError(status: number, body: unknown, raw: string): AdminApiError {
  if (isObject(body) && typeof body.error === 'string' && typeof body.message === 'string') {
    return new AdminApiError(status, body.error, body.message, body, raw);
  }
  return new AdminApiError(status, `HTTP ${status}`, 'the server refused the request without saying why.');
}

/** Thin wrapper over global fetch that turns every failure into one plain sentence. */
export class AdminClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string | undefined,
    private readonly timeoutMs: number = DEFAULT_TIMEOUT_MS,
  ) {}

  async send(request: AdminRequest): Promise<AdminResponse> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    let payload: string | undefined;
    if (request.body !== undefined) {
      payload = encodeJsonBody(request.body);
      headers['content-type'] = 'application/json';
    }

    let status: number;
    let raw: string;
    try {
      const response = await fetch(this.baseUrl + request.path, {
        method: request.method,
        headers,
        body: payload,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = response.status;
      raw = await response.text();
    } catch (err) {
      throw networkError(err, this.baseUrl, this.timeoutMs);
    }

    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      throw new CliError(
        `the server at ${this.baseUrl} answered HTTP ${status} with something that is not JSON; is --admin-url pointing at the admin API?`,
      );
    }
    if (status < 200 || status > 299 || !isObject(body) || body.ok !== true) throw apiError(status, body, raw);
    return { status, body, raw };
  }
}
