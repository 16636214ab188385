/**
 * One Bot API call, getChatMember, reduced to the only question force-join
 * asks: is this Telegram user in the channel?
 *
 * Two kinds of "no" are kept apart on purpose. Telegram saying the user is
 * not a member (or does not exist) is an answer: 'not-joined'. Telegram not
 * answering properly (timeout, network, bad token, 5xx, 429, nonsense) is
 * not an answer, and is thrown as TelegramUnavailable so that the caller
 * fails closed without caching it.
 *
 * The bot token sits in the request path. It never appears in a thrown
 * message: messages are built here from fixed text plus Telegram's own
 * description, and anything echoed is passed through `redact` first.
 */
import type { ForceJoinConfig } from './config.js';
import { DESCRIPTION_CHARS_MAX, RESPONSE_BYTES_MAX } from './limits.js';

export type Membership = 'joined' | 'not-joined';

export type UnavailableReason =
  /** No answer within the timeout. */
  | 'timeout'
  /** Connection refused, DNS failure, reset, or the caller aborted. */
  | 'network'
  /** 401 or 404: the bot token is wrong or revoked. */
  | 'bad-token'
  /** 429: Telegram is rate limiting the bot. */
  | 'rate-limited'
  /** Any other refusal: 5xx, 403 (bot removed from the channel), 400 chat not found, ... */
  | 'rejected'
  /** Not JSON, too large, or JSON in an unexpected shape. */
  | 'malformed'
  /** The verifier already has its limit of requests in flight. */
  | 'overloaded'
  /** A bug: an error this module did not expect (still fails closed). */
  | 'internal';

/** Telegram could not give an answer. The message is safe to log: it never contains the bot token. */
export class TelegramUnavailable extends Error {
  override readonly name = 'TelegramUnavailable';
  constructor(
    message: string,
    readonly reason: UnavailableReason,
    /** Telegram's HTTP status when there was one. */
    readonly httpStatus?: number,
    /** From a 429's parameters.retry_after, seconds. */
    readonly retryAfterS?: number,
  ) {
    super(message);
  }
}

/** Statuses that mean "in the channel". 'restricted' counts only with is_member (checked separately). */
const MEMBER_STATUSES = new Set(['creator', 'administrator', 'member']);
const NON_MEMBER_STATUSES = new Set(['left', 'kicked']);

/**
 * 400 descriptions meaning "this user is not (and cannot be) in the chat":
 * an answer, not an outage. Other 400s (chat not found, member list is
 * inaccessible because the bot is not an admin) are misconfiguration and
 * must fail closed as unavailable, so that the operator notices.
 */
const USER_NOT_FOUND = /user not found|PARTICIPANT_ID_INVALID|USER_ID_INVALID/i;

function redact(text: string, config: ForceJoinConfig): string {
  return config.botToken === '' ? text : text.split(config.botToken).join('[redacted]');
}

function describe(body: unknown, config: ForceJoinConfig): string {
  if (typeof body !== 'object' || body === null) return '';
  const description = (body as { description?: unknown }).description;
  if (typeof description !== 'string') return '';
  return ': ' + redact(description, config).slice(0, DESCRIPTION_CHARS_MAX);
}

/** Reads at most RESPONSE_BYTES_MAX bytes; the signal still applies while the body streams. */
async function readBody(response: Response): Promise<string | null> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > RESPONSE_BYTES_MAX) {
    await response.body?.cancel().catch(() => {});
    return null;
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > RESPONSE_BYTES_MAX) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function abortError(combined: AbortSignal, timeout: AbortSignal, config: ForceJoinConfig): TelegramUnavailable {
  // `combined` carries the reason of whichever signal fired first.
  if (timeout.aborted && combined.reason === timeout.reason) {
    return new TelegramUnavailable(`Telegram did not answer getChatMember within ${config.timeoutMs} ms.`, 'timeout');
  }
  return new TelegramUnavailable('The getChatMember request was cancelled.', 'network');
}

/**
 * Asks Telegram whether `userId` is a member of `config.channel`. The
 * request is bounded by `config.timeoutMs` (body included), and also ends
 * when `signal` aborts. Resolves 'joined' or 'not-joined'; throws
 * TelegramUnavailable for everything that is not a clear answer.
 */
export async function getChatMember(
  config: ForceJoinConfig,
  userId: number,
  signal?: AbortSignal,
  fetchImpl: typeof fetch = globalThis.fetch,
): Promise<Membership> {
  if (!Number.isSafeInteger(userId) || userId <= 0) {
    throw new RangeError(`A Telegram user id is a positive integer; got ${String(userId)}.`);
  }
  const timeout = AbortSignal.timeout(config.timeoutMs);
  const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);

  let target: URL;
  try {
    target = new URL(`${config.apiBaseUrl}/bot${config.botToken}/getChatMember`);
  } catch {
    // URL's own error would quote the input, token included.
    throw new TelegramUnavailable('TELEGRAM_API_BASE_URL does not form a valid URL.', 'malformed');
  }
  target.searchParams.set('chat_id', config.channel);
  target.searchParams.set('user_id', String(userId));

  let response: Response;
  let text: string | null;
  try {
    response = await fetchImpl(target, { method: 'GET', signal: combined, headers: { accept: 'application/json' } });
    text = await readBody(response);
  } catch (error) {
    if (combined.aborted) throw abortError(combined, timeout, config);
    // The cause's text (e.g. "connect ECONNREFUSED 127.0.0.1:1") helps the
    // operator; it is redacted in case a fetch implementation quotes the URL.
    const cause = (error instanceof Error ? (error.cause instanceof Error && error.cause.message) || error.message : String(error)) || 'unknown error';
    throw new TelegramUnavailable(`Could not reach the Telegram Bot API: ${redact(cause, config).slice(0, DESCRIPTION_CHARS_MAX)}.`, 'network');
  }
  const status = response.status;
  if (text === null) {
    throw new TelegramUnavailable(`The Telegram Bot API answered HTTP ${status} with a body over ${RESPONSE_BYTES_MAX} bytes.`, 'malformed', status);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }

  if (status === 401 || status === 404) {
    throw new TelegramUnavailable(`Telegram refused the bot token (HTTP ${status}${describe(body, config)}); check FORCEJOIN_BOT_TOKEN.`, 'bad-token', status);
  }
  if (status === 429) {
    const retry = (body as { parameters?: { retry_after?: unknown } } | undefined)?.parameters?.retry_after;
    const retryAfterS = typeof retry === 'number' && Number.isFinite(retry) ? retry : undefined;
    throw new TelegramUnavailable(`Telegram is rate limiting the bot (HTTP 429${describe(body, config)}).`, 'rate-limited', status, retryAfterS);
  }
  if (typeof body !== 'object' || body === null) {
    throw new TelegramUnavailable(`The Telegram Bot API answered HTTP ${status} with a body that is not JSON.`, 'malformed', status);
  }
  const envelope = body as { ok?: unknown; error_code?: unknown; description?: unknown; result?: unknown };
  if (envelope.ok === false) {
    const code = typeof envelope.error_code === 'number' ? envelope.error_code : status;
    if (code === 400 && typeof envelope.description === 'string' && USER_NOT_FOUND.test(envelope.description)) return 'not-joined';
    throw new TelegramUnavailable(`Telegram refused getChatMember (HTTP ${status}${describe(body, config)}).`, 'rejected', status);
  }
  if (status < 200 || status > 299 || envelope.ok !== true) {
    throw new TelegramUnavailable(`The Telegram Bot API answered HTTP ${status} without a usable result.`, 'rejected', status);
  }
  const result = envelope.result as { status?: unknown; is_member?: unknown } | null | undefined;
  const memberStatus = typeof result === 'object' && result !== null ? result.status : undefined;
  if (typeof memberStatus !== 'string') {
    throw new TelegramUnavailable('The Telegram Bot API answered getChatMember without a member status.', 'malformed', status);
  }
  if (MEMBER_STATUSES.has(memberStatus)) return 'joined';
  if (memberStatus === 'restricted') return result?.is_member === true ? 'joined' : 'not-joined';
  if (NON_MEMBER_STATUSES.has(memberStatus)) return 'not-joined';
  // A status this code does not know: fail closed, loudly, rather than guess.
  throw new TelegramUnavailable(`Telegram answered an unknown member status ${JSON.stringify(memberStatus.slice(0, 40))}.`, 'malformed', status);
}
