/**
 * Webhooks assembled: the endpoint directory, the outbox the wallet actors
 * write into, the sender with its limits and the dispatcher that delivers.
 * The composition root builds one and hands `outbox.withMessages` to the actors.
 */
import { MS_PER_HOUR, type Clock } from '../platform/index.js';
import type { Store, Wal } from '../wal/index.js';
import type { Poster } from './attempts.js';
import { Dispatcher } from './dispatcher.js';
import { WebhookDirectory } from './directory.js';
import type { EndpointRules } from './endpoint-input.js';
import { Outbox } from './outbox.js';
import { checkSealingKey, SEALING_KEY_ID_KEY, type SealingCheck } from './sealing-check.js';
import { Sender } from './sender.js';
import type { WebhookEndpoint } from './records.js';
import { OUTBOX_PAGE_ROWS, PER_ENDPOINT_IN_FLIGHT_MAX, QUEUE_WINDOW_MAX } from './limits.js';

export interface WebhooksConfig {
  allowHttp: boolean;
  allowPrivate: boolean;
  /** WEBHOOKS_SECRET_KEY (base64 of 32 bytes), or null for DATA_DIR/webhook-secrets.key. */
  secretKey: string | null;
  retryHours: number;
  concurrency: number;
  timeoutMs: number;
  connectTimeoutMs: number;
  perAccount: number;
  logKeep: number;
  /** WEBHOOKS_BUSY_PERCENT: while the order path has no spare capacity, deliveries' share (at least) of its committed entries. */
  busyPercent: number;
  /** WEBHOOKS_BUSY_MIN_PER_SECOND: while the order path has no spare capacity, deliveries started a second at least. */
  busyMinPerSecond: number;
  /** WEBHOOKS_HELD_MAX: most undelivered messages kept per endpoint. */
  heldMax: number;
  /** WEBHOOKS_ROTATE_SECRETS: reseal the endpoints whose secrets the key cannot open, instead of refusing to start. */
  rotateSecrets: boolean;
}

export class Webhooks {
  readonly directory: WebhookDirectory;
  readonly outbox: Outbox;
  readonly dispatcher: Dispatcher;
  readonly rules: EndpointRules;
  private readonly sender: Sender | null;
  private readonly sealing: SealingCheck;

  constructor(
    private readonly store: Store,
    private readonly wal: Wal,
    private readonly clock: Clock,
    dataDir: string,
    config: WebhooksConfig,
    options: { random?: () => number; poster?: Poster; yieldWhenBusy?: boolean; windowMax?: number; onError: (error: unknown, what: string) => void },
  ) {
    this.rules = { allowHttp: config.allowHttp, allowPrivate: config.allowPrivate };
    this.sealing = checkSealingKey(store, dataDir, config.secretKey, config.rotateSecrets);
    this.directory = new WebhookDirectory(store, wal, clock, this.sealing.sealing.key, config.perAccount);
    this.sender =
      options.poster === undefined
        ? new Sender({ allowPrivate: config.allowPrivate, connectTimeoutMs: config.connectTimeoutMs, timeoutMs: config.timeoutMs, socketsMax: config.concurrency })
        : null;
    this.dispatcher = new Dispatcher(store, wal, clock, this.directory, options.poster ?? this.sender!, {
      concurrency: config.concurrency,
      perEndpointMax: PER_ENDPOINT_IN_FLIGHT_MAX,
      retryMs: config.retryHours * MS_PER_HOUR,
      logKeep: config.logKeep,
      busyShare: config.busyPercent / 100,
      busyMinPerSecond: config.busyMinPerSecond,
      pageSize: OUTBOX_PAGE_ROWS,
      windowMax: options.windowMax ?? QUEUE_WINDOW_MAX,
      heldMax: config.heldMax,
      random: options.random ?? Math.random,
      yieldWhenBusy: options.yieldWhenBusy ?? true,
      onError: options.onError,
    });
    this.outbox = new Outbox(this.directory, (messages) => this.dispatcher.written(messages));
  }

  /**
   * Before serving: reseals the endpoints the start-up check found
   * unreadable (only with WEBHOOKS_ROTATE_SECRETS) and records the id of the
   * key every stored secret is now sealed with. Returns the resealed ones.
   */
  async adoptSealingKey(): Promise<WebhookEndpoint[]> {
    const resealed: WebhookEndpoint[] = [];
    for (const endpoint of this.sealing.unreadable) {
      resealed.push(await this.directory.reseal(endpoint, `secret sealed with a key this server does not have; rotated at start (WEBHOOKS_ROTATE_SECRETS)`));
    }
    const { id } = this.sealing.sealing;
    if (this.store.tables.meta.get(SEALING_KEY_ID_KEY) !== id) await this.wal.append({ events: [], puts: [{ table: 'meta', key: SEALING_KEY_ID_KEY, value: id }] });
    return resealed;
  }

  /** Turns an endpoint on or off; turning it on sends what it holds. */
  async setEnabled(endpoint: WebhookEndpoint, enabled: boolean): Promise<WebhookEndpoint> {
    const next = await this.directory.setEnabled(endpoint, enabled);
    if (enabled) this.dispatcher.wake(next.id);
    return next;
  }

  /** Deletes an endpoint; the dispatcher then drops what it held (a failing or disabled one too) and its delivery log, a page per commit. */
  async remove(endpoint: WebhookEndpoint): Promise<void> {
    await this.directory.remove(endpoint);
    this.dispatcher.wake(endpoint.id);
  }

  /** The operator's replay: clears the failing mark and retries the held messages at once, oldest first. */
  async replay(endpoint: WebhookEndpoint): Promise<WebhookEndpoint> {
    const next = await this.directory.clearFailing(endpoint);
    this.dispatcher.wake(next.id);
    return next;
  }

  /** What /metrics shows of webhooks. */
  gauges(): { deliveries: Record<string, number>; held: number; inFlight: number; oldestHeldAgeMs: number; failingEndpoints: number; dropped: number; allowedPerSecond: number } {
    const { deliveries, inFlight, dropped, allowedPerSecond } = this.dispatcher.stats();
    const { held, oldestAtMs } = this.dispatcher.backlog();
    const failingEndpoints = this.directory.failingCount();
    return { deliveries, held, inFlight, oldestHeldAgeMs: oldestAtMs === null ? 0 : Math.max(0, this.clock.wallMs() - oldestAtMs), failingEndpoints, dropped, allowedPerSecond };
  }

  start(pollMs: number): void {
    this.dispatcher.start(pollMs);
  }

  /** Attempts in flight are cut off (they count as failed and are sent again after the restart, same id), then their results are committed. */
  async stop(): Promise<void> {
    const stopping = this.dispatcher.stop();
    this.sender?.close();
    await stopping;
  }
}
