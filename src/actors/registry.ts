/**
 * All accounts, found by id or by API key. Accounts live in LMDB; an
 * account's profile and wallet actor are loaded into memory on first use
 * and dropped again after a long idle spell, so memory and start-up time do
 * not grow with the number of accounts, only with the number in use.
 *
 * Dropping is safe because a wallet's row is written in the same commit as
 * each of its events: an actor with nothing in flight holds exactly the
 * durable row. Its token bucket is forgotten too, which changes nothing
 * after an idle spell longer than a minute (the bucket is full again).
 */
import { timingSafeEqual } from 'node:crypto';
import { assert, type Clock } from '../platform/index.js';
import { hashSecret, newApiKey, newApiSecret, newV2Key } from '../ids/index.js';
import { type Store, STRUCTURES_KEY, type TablePut, type Wal, type WalEntry } from '../wal/index.js';
import { type AccountProfile, checkWallet, type LogEvent, type WalletRecord } from '../ledger/index.js';
import { WalletActor, type ActorContext } from './wallet-actor.js';
import { ACCOUNT_IDLE_EVICT_MS, ACCOUNT_LIST_MAX, API_KEY_CHARS_MAX, VERIFIED_SECRETS_MAX } from './limits.js';
import { sameText, VerifiedSecrets } from './verified-secrets.js';

export interface Account {
  profile: AccountProfile;
  secretHash: Buffer;
  /** Hash of the API v2 key, or null when none is issued. */
  v2KeyHash: Buffer | null;
  actor: WalletActor;
  /** Monotonic time of the last look-up, for idle eviction. */
  usedMs: number;
  /** The last profile change in flight (see changeProfile), which the next one waits for. */
  profileWrites: Promise<void>;
  /** Profile changes queued or in flight: the account is not dropped meanwhile (their results land on this object). */
  profileChanges: number;
}

/** What a listing shows of an account, loaded or not. */
export interface AccountView {
  profile: AccountProfile;
  wallet: WalletRecord;
}

/** Compared against when the key is unknown, so both failures cost the same. */
const DECOY_HASH = hashSecret('decoy');
/** Compared against when the key has no verified secret, so a request costs the same comparison either way (an issued secret's length). */
const DECOY_SECRET = 'sec_' + 'd'.repeat(43);

/**
 * Rows in a record table, read from LMDB's statistics: counting by iterating
 * would map the whole file into memory at start-up. The table's shared
 * msgpack structures take one entry of their own once written.
 */
function countEntries(table: Store['tables']['profiles']): number {
  const entries = (table.getStats() as { entryCount: number }).entryCount;
  return table.getBinary(STRUCTURES_KEY) === undefined ? entries : entries - 1;
}

export class Registry {
  private readonly active = new Map<number, Account>();
  private readonly activeByKey = new Map<string, Account>();
  /** Loaded accounts by the hex hash of their API v2 key. */
  private readonly activeByV2Hash = new Map<string, Account>();
  private nextId = 1;
  private count: number;
  private timer: NodeJS.Timeout | null = null;
  /** API v1 secrets already verified, by key: their requests skip the hash. */
  private readonly verified: VerifiedSecrets<Account>;

  constructor(
    private readonly store: Store,
    private readonly wal: Wal,
    private readonly clock: Clock,
    private readonly actorContext: ActorContext,
    private readonly defaultRateLimitPerMinute: number,
    verifiedSecretsMax: number = VERIFIED_SECRETS_MAX,
  ) {
    this.verified = new VerifiedSecrets<Account>(verifiedSecretsMax);
    this.count = countEntries(store.tables.profiles);
    for (const key of store.tables.profiles.getKeys({ reverse: true, limit: 1 })) this.nextId = Number(key) + 1;
  }

  /** Number of accounts (loaded or not). */
  get size(): number {
    return this.count;
  }

  /** API keys whose verified secret is remembered now (at most the bound the registry was made with). */
  get verifiedKeys(): number {
    return this.verified.size;
  }

  /** Accounts loaded in memory now. */
  loaded(): IterableIterator<Account> {
    return this.active.values();
  }

  get(id: number): Account | undefined {
    const cached = this.active.get(id);
    if (cached !== undefined) {
      cached.usedMs = this.clock.monotonicMs();
      return cached;
    }
    if (!Number.isSafeInteger(id)) return undefined;
    const profile = this.store.tables.profiles.get(id) as AccountProfile | undefined;
    if (profile === undefined) return undefined;
    const wallet = this.store.tables.wallets.get(id) as WalletRecord | undefined;
    assert(wallet !== undefined, 'an account with a profile has a wallet', id);
    return this.add(profile, wallet);
  }

  /**
   * Up to `limit` accounts from id `startId` on, in id order, for a listing
   * page: loaded ones as their actor holds them, the others straight from
   * the tables (without loading them). Bounded, so one listing never walks
   * every account in one turn of the event loop.
   */
  list(startId: number, limit: number): AccountView[] {
    assert(Number.isSafeInteger(startId), 'an account listing starts at a safe integer', startId);
    assert(Number.isSafeInteger(limit) && limit >= 1 && limit <= ACCOUNT_LIST_MAX, `an account listing takes 1 to ${ACCOUNT_LIST_MAX} accounts`, limit);
    const views: AccountView[] = [];
    for (const { key, value } of this.store.tables.profiles.getRange({ start: startId, limit })) {
      const id = key as number;
      const loaded = this.active.get(id);
      if (loaded !== undefined) views.push({ profile: loaded.profile, wallet: loaded.actor.state.wallet });
      else views.push({ profile: value as AccountProfile, wallet: this.store.tables.wallets.get(id) as WalletRecord });
    }
    return views;
  }

  /**
   * The account for this key and secret, or null. A secret this key
   * presented before and that passed is recognised by a constant-time
   * comparison with the remembered one, and served once the entry is
   * checked to be current: the account is the one loaded and its hash is
   * the one the secret was verified against (a rotation replaces it).
   * Every other request takes the full check below.
   */
  authenticate(apiKey: string, apiSecret: string): Account | null {
    const known = this.verified.find(apiKey);
    if (sameText(apiSecret, known?.secret ?? DECOY_SECRET) && known !== undefined) {
      const { account } = known;
      if (known.hash === account.secretHash && this.active.get(account.profile.id) === account) {
        account.usedMs = this.clock.monotonicMs();
        return account;
      }
      this.verified.forget(apiKey);
    }
    const account = this.verifySecret(apiKey, apiSecret);
    if (account !== null) this.verified.remember(account, apiSecret, account.secretHash);
    return account;
  }

  /**
   * The full check of a key and secret. Every failure takes the same path,
   * whether the key exists or not: the secret's hash, the key's row, a
   * profile (an unknown key reads the newest account's, so it pays the same
   * read and decoding) and one constant-time comparison. Only a success on
   * a loaded account skips the reads, and a success tells the client
   * nothing it did not know. An account is loaded only once its secret is
   * right.
   */
  private verifySecret(apiKey: string, apiSecret: string): Account | null {
    const presented = hashSecret(apiSecret);
    const loaded = this.activeByKey.get(apiKey);
    if (loaded !== undefined && timingSafeEqual(presented, loaded.secretHash)) {
      loaded.usedMs = this.clock.monotonicMs();
      return loaded;
    }
    // (A key longer than API_KEY_CHARS_MAX cannot exist, and LMDB refuses keys over 1,978 bytes.)
    const id = apiKey.length <= API_KEY_CHARS_MAX ? (this.store.tables.keys.get(apiKey) as number | undefined) : undefined;
    const profile = this.store.tables.profiles.get(id ?? this.nextId - 1) as AccountProfile | undefined;
    const stored = profile === undefined ? DECOY_HASH : Buffer.from(profile.secretHash, 'hex');
    // Compared in every case; an unknown key never matches, whatever it was compared with.
    const matches = timingSafeEqual(presented, stored);
    if (!matches || id === undefined) return null;
    return loaded ?? this.get(id) ?? null;
  }

  /**
   * The account for this API v2 key, or null. The key is found by its hash
   * (what is stored), then compared in constant time; an unknown, a revoked
   * and a wrong key all run the same comparison (against a decoy) and give
   * the same answer.
   */
  authenticateV2(key: string): Account | null {
    const presented = hashSecret(key);
    const hex = presented.toString('hex');
    let account = this.activeByV2Hash.get(hex);
    if (account === undefined) {
      const id = this.store.tables.v2keys.get(hex) as number | undefined;
      account = id === undefined ? undefined : this.get(id);
    } else {
      account.usedMs = this.clock.monotonicMs();
    }
    const matches = timingSafeEqual(presented, account?.v2KeyHash ?? DECOY_HASH);
    return account !== undefined && matches ? account : null;
  }

  /**
   * Issues the account's API v2 key, replacing (so revoking) any earlier
   * one. The new key works, and the old one stops, once the change is
   * durable; the key is returned once and never stored.
   */
  async issueV2Key(account: Account): Promise<string> {
    const key = newV2Key();
    await this.setV2Key(account, hashSecret(key), { type: 'v2key.issued', atMs: this.clock.wallMs(), account: account.profile.id });
    return key;
  }

  /** Revokes the account's API v2 key (logged even when none was issued). */
  async revokeV2Key(account: Account): Promise<void> {
    await this.setV2Key(account, null, { type: 'v2key.revoked', atMs: this.clock.wallMs(), account: account.profile.id });
  }

  private setV2Key(account: Account, hash: Buffer | null, event: Extract<LogEvent, { type: 'v2key.issued' | 'v2key.revoked' }>): Promise<void> {
    const hex = hash === null ? null : hash.toString('hex');
    let old: string | null = null;
    return this.changeProfile(
      account,
      (current) => {
        old = current.v2KeyHash ?? null;
        const profile: AccountProfile = { ...current, v2KeyHash: hex };
        const puts: TablePut[] = [{ table: 'profiles', key: profile.id, value: profile }];
        if (hex !== null) puts.push({ table: 'v2keys', key: hex, value: profile.id });
        return { profile, entry: { events: [event], puts, ...(old === null ? {} : { removes: [{ table: 'v2keys', key: old }] }) } };
      },
      () => {
        if (old !== null) this.activeByV2Hash.delete(old);
        account.v2KeyHash = hash;
        if (hex !== null) this.activeByV2Hash.set(hex, account);
      },
    );
  }

  /**
   * One account's profile changes (secret, v2 key, force-join), one at a
   * time. They do not pass through the wallet actor, and each writes the
   * whole profile row: two at once would each copy the profile before the
   * other landed, and the later commit would bring back what the earlier
   * replaced (a rotated secret's old hash, a revoked v2 key). Each change
   * builds on the profile the one before it left, once that one is durable.
   */
  private changeProfile(account: Account, change: (current: AccountProfile) => { profile: AccountProfile; entry: WalEntry }, applied?: () => void): Promise<void> {
    account.profileChanges++;
    const run = account.profileWrites
      .then(async () => {
        const { profile, entry } = change(account.profile);
        await this.wal.append(entry);
        account.profile = profile;
        applied?.();
      })
      .finally(() => {
        account.profileChanges--;
      });
    // A failed commit stops the process (fail-stop); the chain itself never rejects.
    account.profileWrites = run.catch(() => {});
    return run;
  }

  async create(name: string): Promise<{ account: Account; apiSecret: string }> {
    // The id is taken only once the row is checked and the WAL holds the entry (a broken invariant leaves
    // nextId as it was), and before the first await, so creations in flight together get different ids.
    const id = this.nextId;
    const apiSecret = newApiSecret();
    const profile: AccountProfile = {
      id,
      name,
      apiKey: newApiKey(),
      secretHash: hashSecret(apiSecret).toString('hex'),
      createdAtMs: this.clock.wallMs(),
    };
    const wallet: WalletRecord = checkWallet({
      id,
      credits: 0,
      banned: false,
      rateLimitPerMinute: this.defaultRateLimitPerMinute,
      unlimitedExpiresMs: null,
    });
    const durable = this.wal.append({
      events: [
        { type: 'account.created', atMs: profile.createdAtMs, account: id, name, credits: 0, rateLimitPerMinute: wallet.rateLimitPerMinute },
      ],
      puts: [
        { table: 'profiles', key: id, value: profile },
        { table: 'wallets', key: id, value: wallet },
        { table: 'keys', key: profile.apiKey, value: id },
      ],
    });
    this.nextId++;
    await durable;
    this.count++;
    return { account: this.add(profile, wallet), apiSecret };
  }

  /** Replaces the secret; the key stays. The old secret stops working once the change is durable. */
  async rotateSecret(account: Account): Promise<string> {
    const apiSecret = newApiSecret();
    const hash = hashSecret(apiSecret);
    await this.changeProfile(
      account,
      (current) => {
        const profile: AccountProfile = { ...current, secretHash: hash.toString('hex') };
        return { profile, entry: { events: [{ type: 'secret.rotated', atMs: this.clock.wallMs(), account: profile.id }], puts: [{ table: 'profiles', key: profile.id, value: profile }] } };
      },
      () => {
        account.secretHash = hash;
        this.verified.forget(account.profile.apiKey);
      },
    );
    return apiSecret;
  }

  /** The operator's force-join settings for an account, logged as an event; a field not given keeps its value. */
  updateForceJoin(account: Account, settings: { telegramUserId?: number | null; verified?: boolean; exempt?: boolean; reason?: string }): Promise<void> {
    return this.changeProfile(account, (current) => {
      const resolved = {
        telegramUserId: settings.telegramUserId === undefined ? (current.telegramUserId ?? null) : settings.telegramUserId,
        verified: settings.verified ?? current.forceJoinVerified ?? false,
        exempt: settings.exempt ?? current.forceJoinExempt ?? false,
        ...(settings.reason === undefined ? {} : { reason: settings.reason }),
      };
      const profile: AccountProfile = { ...current, telegramUserId: resolved.telegramUserId, forceJoinVerified: resolved.verified, forceJoinExempt: resolved.exempt };
      return { profile, entry: { events: [{ type: 'forcejoin.updated', atMs: this.clock.wallMs(), account: profile.id, ...resolved }], puts: [{ table: 'profiles', key: profile.id, value: profile }] } };
    });
  }

  /**
   * Whether the wallet of an Idempotency-Key record's table key
   * (`account:key`) holds a newer record for it that is not yet durable.
   * Only loaded accounts can: one with a commit in flight is never evicted.
   */
  idempotencyKeyPending(tableKey: string): boolean {
    const colon = tableKey.indexOf(':');
    const account = this.active.get(Number(tableKey.slice(0, colon)));
    return account !== undefined && account.actor.idempotencyKeyPending(tableKey.slice(colon + 1));
  }

  /** Drops accounts idle for longer than `idleMs` with nothing in flight. Returns how many. */
  evictIdle(idleMs: number = ACCOUNT_IDLE_EVICT_MS): number {
    const now = this.clock.monotonicMs();
    let evicted = 0;
    for (const [id, account] of this.active) {
      if (now - account.usedMs < idleMs || !account.actor.idle || account.profileChanges > 0) continue;
      this.active.delete(id);
      this.activeByKey.delete(account.profile.apiKey);
      this.verified.forget(account.profile.apiKey);
      if (account.profile.v2KeyHash) this.activeByV2Hash.delete(account.profile.v2KeyHash);
      evicted++;
    }
    return evicted;
  }

  startEviction(intervalMs: number): void {
    this.timer = setInterval(() => this.evictIdle(), intervalMs);
    // Eviction alone must not keep the process alive.
    this.timer.unref();
  }

  stopEviction(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private add(profile: AccountProfile, wallet: WalletRecord): Account {
    const account: Account = {
      profile,
      secretHash: Buffer.from(profile.secretHash, 'hex'),
      v2KeyHash: profile.v2KeyHash ? Buffer.from(profile.v2KeyHash, 'hex') : null,
      profileWrites: Promise.resolve(),
      profileChanges: 0,
      actor: WalletActor.fresh(wallet, this.actorContext),
      usedMs: this.clock.monotonicMs(),
    };
    this.active.set(profile.id, account);
    this.activeByKey.set(profile.apiKey, account);
    if (profile.v2KeyHash) this.activeByV2Hash.set(profile.v2KeyHash, account);
    if (profile.id >= this.nextId) this.nextId = profile.id + 1;
    return account;
  }
}
