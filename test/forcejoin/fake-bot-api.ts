/**
 * A fake Telegram Bot API on a real local HTTP server (127.0.0.1, port 0),
 * so the client under test does real HTTP: real sockets, real timeouts.
 * It answers getChatMember the way Telegram does (same envelope, status
 * codes and descriptions) and can be made slow or failing.
 *
 * Usage (unit and end-to-end tests):
 *   const bot = await FakeBotApi.start();
 *   bot.setMember(42, 'member');
 *   // point TELEGRAM_API_BASE_URL at bot.url, FORCEJOIN_BOT_TOKEN at bot.token,
 *   // FORCEJOIN_CHANNEL at bot.channel (or use bot.env())
 *   await bot.close();
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ChatMemberStatus = 'creator' | 'administrator' | 'member' | 'restricted' | 'left' | 'kicked';

/** Accepted by the real config parser: '<digits>:<20+ token characters>'. */
export const FAKE_BOT_TOKEN = '123456789:TEST-fake_bot_token_AAAAAAAAAA';
export const FAKE_CHANNEL = '@fakechannel';
export const FAKE_JOIN_LINK = 'https://t.me/fakechannel';

export interface FakeCall {
  method: string;
  chatId: string | null;
  userId: string | null;
}

interface Member {
  status: ChatMemberStatus | 'user-not-found';
  isMember: boolean | undefined;
}

export interface FakeBotApiOptions {
  token?: string;
  channel?: string;
  /** Answer for users never passed to setMember; Telegram says 'left' for a real user who never joined. */
  defaultStatus?: ChatMemberStatus | 'user-not-found';
}

export class FakeBotApi {
  readonly token: string;
  readonly channel: string;
  readonly joinLink = FAKE_JOIN_LINK;
  /** How many requests arrived (any path), and the last getChatMember query. */
  readonly calls: { count: number; last: FakeCall | null; all: FakeCall[] } = { count: 0, last: null, all: [] };

  private readonly members = new Map<number, Member>();
  private readonly userDelays = new Map<number, number>();
  private delayMs = 0;
  private holdingAll = false;
  private readonly heldUsers = new Set<number>();
  private readonly held: (() => void)[] = [];
  private failure: { status: number; body: string | undefined } | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly defaultStatus: ChatMemberStatus | 'user-not-found';

  private constructor(
    private readonly server: Server,
    options: FakeBotApiOptions,
  ) {
    this.token = options.token ?? FAKE_BOT_TOKEN;
    this.channel = options.channel ?? FAKE_CHANNEL;
    this.defaultStatus = options.defaultStatus ?? 'left';
  }

  static async start(options: FakeBotApiOptions = {}): Promise<FakeBotApi> {
    let fake: FakeBotApi | undefined;
    const server = createServer((req, res) => fake?.handle(req, res));
    fake = new FakeBotApi(server, options);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return fake;
  }

  /** Base URL, for TELEGRAM_API_BASE_URL / ForceJoinConfig.apiBaseUrl. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The force-join environment pointing at this fake. */
  env(overrides: Record<string, string> = {}): Record<string, string> {
    return {
      FORCEJOIN_CHANNEL: this.channel,
      FORCEJOIN_LINK: this.joinLink,
      FORCEJOIN_BOT_TOKEN: this.token,
      TELEGRAM_API_BASE_URL: this.url,
      ...overrides,
    };
  }

  /** 'user-not-found' makes Telegram's 400 "Bad Request: user not found". `isMember` is sent for 'restricted' only. */
  setMember(userId: number, status: ChatMemberStatus | 'user-not-found', isMember?: boolean): void {
    this.members.set(userId, { status, isMember });
  }

  /** Delays every answer, or only answers about `userId`. 0 removes the delay. */
  setDelayMs(ms: number, userId?: number): void {
    if (userId === undefined) this.delayMs = ms;
    else if (ms === 0) this.userDelays.delete(userId);
    else this.userDelays.set(userId, ms);
  }

  /**
   * Every following request answers `httpStatus` with Telegram's error
   * envelope, or with `rawBody` verbatim (e.g. to send malformed JSON).
   * null returns to normal answers.
   */
  failWith(httpStatus: number | null, rawBody?: string): void {
    this.failure = httpStatus === null ? null : { status: httpStatus, body: rawBody };
  }

  /**
   * Holds every following answer, or only answers about `userId`, until
   * release(): no timer, the test decides when Telegram answers.
   */
  hold(userId?: number): void {
    if (userId === undefined) this.holdingAll = true;
    else this.heldUsers.add(userId);
  }

  release(): void {
    this.holdingAll = false;
    this.heldUsers.clear();
    for (const send of this.held.splice(0)) send();
  }

  resetCalls(): void {
    this.calls.count = 0;
    this.calls.last = null;
    this.calls.all = [];
  }

  async close(): Promise<void> {
    this.held.length = 0;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const target = new URL(req.url ?? '/', 'http://fake');
    const call: FakeCall = {
      method: target.pathname.split('/').pop() ?? '',
      chatId: target.searchParams.get('chat_id'),
      userId: target.searchParams.get('user_id'),
    };
    this.calls.count += 1;
    this.calls.last = call;
    this.calls.all.push(call);
    const userId = Number(call.userId);
    const delay = this.userDelays.get(userId) ?? this.delayMs;
    const reply = this.answer(target, call, userId);
    const send = (): void => {
      if (res.destroyed) return;
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(reply.body);
    };
    if (this.holdingAll || this.heldUsers.has(userId)) {
      this.held.push(send);
      return;
    }
    if (delay <= 0) return send();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      send();
    }, delay);
    this.timers.add(timer);
  }

  private answer(target: URL, call: FakeCall, userId: number): { status: number; body: string } {
    if (this.failure !== null) {
      const { status, body } = this.failure;
      return { status, body: body ?? JSON.stringify({ ok: false, error_code: status, description: describeStatus(status), ...retryAfter(status) }) };
    }
    const error = (status: number, description: string) => ({ status, body: JSON.stringify({ ok: false, error_code: status, description }) });
    if (target.pathname !== `/bot${this.token}/getChatMember`) {
      // Telegram answers 401 for an unknown token and 404 for an unknown method.
      return target.pathname.startsWith(`/bot${this.token}/`) ? error(404, 'Not Found') : error(401, 'Unauthorized');
    }
    if (call.chatId !== this.channel) return error(400, 'Bad Request: chat not found');
    if (!Number.isSafeInteger(userId) || userId <= 0) return error(400, 'Bad Request: PARTICIPANT_ID_INVALID');
    const member = this.members.get(userId) ?? { status: this.defaultStatus, isMember: undefined };
    if (member.status === 'user-not-found') return error(400, 'Bad Request: user not found');
    const result: Record<string, unknown> = {
      user: { id: userId, is_bot: false, first_name: `User ${userId}` },
      status: member.status,
    };
    if (member.status === 'restricted' && member.isMember !== undefined) result['is_member'] = member.isMember;
    return { status: 200, body: JSON.stringify({ ok: true, result }) };
  }
}

function describeStatus(status: number): string {
  switch (status) {
    case 400:
      return 'Bad Request';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden: bot was kicked from the channel chat';
    case 404:
      return 'Not Found';
    case 429:
      return 'Too Many Requests: retry after 5';
    default:
      return status >= 500 ? 'Internal Server Error' : `Error ${status}`;
  }
}

function retryAfter(status: number): Record<string, unknown> {
  return status === 429 ? { parameters: { retry_after: 5 } } : {};
}
