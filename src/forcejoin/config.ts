/**
 * Force-join settings, read from the environment and checked once at
 * start-up. Force-join is off unless FORCEJOIN_CHANNEL is set; once it is
 * set, a missing link or bot token stops the process, because a required
 * channel that can never be verified would refuse every order.
 *
 * Error messages name the variable and, except for the bot token, show the
 * bad value. The bot token is a credential: it is never echoed.
 */
import { MS_PER_SECOND } from '../platform/index.js';
import { CACHE_S_MAX, JOINED_CACHE_MS_DEFAULT, NOT_JOINED_CACHE_MS_DEFAULT, TIMEOUT_MS_DEFAULT, TIMEOUT_MS_MAX } from './limits.js';

export interface ForceJoinConfig {
  /** '@channelusername' or a numeric chat id such as '-1001234567890'. */
  channel: string;
  /** Shown to customers who have not joined, e.g. 'https://t.me/mychannel'. */
  joinLink: string;
  /** The Bot API token; the bot must be an administrator of the channel. */
  botToken: string;
  /** Without a trailing slash; tests point it at a local fake. */
  apiBaseUrl: string;
  /** Longest wait for one getChatMember answer before failing closed. */
  timeoutMs: number;
  /** How long a 'joined' answer is trusted. */
  joinedCacheMs: number;
  /** How long a 'not-joined' answer is trusted; short, so a customer who has just joined can order soon after. */
  notJoinedCacheMs: number;
}

export const FORCEJOIN_DEFAULTS = {
  apiBaseUrl: 'https://api.telegram.org',
  timeoutMs: TIMEOUT_MS_DEFAULT,
  joinedCacheMs: JOINED_CACHE_MS_DEFAULT,
  notJoinedCacheMs: NOT_JOINED_CACHE_MS_DEFAULT,
} as const;

/** Every variable this module reads, with its meaning (for the README). */
export const FORCEJOIN_ENV = [
  { env: 'FORCEJOIN_CHANNEL', def: '', doc: "Required Telegram channel ('@name' or numeric id like -1001234567890); unset disables force-join." },
  { env: 'FORCEJOIN_LINK', def: '', doc: 'Join link shown to customers (https://t.me/...); required with FORCEJOIN_CHANNEL.' },
  { env: 'FORCEJOIN_BOT_TOKEN', def: '', doc: 'Bot API token of a bot that administers the channel; required with FORCEJOIN_CHANNEL.' },
  { env: 'TELEGRAM_API_BASE_URL', def: FORCEJOIN_DEFAULTS.apiBaseUrl, doc: 'Bot API base URL.' },
  { env: 'FORCEJOIN_TIMEOUT_MS', def: String(FORCEJOIN_DEFAULTS.timeoutMs), doc: `Timeout of one membership check, milliseconds (1 to ${TIMEOUT_MS_MAX}).` },
  { env: 'FORCEJOIN_JOINED_CACHE_S', def: String(FORCEJOIN_DEFAULTS.joinedCacheMs / MS_PER_SECOND), doc: "Seconds a 'joined' answer is cached (0 disables)." },
  { env: 'FORCEJOIN_NOT_JOINED_CACHE_S', def: String(FORCEJOIN_DEFAULTS.notJoinedCacheMs / MS_PER_SECOND), doc: "Seconds a 'not joined' answer is cached (0 disables)." },
] as const;

/** Public usernames are 5 to 32 letters, digits or underscores; numeric ids are negative for groups and channels. */
const CHANNEL = /^(@[A-Za-z0-9_]{5,32}|-?\d{1,20})$/;
/** As issued by BotFather: '<bot id>:<secret>'. Checked so that a pasted typo fails at start-up, not on the first order. */
const BOT_TOKEN = /^\d{1,20}:[A-Za-z0-9_-]{20,100}$/;

type Env = Record<string, string | undefined>;

/** An unset or empty variable counts as absent, as a blank line in an env file usually means "not set". */
function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return def;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(raw)}.`);
  }
  return Number(raw);
}

function url(name: string, raw: string, protocols: string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new Error(`${name} must be an absolute URL; got ${JSON.stringify(raw)}.`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new Error(`${name} must start with ${protocols.map((p) => p + '//').join(' or ')}; got ${JSON.stringify(raw)}.`);
  }
  return raw;
}

/** The force-join settings, or null when FORCEJOIN_CHANNEL is not set (force-join off). Throws on a bad value. */
export function forceJoinConfigFromEnv(env: Env): ForceJoinConfig | null {
  const channel = read(env, 'FORCEJOIN_CHANNEL');
  if (channel === undefined) return null;
  if (!CHANNEL.test(channel)) {
    throw new Error(
      `FORCEJOIN_CHANNEL must be a channel username like '@mychannel' or a numeric chat id like '-1001234567890'; got ${JSON.stringify(channel)}.`,
    );
  }
  const link = read(env, 'FORCEJOIN_LINK');
  if (link === undefined) {
    throw new Error('FORCEJOIN_LINK must be set when FORCEJOIN_CHANNEL is set: customers who have not joined are shown this link.');
  }
  const joinLink = url('FORCEJOIN_LINK', link, ['https:', 'http:', 'tg:']);
  const botToken = read(env, 'FORCEJOIN_BOT_TOKEN');
  if (botToken === undefined) {
    throw new Error('FORCEJOIN_BOT_TOKEN must be set when FORCEJOIN_CHANNEL is set: membership is checked through the Telegram Bot API.');
  }
  if (!BOT_TOKEN.test(botToken)) {
    // Never echo the value: it may be a real token with a stray character.
    throw new Error("FORCEJOIN_BOT_TOKEN must look like '123456789:AAH...' as issued by BotFather (the value is not shown).");
  }
  const base = read(env, 'TELEGRAM_API_BASE_URL') ?? FORCEJOIN_DEFAULTS.apiBaseUrl;
  const apiBaseUrl = url('TELEGRAM_API_BASE_URL', base, ['https:', 'http:']).replace(/\/+$/, '');
  return {
    channel,
    joinLink,
    botToken,
    apiBaseUrl,
    timeoutMs: integer(env, 'FORCEJOIN_TIMEOUT_MS', FORCEJOIN_DEFAULTS.timeoutMs, 1, TIMEOUT_MS_MAX),
    joinedCacheMs: integer(env, 'FORCEJOIN_JOINED_CACHE_S', FORCEJOIN_DEFAULTS.joinedCacheMs / MS_PER_SECOND, 0, CACHE_S_MAX) * MS_PER_SECOND,
    notJoinedCacheMs: integer(env, 'FORCEJOIN_NOT_JOINED_CACHE_S', FORCEJOIN_DEFAULTS.notJoinedCacheMs / MS_PER_SECOND, 0, CACHE_S_MAX) * MS_PER_SECOND,
  };
}
