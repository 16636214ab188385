import { describe, expect, it } from 'vitest';
import { forceJoinConfigFromEnv } from '../../src/forcejoin/index.js';

const TOKEN = '123456789:AAHsecret-token_value_0123456789';
const BASE = { FORCEJOIN_CHANNEL: '@mychannel', FORCEJOIN_LINK: 'https://t.me/mychannel', FORCEJOIN_BOT_TOKEN: TOKEN };

describe('forceJoinConfigFromEnv', () => {
  it('is null when FORCEJOIN_CHANNEL is unset or blank', () => {
    expect(forceJoinConfigFromEnv({})).toBeNull();
    expect(forceJoinConfigFromEnv({ FORCEJOIN_CHANNEL: '  ', FORCEJOIN_BOT_TOKEN: 'whatever' })).toBeNull();
  });

  it('applies the defaults', () => {
    expect(forceJoinConfigFromEnv(BASE)).toEqual({
      channel: '@mychannel',
      joinLink: 'https://t.me/mychannel',
      botToken: TOKEN,
      apiBaseUrl: 'https://api.telegram.org',
      timeoutMs: 2_000,
      joinedCacheMs: 600_000,
      notJoinedCacheMs: 30_000,
    });
  });

  it('reads every variable, converting seconds to milliseconds and trimming the base URL', () => {
    const config = forceJoinConfigFromEnv({
      ...BASE,
      FORCEJOIN_CHANNEL: '-1001234567890',
      TELEGRAM_API_BASE_URL: 'http://127.0.0.1:9999/',
      FORCEJOIN_TIMEOUT_MS: '150',
      FORCEJOIN_JOINED_CACHE_S: '60',
      FORCEJOIN_NOT_JOINED_CACHE_S: '0',
    });
    expect(config).toMatchObject({
      channel: '-1001234567890',
      apiBaseUrl: 'http://127.0.0.1:9999',
      timeoutMs: 150,
      joinedCacheMs: 60_000,
      notJoinedCacheMs: 0,
    });
  });

  it.each([
    [{ FORCEJOIN_LINK: undefined }, /^FORCEJOIN_LINK must be set/],
    [{ FORCEJOIN_BOT_TOKEN: undefined }, /^FORCEJOIN_BOT_TOKEN must be set/],
    [{ FORCEJOIN_CHANNEL: 'mychannel' }, /^FORCEJOIN_CHANNEL must be a channel username/],
    [{ FORCEJOIN_CHANNEL: '@ab' }, /^FORCEJOIN_CHANNEL must be/],
    [{ FORCEJOIN_LINK: 't.me/mychannel' }, /^FORCEJOIN_LINK must be an absolute URL/],
    [{ FORCEJOIN_LINK: 'ftp://t.me/mychannel' }, /^FORCEJOIN_LINK must start with/],
    [{ TELEGRAM_API_BASE_URL: 'api.telegram.org' }, /^TELEGRAM_API_BASE_URL must be an absolute URL/],
    [{ TELEGRAM_API_BASE_URL: 'tg://x' }, /^TELEGRAM_API_BASE_URL must start with/],
    [{ FORCEJOIN_TIMEOUT_MS: '0' }, /^FORCEJOIN_TIMEOUT_MS must be an integer from 1 to 60000; got "0"\.$/],
    [{ FORCEJOIN_TIMEOUT_MS: '2s' }, /^FORCEJOIN_TIMEOUT_MS must be an integer/],
    [{ FORCEJOIN_TIMEOUT_MS: '60001' }, /^FORCEJOIN_TIMEOUT_MS must be/],
    [{ FORCEJOIN_JOINED_CACHE_S: '-1' }, /^FORCEJOIN_JOINED_CACHE_S must be an integer from 0/],
    [{ FORCEJOIN_NOT_JOINED_CACHE_S: '1.5' }, /^FORCEJOIN_NOT_JOINED_CACHE_S must be an integer/],
  ])('rejects %o with a sentence naming the variable', (overrides, message) => {
    expect(() => forceJoinConfigFromEnv({ ...BASE, ...overrides })).toThrow(message);
  });

  it('rejects a malformed bot token without echoing it', () => {
    let thrown: unknown;
    try {
      forceJoinConfigFromEnv({ ...BASE, FORCEJOIN_BOT_TOKEN: 'x' + TOKEN });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    const message = (thrown as Error).message;
    expect(message).toMatch(/^FORCEJOIN_BOT_TOKEN must look like/);
    expect(message).not.toContain('AAHsecret');
  });
});
