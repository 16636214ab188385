import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { getChatMember, TelegramUnavailable } from '../../src/forcejoin/index.js';
import type { FakeBotApi } from './fake-bot-api.js';
import { configFor, useFakeBot } from './helpers.js';

const fakeBot = useFakeBot();
let bot: FakeBotApi;
beforeAll(() => {
  bot = fakeBot();
});

/** Resolves the TelegramUnavailable that `promise` rejects with (fails the test otherwise). */
async function unavailable(promise: Promise<unknown>): Promise<TelegramUnavailable> {
  const error = await promise.then(
    (value) => {
      throw new Error(`expected TelegramUnavailable, got ${String(value)}`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TelegramUnavailable);
  return error as TelegramUnavailable;
}

describe('getChatMember', () => {
  it.each([
    ['creator', 'joined'],
    ['administrator', 'joined'],
    ['member', 'joined'],
    ['left', 'not-joined'],
    ['kicked', 'not-joined'],
  ] as const)('maps status %s to %s', async (status, expected) => {
    bot.setMember(101, status);
    expect(await getChatMember(configFor(bot), 101)).toBe(expected);
  });

  it('sends chat_id and user_id as a GET to /bot<token>/getChatMember', async () => {
    bot.setMember(102, 'member');
    await getChatMember(configFor(bot), 102);
    expect(bot.calls.count).toBe(1);
    expect(bot.calls.last).toEqual({ method: 'getChatMember', chatId: bot.channel, userId: '102' });
  });

  it('counts restricted as joined only with is_member true', async () => {
    bot.setMember(103, 'restricted', true);
    bot.setMember(104, 'restricted', false);
    bot.setMember(105, 'restricted');
    expect(await getChatMember(configFor(bot), 103)).toBe('joined');
    expect(await getChatMember(configFor(bot), 104)).toBe('not-joined');
    expect(await getChatMember(configFor(bot), 105)).toBe('not-joined');
  });

  it("treats 400 'user not found' and PARTICIPANT_ID_INVALID as not joined", async () => {
    bot.setMember(106, 'user-not-found');
    expect(await getChatMember(configFor(bot), 106)).toBe('not-joined');
    bot.failWith(400, JSON.stringify({ ok: false, error_code: 400, description: 'Bad Request: PARTICIPANT_ID_INVALID' }));
    expect(await getChatMember(configFor(bot), 107)).toBe('not-joined');
  });

  it('treats a user Telegram never saw in the chat as not joined', async () => {
    expect(await getChatMember(configFor(bot), 999_999)).toBe('not-joined');
  });

  it('fails with bad-token on 401 (wrong token) and 404', async () => {
    const wrong = await unavailable(getChatMember(configFor(bot, { botToken: '1:wrong-token-xxxxxxxxxxxxxxxxxxxx' }), 101));
    expect(wrong.reason).toBe('bad-token');
    expect(wrong.httpStatus).toBe(401);
    bot.failWith(404);
    expect((await unavailable(getChatMember(configFor(bot), 101))).reason).toBe('bad-token');
  });

  it.each([500, 502, 503])('fails with rejected on %i', async (status) => {
    bot.failWith(status);
    const error = await unavailable(getChatMember(configFor(bot), 101));
    expect(error.reason).toBe('rejected');
    expect(error.httpStatus).toBe(status);
  });

  it('fails with rate-limited on 429 and keeps retry_after', async () => {
    bot.failWith(429);
    const error = await unavailable(getChatMember(configFor(bot), 101));
    expect(error.reason).toBe('rate-limited');
    expect(error.retryAfterS).toBe(5);
  });

  it('fails closed on misconfiguration: chat not found, bot not in channel', async () => {
    const wrongChat = await unavailable(getChatMember(configFor(bot, { channel: '@otherchannel' }), 101));
    expect(wrongChat.reason).toBe('rejected');
    expect(wrongChat.message).toContain('chat not found');
    bot.failWith(403);
    expect((await unavailable(getChatMember(configFor(bot), 101))).reason).toBe('rejected');
  });

  it.each([
    ['not JSON', 200, 'this is not json'],
    ['empty', 200, ''],
    ['no result', 200, '{"ok":true}'],
    ['unknown status', 200, '{"ok":true,"result":{"status":"ghost"}}'],
    ['HTML error page', 502, '<html>Bad Gateway</html>'],
  ])('fails with malformed or rejected on a %s body', async (_label, status, body) => {
    bot.failWith(status, body);
    const error = await unavailable(getChatMember(configFor(bot), 101));
    expect(['malformed', 'rejected']).toContain(error.reason);
  });

  it('fails with malformed on a body larger than 64 KiB', async () => {
    bot.failWith(200, JSON.stringify({ ok: true, result: { status: 'member', pad: 'x'.repeat(70_000) } }));
    expect((await unavailable(getChatMember(configFor(bot), 101))).reason).toBe('malformed');
  });

  it('fails with network when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await unavailable(getChatMember(configFor(bot, { apiBaseUrl: `http://127.0.0.1:${port}` }), 101));
    expect(error.reason).toBe('network');
  });

  it('fails with timeout when Telegram does not answer within timeoutMs (real timer)', async () => {
    bot.setMember(108, 'member');
    // Telegram never answers: only the client's own timeout can end the call.
    bot.hold();
    const error = await unavailable(getChatMember(configFor(bot, { timeoutMs: 100 }), 108));
    expect(error.reason).toBe('timeout');
    expect(error.message).toContain('100 ms');
  });

  it("ends when the caller's signal aborts", async () => {
    bot.setDelayMs(1_000);
    const controller = new AbortController();
    const pending = getChatMember(configFor(bot), 101, controller.signal);
    setTimeout(() => controller.abort(), 20);
    const error = await unavailable(pending);
    expect(error.reason).toBe('network');
  });

  it('rejects a user id that is not a positive integer', async () => {
    await expect(getChatMember(configFor(bot), 0)).rejects.toThrow(RangeError);
    await expect(getChatMember(configFor(bot), 1.5)).rejects.toThrow(RangeError);
  });

  describe('never puts the bot token in an error message', () => {
    const secret = '987654321:SECRET-do_not_leak_0123456789';

    it('on 401 from a wrong token', async () => {
      const error = await unavailable(getChatMember(configFor(bot, { botToken: secret }), 101));
      expect(error.message).not.toContain(secret);
      expect(error.message).not.toContain('SECRET');
      expect(error.stack ?? '').not.toContain('SECRET');
    });

    it('when Telegram echoes it in a description', async () => {
      bot.failWith(500, JSON.stringify({ ok: false, error_code: 500, description: `failure for /bot${bot.token}/getChatMember` }));
      const error = await unavailable(getChatMember(configFor(bot), 101));
      expect(error.message).toContain('[redacted]');
      expect(error.message).not.toContain(bot.token);
    });

    it('when a network error quotes the URL', async () => {
      const leaky = (async (input: string | URL | Request) => {
        throw new TypeError(`fetch failed for ${String(input)}`);
      }) as typeof fetch;
      const error = await unavailable(getChatMember(configFor(bot, { botToken: secret }), 101, undefined, leaky));
      expect(error.reason).toBe('network');
      expect(error.message).not.toContain(secret);
    });

    it('on timeout and on an invalid base URL', async () => {
      bot.setDelayMs(1_000);
      const slow = await unavailable(getChatMember(configFor(bot, { botToken: secret, timeoutMs: 50 }), 101));
      expect(slow.message).not.toContain('SECRET');
      const invalid = await unavailable(getChatMember(configFor(bot, { botToken: secret, apiBaseUrl: 'not a url' }), 101));
      expect(invalid.message).not.toContain('SECRET');
    });
  });
});
