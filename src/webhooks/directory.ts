/**
 * Every webhook endpoint, held in memory (at most WEBHOOKS_PER_ACCOUNT per
 * account, and only accounts that register any have one) and in the
 * `webhooks` table. A change is written with its log event and answered
 * only once durable; the in-memory copy changes after that, so the wallet
 * actors start (or stop) writing messages for an endpoint exactly when its
 * registration is on disk.
 *
 * A change is applied in memory as it is appended (then awaited), not after
 * it is durable: so two concurrent changes of one endpoint build on each
 * other, and the per-account limit counts registrations in flight. That is
 * safe because the group commit writes entries in the order appended and
 * stops at the first failed commit: a message an actor writes for a new
 * endpoint can never be durable without the registration before it.
 * Answers still wait for durability.
 */
import { assert, type Clock } from '../platform/index.js';
import type { LogEvent } from '../ledger/index.js';
import type { Store, TablePut, Wal } from '../wal/index.js';
import { openSecret, sealSecret } from './secret-box.js';
import { newWebhookSecret } from './signature.js';
import type { WebhookEndpoint, WebhookEvent } from './records.js';
import { PREVIOUS_SECRET_GRACE_MS } from './limits.js';

const NEXT_ID_KEY = 'webhookNextId';

export class WebhookDirectory {
  private readonly byId = new Map<number, WebhookEndpoint>();
  /** Secrets in the clear, for signing, per endpoint version (held only in memory). */
  private readonly opened = new WeakMap<WebhookEndpoint, { current: string; previous: string | null }>();
  private readonly byAccount = new Map<number, WebhookEndpoint[]>();
  /** Endpoints marked failing, counted as they change, so that /metrics does not walk every endpoint. */
  private failing = 0;
  private nextId = 1;

  constructor(
    store: Store,
    private readonly wal: Wal,
    private readonly clock: Clock,
    private readonly sealingKey: Buffer,
    /** WEBHOOKS_PER_ACCOUNT. */
    readonly perAccountMax: number,
  ) {
    for (const { value } of store.tables.webhooks.getRange()) this.index(value as WebhookEndpoint);
    for (const key of store.tables.webhooks.getKeys({ reverse: true, limit: 1 })) this.nextId = Number(key) + 1;
    // Ids are never reused, not even the newest one's after it is deleted: held messages and logs are keyed by it.
    const stored = store.tables.meta.get(NEXT_ID_KEY) as number | undefined;
    if (stored !== undefined && stored > this.nextId) this.nextId = stored;
  }

  get(id: number): WebhookEndpoint | undefined {
    return this.byId.get(id);
  }

  /** The account's endpoints, oldest first (an empty list when none). */
  forAccount(account: number): readonly WebhookEndpoint[] {
    return this.byAccount.get(account) ?? [];
  }

  /** How many endpoints are marked failing. */
  failingCount(): number {
    return this.failing;
  }

  /** The secrets to sign with now: the current one, then the previous one while it is honoured. */
  signingSecrets(endpoint: WebhookEndpoint, nowMs: number): string[] {
    // Opened once per version of the endpoint (a change makes a new object), not once per message.
    let opened = this.opened.get(endpoint);
    if (opened === undefined) {
      opened = { current: openSecret(this.sealingKey, endpoint.secret), previous: endpoint.previous === null ? null : openPrevious(this.sealingKey, endpoint.previous.secret) };
      this.opened.set(endpoint, opened);
    }
    return opened.previous !== null && nowMs < endpoint.previous!.untilMs ? [opened.current, opened.previous] : [opened.current];
  }

  /** Registers an endpoint; the secret is returned here only. */
  async create(account: number, url: string, events: WebhookEvent[], enabled: boolean): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    assert(this.forAccount(account).length < this.perAccountMax, 'the caller checks the per-account limit first');
    const secret = newWebhookSecret();
    const endpoint: WebhookEndpoint = {
      id: this.nextId++,
      account,
      url,
      events,
      enabled,
      secret: sealSecret(this.sealingKey, secret),
      previous: null,
      createdAtMs: this.clock.wallMs(),
      failingSinceMs: null,
    };
    await this.save(endpoint, this.savedEvent(endpoint), [{ table: 'meta', key: NEXT_ID_KEY, value: this.nextId }]);
    return { endpoint, secret };
  }

  /** A new secret; the old one keeps signing beside it for PREVIOUS_SECRET_GRACE_MS. */
  async rotate(endpoint: WebhookEndpoint): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const secret = newWebhookSecret();
    const now = this.clock.wallMs();
    const next: WebhookEndpoint = { ...this.latest(endpoint), secret: sealSecret(this.sealingKey, secret), previous: { secret: this.latest(endpoint).secret, untilMs: now + PREVIOUS_SECRET_GRACE_MS } };
    await this.save(next, { type: 'webhook.secret_rotated', atMs: now, account: endpoint.account, webhook: endpoint.id });
    return { endpoint: next, secret };
  }

  /**
   * For an endpoint whose secret this server's key cannot open (its data was
   * restored without the key that sealed it): a new secret that no one has
   * seen, sealed with this key, the old one dropped, and the endpoint
   * disabled, so nothing is sent signed with a secret its receiver cannot
   * check. Its owner rotates the secret (which shows the new one) and
   * enables it again.
   */
  async reseal(endpoint: WebhookEndpoint, reason: string): Promise<WebhookEndpoint> {
    const now = this.clock.wallMs();
    const next: WebhookEndpoint = { ...this.latest(endpoint), secret: sealSecret(this.sealingKey, newWebhookSecret()), previous: null, enabled: false };
    const durable = this.wal.append({
      events: [{ type: 'webhook.secret_rotated', atMs: now, account: endpoint.account, webhook: endpoint.id }, this.savedEvent(next, reason)],
      puts: [{ table: 'webhooks', key: endpoint.id, value: next }],
    });
    this.index(next);
    await durable;
    return next;
  }

  async setEnabled(endpoint: WebhookEndpoint, enabled: boolean, reason?: string): Promise<WebhookEndpoint> {
    const next: WebhookEndpoint = { ...this.latest(endpoint), enabled };
    await this.save(next, this.savedEvent(next, reason));
    return next;
  }

  /** The operator's replay: the failing mark is cleared and delivery resumes from the oldest held message. */
  async clearFailing(endpoint: WebhookEndpoint, reason?: string): Promise<WebhookEndpoint> {
    const next: WebhookEndpoint = { ...this.latest(endpoint), failingSinceMs: null };
    await this.save(next, this.savedEvent(next, reason ?? 'replay'));
    return next;
  }

  async markFailing(endpoint: WebhookEndpoint, reason: string): Promise<WebhookEndpoint> {
    const now = this.clock.wallMs();
    const next: WebhookEndpoint = { ...this.latest(endpoint), failingSinceMs: now };
    await this.save(next, { type: 'webhook.failing', atMs: now, account: endpoint.account, webhook: endpoint.id, reason });
    return next;
  }

  /** Removes the endpoint; its held messages and delivery log are dropped by the dispatcher afterwards, in pages. */
  async remove(endpoint: WebhookEndpoint): Promise<void> {
    const durable = this.wal.append({
      events: [{ type: 'webhook.deleted', atMs: this.clock.wallMs(), account: endpoint.account, webhook: endpoint.id }],
      puts: [],
      removes: [{ table: 'webhooks', key: endpoint.id }],
    });
    this.count(this.byId.get(endpoint.id), -1);
    this.byId.delete(endpoint.id);
    const list = this.byAccount.get(endpoint.account)?.filter((e) => e.id !== endpoint.id) ?? [];
    if (list.length === 0) this.byAccount.delete(endpoint.account);
    else this.byAccount.set(endpoint.account, list);
    await durable;
  }

  /** The endpoint as last changed (a caller may hold an older copy). */
  private latest(endpoint: WebhookEndpoint): WebhookEndpoint {
    return this.byId.get(endpoint.id) ?? endpoint;
  }

  /** Counts a version of an endpoint in (1) or out (-1) of the failing ones. */
  private count(endpoint: WebhookEndpoint | undefined, sign: 1 | -1): void {
    if (endpoint !== undefined && endpoint.failingSinceMs !== null) this.failing += sign;
  }

  private savedEvent(e: WebhookEndpoint, reason?: string): LogEvent {
    return {
      type: 'webhook.saved',
      atMs: this.clock.wallMs(),
      account: e.account,
      webhook: e.id,
      url: e.url,
      events: [...e.events],
      enabled: e.enabled,
      ...(reason === undefined ? {} : { reason }),
    };
  }

  private async save(endpoint: WebhookEndpoint, event: LogEvent, more: TablePut[] = []): Promise<void> {
    const durable = this.wal.append({ events: [event], puts: [{ table: 'webhooks', key: endpoint.id, value: endpoint }, ...more] });
    this.index(endpoint);
    await durable;
  }

  private index(endpoint: WebhookEndpoint): void {
    this.count(this.byId.get(endpoint.id), -1);
    this.count(endpoint, 1);
    this.byId.set(endpoint.id, endpoint);
    const list = (this.byAccount.get(endpoint.account) ?? []).filter((e) => e.id !== endpoint.id);
    list.push(endpoint);
    list.sort((a, b) => a.id - b.id);
    this.byAccount.set(endpoint.account, list);
  }
}

/**
 * A rotated-out secret, or null when this server's key cannot open it (it was
 * sealed under a key since lost, which is why the operator rotated): the new
 * secret signs alone rather than no message being signed for a day.
 */
function openPrevious(key: Buffer, sealed: WebhookEndpoint['secret']): string | null {
  try {
    return openSecret(key, sealed);
  } catch {
    return null;
  }
}
