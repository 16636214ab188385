/** Shared by the force-join tests: a config pointing at a FakeBotApi. */
import type { ForceJoinConfig } from '../../src/forcejoin/index.js';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { FakeBotApi } from './fake-bot-api.js';

export function configFor(bot: FakeBotApi, overrides: Partial<ForceJoinConfig> = {}): ForceJoinConfig {
  return {
    channel: bot.channel,
    joinLink: bot.joinLink,
    botToken: bot.token,
    apiBaseUrl: bot.url,
    timeoutMs: 2_000,
    joinedCacheMs: 600_000,
    notJoinedCacheMs: 30_000,
    ...overrides,
  };
}

/**
 * Starts one fake Bot API for a test file and resets its faults, delays and
 * call log after each test. Returns a getter, since the server starts in
 * beforeAll.
 */
export function useFakeBot(): () => FakeBotApi {
  let bot: FakeBotApi;
  beforeAll(async () => {
    bot = await FakeBotApi.start();
  });
  afterAll(async () => {
    await bot.close();
  });
  afterEach(() => {
    bot.release();
    bot.failWith(null);
    bot.setDelayMs(0);
    bot.resetCalls();
  });
  return () => bot;
}
