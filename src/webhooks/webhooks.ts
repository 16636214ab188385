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
import { loadSecretKey } from './secret-box.js';
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
}

export class Webhooks {
  readonly directory: WebhookDirectory;
  readonly outbox: Outbox;
  readonly dispatcher: Dispatcher;
  readonly rules: EndpointRules;
  private readonly sender: Sender | null;

  constructor(
    store: Store,
    wal: Wal,
    private readonly clock: Clock,
    dataDir: string,
    config: WebhooksConfig,
    options: { random?: () => number; poster?: Poster; yieldWhenBusy?: boolean; windowMax?: number; onError: (error: unknown, what: string) => void },
  ) {
    this.rules = { allowHttp: config.allowHttp, allowPrivate: config.allowPrivate };
    this.directory = new WebhookDirectory(store, wal, clock, loadSecretKey(dataDir, config.secretKey), config.perAccount);
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
