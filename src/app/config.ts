/**
 * Configuration from environment variables, overridden by command-line
 * flags, checked once at start-up (a bad value stops the process with a
 * sentence naming the variable).
 */
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { RATE_LIMIT_MAX } from '../ledger/index.js';
import { RATE_LIMIT_HEADER_CHOICES, TARGET_CHARS_MAX, type RateLimitHeaders } from '../http/index.js';
import { ALLOWED_PER_SECOND_MAX } from '../webhooks/index.js';
import type { SyncMode } from '../wal/index.js';
import { forceJoinConfigFromEnv, type ForceJoinConfig } from '../forcejoin/index.js';
import { LOG_KEEP_RECORDS } from '../replication/index.js';
import { SNAPSHOT_KEEP_MAX, SNAPSHOT_MB_PER_SECOND_DEFAULT, SNAPSHOT_MB_PER_SECOND_MAX } from '../ops/index.js';
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, MS_PER_SECOND } from '../platform/index.js';

export interface Config {
  host: string;
  port: number;
  adminHost: string;
  adminPort: number;
  dataDir: string;
  adminToken: string | null;
  logLevel: string;
  defaultRateLimitPerMinute: number;
  /** RATE_LIMIT_HEADERS: `ietf` (the draft's RateLimit-Policy and RateLimit) or `both` (plus X-RateLimit-*). */
  rateLimitHeaders: RateLimitHeaders;
  bodyBytesMax: number;
  headerBytesMax: number;
  targetCharsMax: number;
  mailboxMax: number;
  idempotencyRetentionHours: number;
  authFailuresPerMinute: number;
  syncMode: SyncMode;
  /** Zero-filled MiB kept ahead of the data file's last page; 0: none. */
  walPreallocateMb: number;
  /** Nice value for the libuv thread pool (LMDB's write transactions); 0 leaves it alone. */
  threadpoolNice: number;
  seedDemo: boolean;
  /** ISO 4217 code API v2 answers carry in `currency` (what one credit is sold in). */
  currency: string;
  /** Telegram force-join, from the FORCEJOIN_* variables; null when no channel is required. */
  forceJoin: ForceJoinConfig | null;
  webhooksAllowHttp: boolean;
  webhooksAllowPrivate: boolean;
  /** Base64 of 32 bytes, or null: the key file in the data directory. */
  webhooksSecretKey: string | null;
  webhooksRetryHours: number;
  webhooksConcurrency: number;
  webhooksTimeoutMs: number;
  webhooksConnectTimeoutMs: number;
  webhooksPerAccount: number;
  webhooksLogKeep: number;
  webhooksBusyPercent: number;
  webhooksBusyMinPerSecond: number;
  webhooksHeldMax: number;
  /** PostgreSQL URI of the group's log (several hosts allowed); null: standalone. */
  replicationUrl: string | null;
  /** This node's name in its group (and on /readyz). */
  nodeName: string;
  /** Base64 of the 16-byte key that turns order storage keys into public ids; null: the one kept in the store. */
  orderIdKey: string | null;
  /** Log records kept behind the slowest node (replicated mode). */
  replicationLogKeep: number;
  /** WEBHOOKS_ROTATE_SECRETS: at start, give endpoints whose secrets the sealing key cannot open new secrets (and disable them) instead of refusing to start. */
  webhooksRotateSecrets: boolean;
  /** SNAPSHOT_EVERY in milliseconds, or null: no scheduled snapshots. */
  snapshotEveryMs: number | null;
  /** Where scheduled snapshots go (SNAPSHOT_DIR); null when none are scheduled. */
  snapshotDir: string | null;
  /** Scheduled snapshots kept in SNAPSHOT_DIR; older ones are removed. */
  snapshotKeep: number;
  /** The rate every snapshot copies at, MiB a second. */
  snapshotMbPerSecond: number;
}

/** Every setting: its environment variable, its flag and its default. */
export const SETTINGS = [
  { key: 'host', env: 'HOST', def: '127.0.0.1', kind: 'string', doc: 'Customer API listen address.' },
  { key: 'port', env: 'PORT', def: '8080', kind: 'port', doc: 'Customer API port (0 picks a free one).' },
  { key: 'adminHost', env: 'ADMIN_HOST', def: '127.0.0.1', kind: 'string', doc: 'Admin API listen address (keep it on loopback).' },
  { key: 'adminPort', env: 'ADMIN_PORT', def: '8081', kind: 'port', doc: 'Admin API port.' },
  { key: 'dataDir', env: 'DATA_DIR', def: './data', kind: 'string', doc: 'LMDB directory; created if missing.' },
  { key: 'adminToken', env: 'ADMIN_TOKEN', def: '', kind: 'string', doc: 'Admin bearer token; else generated once into DATA_DIR/admin-token (mode 0600).' },
  { key: 'logLevel', env: 'LOG_LEVEL', def: 'info', kind: 'string', doc: 'pino level: trace, debug, info, warn, error, fatal, silent.' },
  { key: 'defaultRateLimitPerMinute', env: 'RATE_LIMIT_DEFAULT', def: '60', kind: 'int', min: 1, max: RATE_LIMIT_MAX, doc: 'Requests per minute for new keys.' },
  {
    key: 'rateLimitHeaders',
    env: 'RATE_LIMIT_HEADERS',
    def: 'ietf',
    kind: 'choice',
    choices: RATE_LIMIT_HEADER_CHOICES,
    doc: "Rate-limit headers on every counted answer: 'ietf' (RateLimit-Policy and RateLimit) or 'both' (also X-RateLimit-Limit, -Remaining and -Reset, for clients that read only those).",
  },
  { key: 'bodyBytesMax', env: 'BODY_BYTES_MAX', def: '16384', kind: 'int', min: 1, doc: 'Largest request body, bytes.' },
  { key: 'headerBytesMax', env: 'HEADER_BYTES_MAX', def: '8192', kind: 'int', min: 1, doc: 'Largest total of request header names and values, bytes (uWS has its own hard limit above this).' },
  { key: 'targetCharsMax', env: 'TARGET_CHARS_MAX', def: String(TARGET_CHARS_MAX), kind: 'int', min: 10, max: TARGET_CHARS_MAX, doc: `Longest order target URL, characters (at most ${TARGET_CHARS_MAX}).` },
  { key: 'mailboxMax', env: 'MAILBOX_MAX', def: '1024', kind: 'int', min: 1, doc: 'Most requests waiting per wallet before 503.' },
  { key: 'idempotencyRetentionHours', env: 'IDEMPOTENCY_RETENTION_HOURS', def: '24', kind: 'int', min: 1, doc: 'How long an Idempotency-Key is remembered.' },
  { key: 'authFailuresPerMinute', env: 'AUTH_FAILURES_PER_MINUTE', def: '30', kind: 'int', min: 1, doc: 'Failed authentications allowed per client IP per minute.' },
  { key: 'syncMode', env: 'WAL_SYNC_MODE', def: 'commit', kind: 'sync', doc: "'commit' (fsync inside the commit), 'overlapping' (commit, then await lmdb-js flushed) or 'log' (experimental: commit log first, LMDB behind it)." },
  {
    key: 'walPreallocateMb',
    env: 'WAL_PREALLOCATE_MB',
    def: '64',
    kind: 'int',
    min: 0,
    max: 65536,
    doc: "Zero-filled space kept ahead of the data file's last page, MiB (0: none): a commit's sync then writes data only, not the file's new size and blocks.",
  },
  {
    key: 'threadpoolNice',
    env: 'THREADPOOL_NICE',
    def: '5',
    kind: 'int',
    min: 0,
    max: 19,
    doc: "Nice value (0 to 19) for the libuv thread pool that runs LMDB's write transactions, so that it never preempts the event loop; 0 leaves it alone. Linux only.",
  },
  { key: 'currency', env: 'CURRENCY', def: 'USD', kind: 'string', doc: 'Three-letter currency code API v2 answers show in `currency`.' },
  {
    key: 'seedDemo',
    env: 'SEED_DEMO',
    def: 'true',
    kind: 'bool',
    doc: 'Seed a demo account and services into an empty data directory; never with NODE_ENV=production, where the default is false and true is refused.',
  },
  { key: 'webhooksAllowHttp', env: 'WEBHOOKS_ALLOW_HTTP', def: 'false', kind: 'bool', doc: 'Accept plain http:// webhook URLs (else https only).' },
  {
    key: 'webhooksAllowPrivate',
    env: 'WEBHOOKS_ALLOW_PRIVATE',
    def: 'false',
    kind: 'bool',
    doc: 'Allow webhook deliveries to loopback, private, link-local and other non-public addresses (checked after DNS, on every connection).',
  },
  {
    key: 'webhooksSecretKey',
    env: 'WEBHOOKS_SECRET_KEY',
    def: '',
    kind: 'string',
    doc: 'Base64 of 32 bytes: the AES-256-GCM key that seals webhook secrets in LMDB; else generated once into DATA_DIR/webhook-secrets.key (mode 0600).',
  },
  { key: 'webhooksRetryHours', env: 'WEBHOOKS_RETRY_HOURS', def: '24', kind: 'int', min: 1, max: 720, doc: 'How long a webhook message is retried, from its first failed attempt, before its endpoint is marked failing.' },
  { key: 'webhooksConcurrency', env: 'WEBHOOKS_CONCURRENCY', def: '16', kind: 'int', min: 1, max: 1024, doc: 'Most webhook deliveries in flight at once (at most 8 per endpoint, 1 while its last attempt timed out, and three quarters of them per account).' },
  { key: 'webhooksTimeoutMs', env: 'WEBHOOKS_TIMEOUT_MS', def: '10000', kind: 'int', min: 50, max: 60000, doc: "Most milliseconds a delivery waits for the receiver's answer (connect included)." },
  { key: 'webhooksConnectTimeoutMs', env: 'WEBHOOKS_CONNECT_TIMEOUT_MS', def: '5000', kind: 'int', min: 50, max: 60000, doc: 'Most milliseconds a delivery waits to connect (TCP and TLS).' },
  { key: 'webhooksPerAccount', env: 'WEBHOOKS_PER_ACCOUNT', def: '5', kind: 'int', min: 1, max: 100, doc: 'Most webhook endpoints per account.' },
  { key: 'webhooksLogKeep', env: 'WEBHOOKS_LOG_KEEP', def: '100', kind: 'int', min: 1, max: 100000, doc: 'Delivery attempts kept in each endpoint\'s delivery log.' },
  {
    key: 'webhooksBusyPercent',
    env: 'WEBHOOKS_BUSY_PERCENT',
    def: '0',
    kind: 'int',
    min: 0,
    max: 100,
    doc: 'While the order path has no spare capacity (its event loop over 75%, averaged over the last 200 ms, or 128 entries waiting for their commit), webhook deliveries started per 100 ms at least: this percent of the entries committed in the 100 ms before (with spare capacity, deliveries take it).',
  },
  {
    key: 'webhooksBusyMinPerSecond',
    env: 'WEBHOOKS_BUSY_MIN_PER_SECOND',
    def: '10',
    kind: 'int',
    min: 0,
    max: ALLOWED_PER_SECOND_MAX,
    doc: 'While the order path has no spare capacity, webhook deliveries started a second at least, whatever WEBHOOKS_BUSY_PERCENT gives (0: none until it has room).',
  },
  {
    key: 'webhooksHeldMax',
    env: 'WEBHOOKS_HELD_MAX',
    def: '1000000',
    kind: 'int',
    min: 1,
    max: 1_000_000_000,
    doc: 'Most undelivered webhook messages kept for one endpoint that cannot take them; beyond it newer ones are dropped and the endpoint is marked failing.',
  },
  {
    key: 'replicationUrl',
    env: 'REPLICATION_URL',
    def: '',
    kind: 'string',
    doc: 'PostgreSQL connection URI of the group\'s log (replicated mode); several hosts with target_session_attrs=read-write find a promoted standby. Empty: standalone.',
  },
  { key: 'nodeName', env: 'NODE_NAME', def: '', kind: 'string', doc: "This node's name in its group, shown on /readyz (required in replicated mode; else the host name)." },
  {
    key: 'orderIdKey',
    env: 'ORDER_ID_KEY',
    def: '',
    kind: 'string',
    doc: 'Base64 of 16 bytes: the key that turns order storage keys into public ids (required in replicated mode, the same on every node); else generated once into the store.',
  },
  { key: 'replicationLogKeep', env: 'REPLICATION_LOG_KEEP', def: String(LOG_KEEP_RECORDS), kind: 'int', min: 0, doc: 'Replicated mode: log records kept in PostgreSQL behind the slowest node (a node joining from an empty data directory needs the log from its start).' },
  {
    key: 'webhooksRotateSecrets',
    env: 'WEBHOOKS_ROTATE_SECRETS',
    def: 'false',
    kind: 'bool',
    doc: "At start, give each webhook endpoint whose secret the sealing key cannot open a new secret and disable it, instead of refusing to start (see the operator guide's restore section).",
  },
  { key: 'snapshotEvery', env: 'SNAPSHOT_EVERY', def: '', kind: 'duration', doc: 'Take a verified snapshot into SNAPSHOT_DIR this long after the last one finished (such as 6h, 30m, 1d); unset: none.' },
  { key: 'snapshotDir', env: 'SNAPSHOT_DIR', def: '', kind: 'string', doc: 'Directory of scheduled snapshots (each in a subdirectory named for its time); required with SNAPSHOT_EVERY.' },
  { key: 'snapshotKeep', env: 'SNAPSHOT_KEEP', def: '7', kind: 'int', min: 1, max: SNAPSHOT_KEEP_MAX, doc: 'Scheduled snapshots kept in SNAPSHOT_DIR; after each one the oldest beyond this are removed.' },
  {
    key: 'snapshotMbPerSecond',
    env: 'SNAPSHOT_MB_PER_SECOND',
    def: String(SNAPSHOT_MB_PER_SECOND_DEFAULT),
    kind: 'int',
    min: 1,
    max: SNAPSHOT_MB_PER_SECOND_MAX,
    doc: "Most MiB a second a snapshot copies, synced every 4 MiB: keep it well below the disk's write rate so the orders' syncs keep theirs.",
  },
] as const;

const DURATION_UNIT_MS: Record<string, number> = { s: MS_PER_SECOND, m: MS_PER_MINUTE, h: MS_PER_HOUR, d: MS_PER_DAY };

/** `90s`, `30m`, `6h`, `1d`, `1h30m` in milliseconds; null for anything else, zero included. */
export function durationMs(text: string): number | null {
  if (!/^(\d+[smhd])+$/.test(text)) return null;
  let total = 0;
  for (const [, count, unit] of text.matchAll(/(\d+)([smhd])/g)) total += Number(count) * DURATION_UNIT_MS[unit!]!;
  return total > 0 && Number.isSafeInteger(total) ? total : null;
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** The command-line flag of a setting: `defaultRateLimitPerMinute` → `default-rate-limit-per-minute`. */
export function flagName(key: string): string {
  return key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): Config {
  const options = Object.fromEntries(SETTINGS.map((s) => [flagName(s.key), { type: 'string' as const }]));
  const { values } = parseArgs({ args: argv, options, strict: true, allowPositionals: false });
  const out: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    const raw = (values[flagName(s.key)] as string | undefined) ?? env[s.env] ?? s.def;
    const bad = (what: string): never => {
      throw new Error(`${s.env} (--${flagName(s.key)}) must be ${what}; got ${JSON.stringify(raw)}.`);
    };
    switch (s.kind) {
      case 'string':
        out[s.key] = raw;
        break;
      case 'port':
        if (!/^\d+$/.test(raw) || Number(raw) > 65535) bad('a port number from 0 to 65535');
        out[s.key] = Number(raw);
        break;
      case 'int': {
        // A whole number in [min, max]; without a max, any safe integer from min (always 1 then).
        const { min, max } = s as { min: number; max?: number };
        const n = Number(raw);
        if (!/^\d+$/.test(raw) || n < min || (max === undefined ? !Number.isSafeInteger(n) : n > max)) {
          bad(max === undefined ? 'a positive integer' : `an integer from ${min} to ${max}`);
        }
        out[s.key] = n;
        break;
      }
      case 'choice': {
        const { choices } = s as { choices: readonly string[] };
        if (!choices.includes(raw)) bad(choices.map((c) => `'${c}'`).join(' or '));
        out[s.key] = raw;
        break;
      }
      case 'sync':
        if (raw !== 'commit' && raw !== 'overlapping' && raw !== 'log') bad("'commit', 'overlapping' or 'log'");
        out[s.key] = raw;
        break;
      case 'bool':
        if (!['true', 'false', '1', '0'].includes(raw)) bad('true or false');
        out[s.key] = raw === 'true' || raw === '1';
        break;
      case 'duration':
        out[s.key] = raw === '' ? null : (durationMs(raw) ?? bad('a duration such as 90s, 30m, 6h, 1d or 1h30m'));
        break;
    }
  }
  if (!LEVELS.includes(out['logLevel'] as string)) throw new Error(`LOG_LEVEL must be one of ${LEVELS.join(', ')}.`);
  if (!/^[A-Z]{3}$/.test(out['currency'] as string)) {
    throw new Error(`CURRENCY (--currency) must be a three-letter ISO 4217 code such as USD; got ${JSON.stringify(out['currency'])}.`);
  }
  out['adminToken'] = out['adminToken'] === '' ? null : out['adminToken'];
  out['webhooksSecretKey'] = out['webhooksSecretKey'] === '' ? null : out['webhooksSecretKey'];
  // The flag is --snapshot-every; the setting holds milliseconds.
  out['snapshotEveryMs'] = out['snapshotEvery'];
  delete out['snapshotEvery'];
  out['snapshotDir'] = out['snapshotDir'] === '' ? null : out['snapshotDir'];
  if (out['snapshotEveryMs'] !== null && out['snapshotDir'] === null) {
    throw new Error('SNAPSHOT_EVERY (--snapshot-every) is set but SNAPSHOT_DIR (--snapshot-dir) is not: name the directory scheduled snapshots go to.');
  }
  out['forceJoin'] = forceJoinConfigFromEnv(env);
  out['replicationUrl'] = out['replicationUrl'] === '' ? null : out['replicationUrl'];
  out['orderIdKey'] = out['orderIdKey'] === '' ? null : out['orderIdKey'];
  checkReplicated(out as unknown as Config, env);
  out['nodeName'] = out['nodeName'] === '' ? hostname() : out['nodeName'];
  out['seedDemo'] = seedDemoFor(env, out['seedDemo'] as boolean, values['seed-demo'] !== undefined || env['SEED_DEMO'] !== undefined);
  return out as unknown as Config;
}

/**
 * Replicated mode: every node of a group must share the admin token, the
 * webhook sealing key and the order-id key (checked against the group's at
 * start), so each is given explicitly; the node needs a name; and the log
 * in PostgreSQL makes a change durable, so no WAL_SYNC_MODE applies.
 */
function checkReplicated(config: Config, env: NodeJS.ProcessEnv): void {
  if (config.orderIdKey !== null && Buffer.from(config.orderIdKey, 'base64').length !== 16) {
    throw new Error('ORDER_ID_KEY must be the base64 of exactly 16 bytes (openssl rand -base64 16).');
  }
  if (config.replicationUrl === null) return;
  const missing = [
    config.nodeName === '' ? 'NODE_NAME' : null,
    config.adminToken === null ? 'ADMIN_TOKEN' : null,
    config.webhooksSecretKey === null ? 'WEBHOOKS_SECRET_KEY' : null,
    config.orderIdKey === null ? 'ORDER_ID_KEY' : null,
  ].filter((name) => name !== null);
  if (missing.length > 0) {
    throw new Error(`With REPLICATION_URL set, also set ${missing.join(', ')}: every node of a group uses the same keys, given explicitly (docs/deployment.md).`);
  }
  if (env['WAL_SYNC_MODE'] !== undefined && env['WAL_SYNC_MODE'] !== '') {
    throw new Error('WAL_SYNC_MODE does not apply with REPLICATION_URL set: a change is durable once committed in PostgreSQL; unset it.');
  }
}

/**
 * A production server never seeds: the demo account's key and secret would
 * open a funded wallet on a real server, and its first start would print
 * them into the service manager's journal. With NODE_ENV=production the
 * default is false, and an explicit true is refused rather than ignored.
 */
function seedDemoFor(env: NodeJS.ProcessEnv, seedDemo: boolean, explicit: boolean): boolean {
  if (env['NODE_ENV'] !== 'production') return seedDemo;
  if (explicit && seedDemo) {
    throw new Error('SEED_DEMO (--seed-demo) cannot be true with NODE_ENV=production: a production server never seeds the demo account, whose key and secret would open a funded wallet.');
  }
  return false;
}
