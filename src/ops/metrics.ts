/**
 * The Prometheus registry (prom-client, text format 0.0.4): the HTTP and
 * group-commit histograms recorded as things happen, the figures other
 * parts keep (accounts, WAL, Idempotency-Key records, webhooks, orders)
 * read when /metrics is scraped, and prom-client's default process figures
 * (event-loop lag, heap, GC, CPU, file descriptors).
 *
 * Recording is on the request path, so it never looks a label combination
 * up by its labels: each route's duration child and each (route, status,
 * code) counter child is bound once, the first time it is seen, and kept in
 * maps; a request then costs three Map lookups and the children's own work.
 *
 * A figure read at scrape time is one row of SCRAPED (and, when it is new,
 * one field of MetricsGauges, filled by the admin endpoint): the row names
 * it, says what it is and reads it.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { logLinesDropped, MS_PER_SECOND } from '../platform/index.js';
import { BATCH_ENTRIES_MAX, RECORD_ENTRIES_MAX } from '../wal/index.js';
import { snapshotGauges } from './snapshot-gauges.js';
import type { SnapshotResult } from './snapshot-report.js';

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Seconds; from a cached reply (sub-millisecond) to a slow sync. */
export const HTTP_DURATION_BUCKETS: readonly number[] = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
/** Entries per group commit; powers of two up to the log-first record limit, then the group commit's batch limit. */
export const WAL_BATCH_BUCKETS: readonly number[] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, RECORD_ENTRIES_MAX, BATCH_ENTRIES_MAX];
/** Seconds per commit + fsync: an NVMe fsync takes ~100 µs, so start lower than HTTP. */
export const WAL_SYNC_BUCKETS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

export interface MetricsGauges {
  accounts: number;
  deepestMailbox: number;
  ordersByStatus: Record<string, number>;
  pendingWalEntries: number;
  /** Storage commits since start (each one sync; LMDB may put several batches in one). */
  walCommits: number;
  idempotencyRecords: number;
  idempotencyOldestAgeMs: number;
  webhooks: WebhookGauges;
  /** Replicated mode: 1 on the node that leads; 1/0 whether PostgreSQL has a synchronous standby streaming (-1: standalone or not known). */
  replication: { leading: number; synchronousStandby: number };
  /** The last snapshot's outcome (null or absent: none since start). */
  snapshot?: SnapshotResult | null;
}

export interface WebhookGauges {
  /** Attempts since start by outcome (delivered, failed, timeout, forbidden). */
  deliveries: Record<string, number>;
  /** Messages held in the outbox, not yet delivered. */
  held: number;
  inFlight: number;
  /** Age of the oldest held message, 0 when none. */
  oldestHeldAgeMs: number;
  failingEndpoints: number;
  /** Messages dropped since start because their endpoint held WEBHOOKS_HELD_MAX already. */
  dropped: number;
  /** Delivery attempts a second the order path leaves room for (src/webhooks/delivery-allowance.ts). */
  allowedPerSecond: number;
}

/**
 * A figure another part keeps, read at scrape time: a counter (a total since
 * start, kept by its part) or a gauge; `label` and a record for a figure by
 * one label, a number otherwise.
 */
type Scraped =
  | { name: string; type: 'counter' | 'gauge'; help: string; read: (g: MetricsGauges) => number }
  | { name: string; type: 'counter' | 'gauge'; help: string; label: string; readEach: (g: MetricsGauges) => Record<string, number> };

const SCRAPED: readonly Scraped[] = [
  ...snapshotGauges(null).map((sample, i): Scraped => ({ name: sample.name, type: 'gauge', help: sample.help, read: (g) => snapshotGauges(g.snapshot ?? null)[i]!.value })),
  { name: 'coa_replication_leader', type: 'gauge', help: 'Replicated mode: 1 on the node that leads its group and serves, else 0.', read: (g) => g.replication.leading },
  {
    name: 'coa_replication_synchronous_standby',
    type: 'gauge',
    help: "Replicated leader: 1 while PostgreSQL has a synchronous standby streaming (an acknowledged change is on two machines' disks), 0 when it has none, -1 standalone or not known.",
    read: (g) => g.replication.synchronousStandby,
  },
  { name: 'coa_wal_commits_total', type: 'counter', help: 'Storage commits (one fsync each) since start; LMDB may commit several batches together.', read: (g) => g.walCommits },
  { name: 'coa_wal_pending_entries', type: 'gauge', help: 'Entries appended and not yet durable.', read: (g) => g.pendingWalEntries },
  { name: 'coa_accounts', type: 'gauge', help: 'Accounts (wallet actors) known to the server.', read: (g) => g.accounts },
  { name: 'coa_mailbox_depth_max', type: 'gauge', help: 'Commands waiting in the deepest wallet mailbox.', read: (g) => g.deepestMailbox },
  { name: 'coa_idempotency_records', type: 'gauge', help: 'Idempotency-Key records stored (swept once past the retention).', read: (g) => g.idempotencyRecords },
  {
    name: 'coa_idempotency_oldest_age_seconds',
    type: 'gauge',
    help: 'Age of the oldest Idempotency-Key record; above the retention plus a minute, the sweep is behind.',
    read: (g) => g.idempotencyOldestAgeMs / MS_PER_SECOND,
  },
  {
    name: 'coa_webhook_deliveries_total',
    type: 'counter',
    help: 'Webhook delivery attempts since start, by outcome (delivered, failed, timeout, forbidden).',
    label: 'outcome',
    readEach: (g) => g.webhooks.deliveries,
  },
  { name: 'coa_webhook_queue_depth', type: 'gauge', help: 'Webhook messages held in the outbox, not yet delivered.', read: (g) => g.webhooks.held },
  { name: 'coa_webhook_in_flight', type: 'gauge', help: 'Webhook delivery attempts in flight.', read: (g) => g.webhooks.inFlight },
  {
    name: 'coa_webhook_oldest_undelivered_age_seconds',
    type: 'gauge',
    help: 'Age of the oldest webhook message not yet delivered (0 when none).',
    read: (g) => g.webhooks.oldestHeldAgeMs / MS_PER_SECOND,
  },
  {
    name: 'coa_webhook_attempts_allowed_per_second',
    type: 'gauge',
    help: 'Webhook delivery attempts a second the order path leaves room for: near the floor (WEBHOOKS_BUSY_PERCENT, WEBHOOKS_BUSY_MIN_PER_SECOND) while it is saturated; 100000 means no limit.',
    read: (g) => g.webhooks.allowedPerSecond,
  },
  { name: 'coa_webhook_failing_endpoints', type: 'gauge', help: 'Webhook endpoints marked failing (waiting for the operator to replay them).', read: (g) => g.webhooks.failingEndpoints },
  {
    name: 'coa_webhook_messages_dropped_total',
    type: 'counter',
    help: 'Webhook messages dropped since start because their endpoint already held WEBHOOKS_HELD_MAX undelivered ones (the endpoint is then marked failing).',
    read: (g) => g.webhooks.dropped,
  },
  { name: 'coa_orders', type: 'gauge', help: 'Orders by status.', label: 'status', readEach: (g) => g.ordersByStatus },
];

/** Sets a scraped figure to what its part reports; a counter is set by clearing it and adding its total. */
function setScraped(metric: Counter | Gauge, value: number, labels: Record<string, string> = {}): void {
  if (metric instanceof Gauge) metric.set(labels, value);
  else metric.inc(labels, value);
}

function registerScraped(figure: Scraped, registry: Registry, current: () => MetricsGauges): void {
  const labelNames = 'label' in figure ? [figure.label] : [];
  const collect = function (this: Counter | Gauge): void {
    const gauges = current();
    this.reset();
    if ('read' in figure) return setScraped(this, figure.read(gauges));
    for (const [value, count] of Object.entries(figure.readEach(gauges))) setScraped(this, count, { [figure.label]: value });
  };
  const config = { name: figure.name, help: figure.help, labelNames, registers: [registry], collect };
  if (figure.type === 'counter') new Counter(config);
  else new Gauge(config);
}

interface RouteSeries {
  duration: { observe(value: number): void };
  /** status → code ('' for none) → the counter's child. */
  byStatus: Map<number, Map<string, { inc(): void }>>;
}

export class Metrics {
  /** The registry /metrics renders; a part may register more figures on it (`registers: [metrics.registry]`). */
  readonly registry = new Registry();
  private readonly routes = new Map<string, RouteSeries>();
  private readonly requests: Counter<'route' | 'status' | 'code'>;
  private readonly durations: Histogram<'route'>;
  private readonly batchEntries: Histogram;
  private readonly syncSeconds: Histogram;
  /** The figures sampled for the scrape under way. */
  private scraped: MetricsGauges | null = null;

  /** Pre-creates the series of known routes, so they render (as zeros) before their first request. */
  constructor(options: { routes?: readonly string[] } = {}) {
    const registers = [this.registry];
    this.requests = new Counter({ name: 'coa_http_requests_total', help: 'HTTP requests answered, by route, status and error code ("" on success).', labelNames: ['route', 'status', 'code'], registers });
    this.durations = new Histogram({ name: 'coa_http_request_duration_seconds', help: 'Time from request to reply, by route.', labelNames: ['route'], buckets: [...HTTP_DURATION_BUCKETS], registers });
    this.batchEntries = new Histogram({
      name: 'coa_wal_batch_entries',
      help: 'Entries per group-commit batch (one event-loop turn; LMDB may commit several batches together).',
      buckets: [...WAL_BATCH_BUCKETS],
      registers,
    });
    this.syncSeconds = new Histogram({
      name: 'coa_wal_sync_seconds',
      help: 'Time from queueing a batch to LMDB until it is synced: its own commit and fsync, and any commit it waited behind.',
      buckets: [...WAL_SYNC_BUCKETS],
      registers,
    });
    for (const figure of SCRAPED) registerScraped(figure, this.registry, () => this.scraped!);
    new Counter({
      name: 'coa_log_lines_dropped_total',
      help: 'Log lines standard output dropped since start: LOG_BUFFER_BYTES_MAX were waiting while it refused bytes (a non-blocking pipe whose reader stalled), or it was gone.',
      registers,
      collect(this: Counter) {
        this.reset();
        this.inc(logLinesDropped());
      },
    });
    collectDefaultMetrics({ register: this.registry });
    for (const route of options.routes ?? []) this.route(route);
  }

  /** One finished HTTP request: `code` is the error code, or null on success. */
  countRequest(route: string, status: number, code: string | null, seconds: number): void {
    const series = this.routes.get(route) ?? this.route(route);
    let byCode = series.byStatus.get(status);
    if (byCode === undefined) {
      byCode = new Map();
      series.byStatus.set(status, byCode);
    }
    const key = code ?? '';
    let counter = byCode.get(key);
    if (counter === undefined) {
      counter = this.requests.labels(route, String(status), key);
      byCode.set(key, counter);
    }
    counter.inc();
    // A NaN or negative duration can only come from a caller bug; it is recorded as 0 rather than corrupt _sum.
    series.duration.observe(seconds >= 0 ? seconds : 0);
  }

  /** One group commit: how many entries it carried and how long commit + sync took. */
  observeBatch(entries: number, syncSeconds: number): void {
    this.batchEntries.observe(entries);
    this.syncSeconds.observe(syncSeconds >= 0 ? syncSeconds : 0);
  }

  /** The whole registry, with the figures sampled now, in the text exposition format. */
  async render(gauges: MetricsGauges): Promise<string> {
    this.scraped = gauges;
    try {
      return await this.registry.metrics();
    } finally {
      this.scraped = null;
    }
  }

  private route(route: string): RouteSeries {
    const series: RouteSeries = { duration: this.durations.labels(route), byStatus: new Map() };
    this.durations.zero({ route });
    this.routes.set(route, series);
    return series;
  }
}
