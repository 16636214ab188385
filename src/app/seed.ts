/**
 * First start on an empty data directory: a few services and a demo
 * account with credits, so that a new user can place an order at once.
 * Everything goes through the same WAL as any operator action.
 */
import type { AppContext } from '../http/index.js';
import { parseMicro } from '../money/index.js';
import { withServiceDefaults, type ServiceRecord } from '../ledger/index.js';

export interface SeedResult {
  accountId: number;
  apiKey: string;
  apiSecret: string;
  /** The demo account's API v2 key (shown once, like the secret). */
  v2Key: string;
  services: ServiceRecord[];
}

/**
 * What the README's examples order: service 1 takes drip-feed, cancel and
 * refill (so every lifecycle example runs against a fresh start), 2 and 3
 * are plain, 4 takes custom comments.
 */
const DEMO_SERVICES = [
  { platform: 'instagram', name: 'Instagram Followers', rate: '0.5', min: 10, max: 100_000, category: 'Instagram Followers', cancel: true, refill: true, dripfeed: true }, // not a limit: a demo service's range
  { platform: 'youtube', name: 'YouTube Views', rate: '0.1', min: 100, max: 1_000_000, category: 'YouTube Views' }, // not a limit: a demo service's range
  { platform: 'telegram', name: 'Telegram Channel Members', rate: '1.2', min: 10, max: 50_000, category: 'Telegram Members' }, // not a limit: a demo service's range
  { platform: 'instagram', name: 'Instagram Custom Comments', rate: '0.5', min: 1, max: 1_000, category: 'Instagram Comments', type: 'Custom Comments' as const }, // not a limit: a demo service's range
];

export const DEMO_CREDITS = '1000';

/**
 * Seeds only a data directory where nothing has ever happened: its log holds
 * no event (every account, service and setting is an event), so an
 * operator's data, even one service or one account, is never mixed with a
 * demo account. Null when the directory is not empty.
 */
export async function seedIfEmpty(ctx: AppContext): Promise<SeedResult | null> {
  if (!storeIsEmpty(ctx)) return null;
  const services: ServiceRecord[] = [];
  for (const s of DEMO_SERVICES) {
    const saved = await ctx.catalog.save<never>(null, (_current, id) => withServiceDefaults({ id, ...s, rate: parseMicro(s.rate)!, enabled: true }));
    services.push(saved as ServiceRecord);
  }
  const { account, apiSecret } = await ctx.registry.create('Demo reseller');
  const delivery = account.actor.send({ kind: 'credit', amount: parseMicro(DEMO_CREDITS)!, reason: 'demo account seed' });
  await delivery?.durable;
  // A v2 key too, so that a reseller tool speaking API v2 works at once.
  const v2Key = await ctx.registry.issueV2Key(account);
  return { accountId: account.profile.id, apiKey: account.profile.apiKey, apiSecret, v2Key, services };
}

function storeIsEmpty(ctx: AppContext): boolean {
  for (const _key of ctx.store.log.getKeys({ limit: 1 })) return false;
  return ctx.registry.size === 0 && ctx.catalog.all().length === 0;
}
