/**
 * All accounts: their profiles (name, API key, secret hash) and their wallet
 * actors, found by id or by API key. Loaded from the tables at start-up;
 * new accounts are added once their creation is durable.
 */
import type { Clock } from '../clock.js';
import { hashSecret, newApiKey, newApiSecret } from '../ids.js';
import type { AccountProfile, Store, Wal, WalletRecord } from '../wal/index.js';
import { checkWallet } from '../wal/index.js';
import { WalletActor, type ActorContext } from './wallet-actor.js';
import { timingSafeEqual } from 'node:crypto';

export interface Account {
  profile: AccountProfile;
  secretHash: Buffer;
  actor: WalletActor;
}

/** Compared against when the key is unknown, so both failures cost the same. */
const DECOY_HASH = hashSecret('decoy');

export class Registry {
  private readonly byId = new Map<number, Account>();
  private readonly byKey = new Map<string, Account>();
  private nextId = 1;

  constructor(
    private readonly store: Store,
    private readonly wal: Wal,
    private readonly clock: Clock,
    private readonly actorContext: ActorContext,
    private readonly defaultRateLimitPerMinute: number,
  ) {
    for (const { key, value } of store.tables.profiles.getRange()) {
      const profile = value as AccountProfile;
      const wallet = store.tables.wallets.get(key) as WalletRecord | undefined;
      if (wallet === undefined) throw new Error(`invariant: account ${String(key)} has a profile but no wallet`);
      this.add(profile, wallet);
    }
  }

  get size(): number {
    return this.byId.size;
  }

  get(id: number): Account | undefined {
    return this.byId.get(id);
  }

  all(): IterableIterator<Account> {
    return this.byId.values();
  }

  /**
   * The account for this key and secret, or null. An unknown key and a
   * wrong secret run the same comparison and give the same answer.
   */
  authenticate(apiKey: string, apiSecret: string): Account | null {
    const account = this.byKey.get(apiKey);
    const presented = hashSecret(apiSecret);
    const matches = timingSafeEqual(presented, account?.secretHash ?? DECOY_HASH);
    return account !== undefined && matches ? account : null;
  }

  async create(name: string): Promise<{ account: Account; apiSecret: string }> {
    const id = this.nextId++;
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
    await this.wal.append({
      events: [
        { type: 'account.created', atMs: profile.createdAtMs, account: id, name, credits: 0, rateLimitPerMinute: wallet.rateLimitPerMinute },
      ],
      puts: [
        { table: 'profiles', key: id, value: profile },
        { table: 'wallets', key: id, value: wallet },
        { table: 'keys', key: profile.apiKey, value: id },
      ],
    });
    return { account: this.add(profile, wallet), apiSecret };
  }

  /** Replaces the secret; the key stays. The old secret stops working once the change is durable. */
  async rotateSecret(account: Account): Promise<string> {
    const apiSecret = newApiSecret();
    const hash = hashSecret(apiSecret);
    const profile: AccountProfile = { ...account.profile, secretHash: hash.toString('hex') };
    await this.wal.append({
      events: [{ type: 'secret.rotated', atMs: this.clock.wallMs(), account: profile.id }],
      puts: [{ table: 'profiles', key: profile.id, value: profile }],
    });
    account.profile = profile;
    account.secretHash = hash;
    return apiSecret;
  }

  /** The operator's force-join settings for an account, logged as an event. */
  async updateForceJoin(
    account: Account,
    settings: { telegramUserId: number | null; verified: boolean; exempt: boolean; reason?: string },
  ): Promise<void> {
    const profile: AccountProfile = {
      ...account.profile,
      telegramUserId: settings.telegramUserId,
      forceJoinVerified: settings.verified,
      forceJoinExempt: settings.exempt,
    };
    await this.wal.append({
      events: [{ type: 'forcejoin.updated', atMs: this.clock.wallMs(), account: profile.id, ...settings }],
      puts: [{ table: 'profiles', key: profile.id, value: profile }],
    });
    account.profile = profile;
  }

  private add(profile: AccountProfile, wallet: WalletRecord): Account {
    const account: Account = {
      profile,
      secretHash: Buffer.from(profile.secretHash, 'hex'),
      actor: WalletActor.fresh(wallet, this.actorContext),
    };
    this.byId.set(profile.id, account);
    this.byKey.set(profile.apiKey, account);
    if (profile.id >= this.nextId) this.nextId = profile.id + 1;
    return account;
  }
}
