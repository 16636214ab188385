/**
 * A tiny Prometheus registry in the text exposition format (version 0.0.4),
 * with no dependency. Recording is on the request path, so it allocates
 * nothing once a label combination has been seen: label text is built once,
 * when a series is created, and a request costs three Map lookups, a counter
 * increment and a bucket scan. Rendering does the string work.
 */
import { MS_PER_SECOND } from '../platform/index.js';
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

/** Escapes a label value per the exposition format: backslash, quote, newline. */
function labelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** Escapes HELP text: backslash and newline. */
function helpText(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** Go-style float text: integers plainly, infinities as +Inf/-Inf. */
function num(value: number): string {
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  if (Number.isNaN(value)) return 'NaN';
  return String(value);
}

/** One histogram series: per-bucket (non-cumulative) counts, summed at render. */
class Histogram {
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(
    private readonly bounds: readonly number[],
    /** `a="x",b="y"` or '' — rendered once, when the series is created. */
    readonly labels: string,
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    // A NaN or negative duration can only come from a caller bug; record it
    // as 0 rather than corrupt _sum.
    const v = value >= 0 ? value : 0;
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && v > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += v;
    this.count++;
  }

  render(name: string, out: string[]): void {
    const prefix = this.labels === '' ? '' : `${this.labels},`;
    const suffix = this.labels === '' ? '' : `{${this.labels}}`;
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i]!;
      out.push(`${name}_bucket{${prefix}le="${num(this.bounds[i]!)}"} ${cumulative}`);
    }
    cumulative += this.counts[this.bounds.length]!;
    out.push(`${name}_bucket{${prefix}le="+Inf"} ${cumulative}`);
    out.push(`${name}_sum${suffix} ${num(this.sum)}`);
    out.push(`${name}_count${suffix} ${this.count}`);
  }
}

interface CounterCell {
  labels: string;
  value: number;
}

interface RouteSeries {
  duration: Histogram;
  /** status → code ('' for none) → counter. */
  byStatus: Map<number, Map<string, CounterCell>>;
  /** Creation order, so render output is stable. */
  cells: CounterCell[];
}

export interface MetricsGauges {
  accounts: number;
  deepestMailbox: number;
  ordersByStatus: Record<string, number>;
  pendingWalEntries: number;
  /** Storage commits since start (each one sync; LMDB may put several batches in one). */
  walCommits: number;
  idempotencyRecords: number;
  idempotencyOldestAgeMs: number;
  /** Webhook deliveries (absent: not rendered). */
  webhooks?: WebhookGauges;
  /** The last snapshot's outcome (absent: not rendered). */
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

function header(out: string[], name: string, type: 'counter' | 'gauge' | 'histogram', help: string): void {
  out.push(`# HELP ${name} ${helpText(help)}`, `# TYPE ${name} ${type}`);
}

function renderWebhooks(w: WebhookGauges, out: string[]): void {
  header(out, 'coa_webhook_deliveries_total', 'counter', 'Webhook delivery attempts since start, by outcome (delivered, failed, timeout, forbidden).');
  for (const [outcome, count] of Object.entries(w.deliveries)) out.push(`coa_webhook_deliveries_total{outcome="${labelValue(outcome)}"} ${num(count)}`);
  header(out, 'coa_webhook_queue_depth', 'gauge', 'Webhook messages held in the outbox, not yet delivered.');
  out.push(`coa_webhook_queue_depth ${num(w.held)}`);
  header(out, 'coa_webhook_in_flight', 'gauge', 'Webhook delivery attempts in flight.');
  out.push(`coa_webhook_in_flight ${num(w.inFlight)}`);
  header(out, 'coa_webhook_oldest_undelivered_age_seconds', 'gauge', 'Age of the oldest webhook message not yet delivered (0 when none).');
  out.push(`coa_webhook_oldest_undelivered_age_seconds ${num(w.oldestHeldAgeMs / MS_PER_SECOND)}`);
  header(
    out,
    'coa_webhook_attempts_allowed_per_second',
    'gauge',
    'Webhook delivery attempts a second the order path leaves room for: near the floor (WEBHOOKS_BUSY_PERCENT, WEBHOOKS_BUSY_MIN_PER_SECOND) while it is saturated; 100000 means no limit.',
  );
  out.push(`coa_webhook_attempts_allowed_per_second ${num(w.allowedPerSecond)}`);
  header(out, 'coa_webhook_failing_endpoints', 'gauge', 'Webhook endpoints marked failing (waiting for the operator to replay them).');
  out.push(`coa_webhook_failing_endpoints ${num(w.failingEndpoints)}`);
  header(out, 'coa_webhook_messages_dropped_total', 'counter', 'Webhook messages dropped since start because their endpoint already held WEBHOOKS_HELD_MAX undelivered ones (the endpoint is then marked failing).');
  out.push(`coa_webhook_messages_dropped_total ${num(w.dropped)}`);
}

export class Metrics {
  private readonly routes = new Map<string, RouteSeries>();
  private readonly batchEntries = new Histogram(WAL_BATCH_BUCKETS, '');
  private readonly syncSeconds = new Histogram(WAL_SYNC_BUCKETS, '');

  /** Pre-creates the series of known routes, so they render (as zeros) before their first request. */
  constructor(options: { routes?: readonly string[] } = {}) {
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
    let cell = byCode.get(key);
    if (cell === undefined) {
      cell = { labels: `route="${labelValue(route)}",status="${status}",code="${labelValue(key)}"`, value: 0 };
      byCode.set(key, cell);
      series.cells.push(cell);
    }
    cell.value++;
    series.duration.observe(seconds);
  }

  /** One group commit: how many entries it carried and how long commit + sync took. */
  observeBatch(entries: number, syncSeconds: number): void {
    this.batchEntries.observe(entries);
    this.syncSeconds.observe(syncSeconds);
  }

  /** The whole registry plus the gauges sampled now, in the text exposition format. */
  render(gauges: MetricsGauges): string {
    const out: string[] = [];
    header(out, 'coa_http_requests_total', 'counter', 'HTTP requests answered, by route, status and error code ("" on success).');
    for (const series of this.routes.values()) for (const cell of series.cells) out.push(`coa_http_requests_total{${cell.labels}} ${cell.value}`);
    header(out, 'coa_http_request_duration_seconds', 'histogram', 'Time from request to reply, by route.');
    for (const series of this.routes.values()) series.duration.render('coa_http_request_duration_seconds', out);
    header(out, 'coa_wal_batch_entries', 'histogram', 'Entries per group-commit batch (one event-loop turn; LMDB may commit several batches together).');
    this.batchEntries.render('coa_wal_batch_entries', out);
    header(out, 'coa_wal_sync_seconds', 'histogram', 'Time from queueing a batch to LMDB until it is synced: its own commit and fsync, and any commit it waited behind.');
    this.syncSeconds.render('coa_wal_sync_seconds', out);
    header(out, 'coa_wal_commits_total', 'counter', 'Storage commits (one fsync each) since start; LMDB may commit several batches together.');
    out.push(`coa_wal_commits_total ${num(gauges.walCommits)}`);
    header(out, 'coa_wal_pending_entries', 'gauge', 'Entries appended and not yet durable.');
    out.push(`coa_wal_pending_entries ${num(gauges.pendingWalEntries)}`);
    header(out, 'coa_accounts', 'gauge', 'Accounts (wallet actors) known to the server.');
    out.push(`coa_accounts ${num(gauges.accounts)}`);
    header(out, 'coa_mailbox_depth_max', 'gauge', 'Commands waiting in the deepest wallet mailbox.');
    out.push(`coa_mailbox_depth_max ${num(gauges.deepestMailbox)}`);
    header(out, 'coa_idempotency_records', 'gauge', 'Idempotency-Key records stored (swept once past the retention).');
    out.push(`coa_idempotency_records ${num(gauges.idempotencyRecords)}`);
    header(out, 'coa_idempotency_oldest_age_seconds', 'gauge', 'Age of the oldest Idempotency-Key record; above the retention plus a minute, the sweep is behind.');
    out.push(`coa_idempotency_oldest_age_seconds ${num(gauges.idempotencyOldestAgeMs / MS_PER_SECOND)}`);
    if (gauges.webhooks !== undefined) renderWebhooks(gauges.webhooks, out);
    if (gauges.snapshot !== undefined) {
      for (const g of snapshotGauges(gauges.snapshot)) {
        header(out, g.name, 'gauge', g.help);
        out.push(`${g.name} ${num(g.value)}`);
      }
    }
    header(out, 'coa_orders', 'gauge', 'Orders by status.');
    for (const [status, count] of Object.entries(gauges.ordersByStatus)) out.push(`coa_orders{status="${labelValue(status)}"} ${num(count)}`);
    return out.join('\n') + '\n';
  }

  private route(route: string): RouteSeries {
    const series: RouteSeries = {
      duration: new Histogram(HTTP_DURATION_BUCKETS, `route="${labelValue(route)}"`),
      byStatus: new Map(),
      cells: [],
    };
    this.routes.set(route, series);
    return series;
  }
}
