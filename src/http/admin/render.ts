/**
 * Services, accounts and orders as the operator sees them in the admin API,
 * as JSON text with money as exact decimals.
 */
import { formatMicro } from '../../money/index.js';
import { isUnlimited, remainsShown, type AccountProfile, type OrderRecord, type ServiceRecord, type WalletRecord } from '../../ledger/index.js';
import { renderPublicService } from '../../wire/index.js';

/** The order's type and the inputs it took, as the processing queue shows them. */
export function renderOrderInputs(order: Pick<OrderRecord, 'type' | 'extras'>): string {
  const e = order.extras;
  return (
    `"type":${JSON.stringify(order.type ?? 'Default')},"comments":${JSON.stringify(e?.comments ?? null)},` +
    `"usernames":${JSON.stringify(e?.usernames ?? null)},"answer_number":${e?.answerNumber ?? null},` +
    `"runs":${e?.runs ?? null},"interval":${e?.interval ?? null},"username":${JSON.stringify(e?.username ?? null)},` +
    `"hashtags":${JSON.stringify(e?.hashtags ?? null)},"hashtag":${JSON.stringify(e?.hashtag ?? null)},"media":${JSON.stringify(e?.media ?? null)},` +
    `"keywords":${JSON.stringify(e?.keywords ?? null)},"groups":${JSON.stringify(e?.groups ?? null)}`
  );
}

/** A service as the operator sees it, with its `average_time` (seconds, or null) as customers see it. */
export function renderAdminService(s: ServiceRecord, averageTimeS: number | null): string {
  return renderPublicService(s, averageTimeS).slice(0, -1) + `,"enabled":${s.enabled}}`;
}

/** An account as the admin API shows it: the loaded actor's wallet (see renderAccountView). */
export function renderAccount(account: { profile: AccountProfile; actor: { state: { wallet: WalletRecord } } }, wallMs: number): string {
  return renderAccountView(account.profile, account.actor.state.wallet, wallMs);
}

export function renderAccountView(profile: AccountProfile, w: WalletRecord, wallMs: number): string {
  const active = isUnlimited(w, wallMs);
  return (
    `{"id":${w.id},"name":${JSON.stringify(profile.name)},"credits":${formatMicro(w.credits)},` +
    `"banned":${w.banned},"rate_limit_per_minute":${w.rateLimitPerMinute},"unlimited":${active},` +
    `"unlimited_expires":${w.unlimitedExpiresMs === null ? 'null' : `"${new Date(w.unlimitedExpiresMs).toISOString()}"`},` +
    `"telegram_user_id":${profile.telegramUserId ?? null},"forcejoin_verified":${profile.forceJoinVerified ?? false},` +
    `"forcejoin_exempt":${profile.forceJoinExempt ?? false},` +
    `"created_at":"${new Date(profile.createdAtMs).toISOString()}"}`
  );
}

/** An order as the admin API shows it: with its number, rate, debit, channel, plan flag and processing fields (its worker, and its lease's end while claimed). */
export function renderAdminOrder(o: OrderRecord): string {
  return (
    `{"id":"${o.id}","number":${o.number ?? null},"account":${o.account},"service":${o.service},"target":${JSON.stringify(o.target)},` +
    `"quantity":${o.quantity},"rate":${formatMicro(o.rate)},"charge":${formatMicro(o.charge)},"debit":${formatMicro(o.debit)},` +
    `"status":"${o.status}","remains":${o.remains ?? null},"channel":"${o.channel}","unlimited":${o.unlimited},` +
    `"created_at":"${new Date(o.createdAtMs).toISOString()}",${renderOrderInputs(o)},` +
    `"start_count":${o.startCount ?? null},"progress_remains":${o.progressRemains ?? null},"remains_shown":${remainsShown(o)},"cancel_requested":${o.cancelRequested === true},` +
    `"worker":${JSON.stringify(o.worker ?? null)},"lease_expires_at":${o.leaseExpiresMs === undefined ? null : `"${new Date(o.leaseExpiresMs).toISOString()}"`},"refill":${o.refill === undefined ? null : `{"id":${o.refill.id},"status":"${o.refill.status}"}`}}`
  );
}
