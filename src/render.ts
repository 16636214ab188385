/**
 * Response bodies, built as strings so that money is written as exact
 * decimals (never through a binary float) and no generic serialiser runs on
 * the hot path. Strings from users go through JSON.stringify.
 */
import { formatMicro } from './money/index.js';
import type { DeliveryAttempt, WebhookEndpoint } from './webhooks/index.js';
import { isUnlimited, remainsShown, statusView, type AccountProfile, type OrderRecord, type OrderStatusView, type RefillRecord, type ServiceRecord, type WalletRecord } from './ledger/index.js';

export function renderOrderPlaced(order: Pick<OrderRecord, 'id' | 'number' | 'charge'>, balanceMicro: number): string {
  return `{"ok":true,"order":"${order.id}","number":${order.number ?? null},"charge":${formatMicro(order.charge)},"status":"pending","balance":${formatMicro(balanceMicro)}}`;
}

export function renderBalance(creditsMicro: number, unlimitedExpiresMs: number | null): string {
  const expires = unlimitedExpiresMs === null ? 'null' : `"${new Date(unlimitedExpiresMs).toISOString()}"`;
  return `{"ok":true,"credits":${formatMicro(creditsMicro)},"unlimited":${unlimitedExpiresMs !== null},"unlimited_expires":${expires}}`;
}

export function renderStatus(order: OrderRecord): string {
  return `{"ok":true,${renderStatusFields(order)}}`;
}

/**
 * An order's status fields, as GET /status shows one order and the batch
 * form shows each: start_count (null until the operator records it) and
 * remains (see remainsShown) for every order, runs and interval when drip-fed.
 */
export function renderStatusFields(order: OrderRecord): string {
  return renderStatusView(statusView(order));
}

/** The same fields from a stored view (a webhook message's, taken at the change). */
export function renderStatusView(view: OrderStatusView): string {
  return (
    `"order":"${view.id}","number":${view.number},"status":"${view.status}","quantity":${view.quantity},"charge":${formatMicro(view.charge)},` +
    `"start_count":${view.startCount},"remains":${view.remains}` +
    (view.runs === undefined ? '' : `,"runs":${view.runs},"interval":${view.interval!}`)
  );
}

/** A per-order (or per-refill) refusal inside a batch answer. */
export function renderItemError(error: { code: string; message: string }): string {
  return `{"error":"${error.code}","message":${JSON.stringify(error.message)}}`;
}

/** `{"ok":true,"<field>":{"<id>":<item>,…}}`: a batch answer keyed by the ids asked for. */
export function renderBatch(field: string, items: Iterable<[string | number, string]>): string {
  const parts: string[] = [];
  for (const [id, item] of items) parts.push(`${JSON.stringify(String(id))}:${item}`);
  return `{"ok":true,"${field}":{${parts.join(',')}}}`;
}

export function renderRefill(refill: RefillRecord): string {
  return (
    `{"refill":${refill.id},"order":"${refill.order}","status":"${refill.status}",` +
    `"created_at":"${new Date(refill.createdAtMs).toISOString()}","updated_at":"${new Date(refill.updatedAtMs).toISOString()}"` +
    (refill.reason === undefined ? '' : `,"reason":${JSON.stringify(refill.reason)}`) +
    '}'
  );
}

/** The order's type and the inputs it took, as the processing queue shows them. */
export function renderOrderInputs(order: Pick<OrderRecord, 'type' | 'extras'>): string {
  const e = order.extras;
  return (
    `"type":${JSON.stringify(order.type ?? 'Default')},"comments":${JSON.stringify(e?.comments ?? null)},` +
    `"usernames":${JSON.stringify(e?.usernames ?? null)},"answer_number":${e?.answerNumber ?? null},` +
    `"runs":${e?.runs ?? null},"interval":${e?.interval ?? null}`
  );
}

/** A service as customers see it (no `enabled`: they only ever see enabled ones). */
export function renderPublicService(s: ServiceRecord): string {
  return (
    `{"id":${s.id},"platform":${JSON.stringify(s.platform)},"name":${JSON.stringify(s.name)},"rate":${formatMicro(s.rate)},"min":${s.min},"max":${s.max},` +
    `"category":${JSON.stringify(s.category)},"type":${JSON.stringify(s.type)},"refill":${s.refill},"refill_days":${s.refillDays},` +
    `"cancel":${s.cancel},"dripfeed":${s.dripfeed},"description":${JSON.stringify(s.description)}}`
  );
}

/** A service as the operator sees it. */
export function renderAdminService(s: ServiceRecord): string {
  return renderPublicService(s).slice(0, -1) + `,"enabled":${s.enabled}}`;
}

export function renderServiceList(services: Iterable<ServiceRecord>): string {
  const parts: string[] = [];
  for (const s of services) if (s.enabled) parts.push(renderPublicService(s));
  return `{"ok":true,"services":[${parts.join(',')}]}`;
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


/** An order as the admin API shows it: with its number, rate, debit, channel, plan flag and processing fields. */
export function renderAdminOrder(o: OrderRecord): string {
  return (
    `{"id":"${o.id}","number":${o.number ?? null},"account":${o.account},"service":${o.service},"target":${JSON.stringify(o.target)},` +
    `"quantity":${o.quantity},"rate":${formatMicro(o.rate)},"charge":${formatMicro(o.charge)},"debit":${formatMicro(o.debit)},` +
    `"status":"${o.status}","remains":${o.remains ?? null},"channel":"${o.channel}","unlimited":${o.unlimited},` +
    `"created_at":"${new Date(o.createdAtMs).toISOString()}",${renderOrderInputs(o)},` +
    `"start_count":${o.startCount ?? null},"progress_remains":${o.progressRemains ?? null},"remains_shown":${remainsShown(o)},"cancel_requested":${o.cancelRequested === true},` +
    `"worker":${JSON.stringify(o.worker ?? null)},"refill":${o.refill === undefined ? null : `{"id":${o.refill.id},"status":"${o.refill.status}"}`}}`
  );
}

/**
 * A webhook endpoint as its owner sees it; `secret` only in the answer that
 * created or rotated it (the one time it is shown), `account` in the
 * operator's views.
 */
export function renderWebhook(e: WebhookEndpoint, extra: { secret?: string; account?: boolean } = {}): string {
  return (
    `{"id":${e.id},` +
    (extra.account === true ? `"account":${e.account},` : '') +
    `"url":${JSON.stringify(e.url)},"events":${JSON.stringify(e.events)},"enabled":${e.enabled},` +
    `"failing":${e.failingSinceMs !== null},"failing_since":${e.failingSinceMs === null ? 'null' : `"${new Date(e.failingSinceMs).toISOString()}"`},` +
    `"created_at":"${new Date(e.createdAtMs).toISOString()}"` +
    (extra.secret === undefined ? '' : `,"secret":${JSON.stringify(extra.secret)}`) +
    '}'
  );
}

/** One attempt in an endpoint's delivery log. */
export function renderDeliveryAttempt(a: DeliveryAttempt): string {
  return (
    `{"at":"${new Date(a.atMs).toISOString()}","message":"${a.message}","type":"${a.type}","order":${JSON.stringify(a.subject)},` +
    `"attempt":${a.attempt},"outcome":"${a.outcome}","status":${a.status ?? null},"error":${a.error === null ? 'null' : JSON.stringify(a.error)},"duration_ms":${a.durationMs}}`
  );
}
