/** Shared by the force-join tests: a config pointing at a FakeBotApi. */
import type { ForceJoinConfig } from '../../src/forcejoin/index.js';
import type { FakeBotApi } from './fake-bot-api.js';

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
