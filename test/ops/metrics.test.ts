/**
 * The Prometheus registry renders valid text exposition format: every sample
 * belongs to a family declared by HELP and TYPE, histogram buckets are
 * cumulative and end at +Inf = _count, and the process figures operators
 * expect (event-loop lag, heap, GC, CPU) are there beside the server's own.
 */
import { describe, expect, it } from 'vitest';
import { HTTP_DURATION_BUCKETS, Metrics, WAL_BATCH_BUCKETS, WAL_SYNC_BUCKETS } from '../../src/ops/index.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** A strict line-by-line parser of the 0.0.4 text format (the subset we emit). */
function parse(text: string): { samples: Sample[]; types: Map<string, string>; help: Map<string, string> } {
  expect(text.endsWith('\n')).toBe(true);
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split('\n')) {
    // The format allows empty lines between families.
    if (line === '') continue;
    if (line.startsWith('# HELP ')) {
      const [, name, doc] = /^# HELP (\S+) (.*)$/.exec(line)!;
      expect(name).toMatch(NAME);
      expect(help.has(name!)).toBe(false);
      help.set(name!, doc!);
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const m = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      expect(m, line).not.toBeNull();
      expect(types.has(m![1]!)).toBe(false);
      expect(help.has(m![1]!)).toBe(true);
      types.set(m![1]!, m![2]!);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    expect(m, `not a sample line: ${JSON.stringify(line)}`).not.toBeNull();
    const labels: Record<string, string> = {};
    if (m![2] !== undefined) {
      const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;
      let at = 0;
      while (at < m![2].length) {
        label.lastIndex = at;
        const l = label.exec(m![2]);
        expect(l, `bad labels: ${m![2]}`).not.toBeNull();
        labels[l![1]!] = l![2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
        at = label.lastIndex;
      }
    }
    const raw = m![3]!;
    const name = m![1]!;
    // Prometheus reads NaN in any case; a process figure with no sample yet is one, a figure of ours never.
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : /^nan$/i.test(raw) && !name.startsWith('coa_') ? NaN : Number(raw);
    expect(Number.isNaN(value) && !/^nan$/i.test(raw), `bad value ${raw}`).toBe(false);
    const family = types.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    expect(types.has(family), `sample ${name} has no TYPE before it`).toBe(true);
    if (family !== name) expect(types.get(family)).toBe('histogram');
    samples.push({ name, labels, value });
  }
  return { samples, types, help };
}

/** Checks every histogram series: ascending le, cumulative counts, +Inf last and equal to _count. */
function checkHistograms(samples: Sample[], family: string, bounds: readonly number[]): Map<string, { buckets: number[]; sum: number; count: number }> {
  const series = new Map<string, { buckets: number[]; sum: number; count: number }>();
  const keyOf = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).filter(([k]) => k !== 'le'));
  const les = new Map<string, string[]>();
  for (const s of samples) {
    if (!s.name.startsWith(family + '_')) continue;
    const key = keyOf(s.labels);
    const entry = series.get(key) ?? { buckets: [], sum: NaN, count: NaN };
    series.set(key, entry);
    if (s.name === `${family}_bucket`) {
      entry.buckets.push(s.value);
      les.set(key, [...(les.get(key) ?? []), s.labels.le!]);
    } else if (s.name === `${family}_sum`) entry.sum = s.value;
    else if (s.name === `${family}_count`) entry.count = s.value;
  }
  for (const [key, entry] of series) {
    expect(les.get(key)).toEqual([...bounds.map(String), '+Inf']);
    for (let i = 1; i < entry.buckets.length; i++) expect(entry.buckets[i]!).toBeGreaterThanOrEqual(entry.buckets[i - 1]!);
    expect(entry.buckets.at(-1)).toBe(entry.count);
    expect(Number.isFinite(entry.sum)).toBe(true);
  }
  return series;
}

const webhooks = { deliveries: { delivered: 6, failed: 2 }, held: 3, inFlight: 1, oldestHeldAgeMs: 2500, failingEndpoints: 1, dropped: 4, allowedPerSecond: 50 };
const gauges = { accounts: 3, deepestMailbox: 7, ordersByStatus: { pending: 5, processing: 0, completed: 2 }, pendingWalEntries: 11, walCommits: 9, idempotencyRecords: 4, idempotencyOldestAgeMs: 1500, webhooks, replication: { leading: 1, synchronousStandby: 1 } };
const emptyGauges = {
  accounts: 0,
  deepestMailbox: 0,
  ordersByStatus: {},
  pendingWalEntries: 0,
  walCommits: 0,
  idempotencyRecords: 0,
  idempotencyOldestAgeMs: 0,
  webhooks: { deliveries: {}, held: 0, inFlight: 0, oldestHeldAgeMs: 0, failingEndpoints: 0, dropped: 0, allowedPerSecond: 0 },
  replication: { leading: 0, synchronousStandby: -1 },
};

describe('Metrics', () => {
  it('renders counters, histograms and gauges in valid exposition format', async () => {
    const m = new Metrics({ routes: ['GET /api/v1/services'] });
    m.countRequest('POST /api/v1/order', 201, null, 0.0004);
    m.countRequest('POST /api/v1/order', 201, null, 0.003);
    m.countRequest('POST /api/v1/order', 402, 'BALANCE', 0.0012);
    m.countRequest('POST /api/v1/order', 201, null, 2.5);
    m.countRequest('GET /api/v1/balance', 429, 'RATE', 0.0001);
    m.observeBatch(1, 0.00009);
    m.observeBatch(3, 0.0011);
    m.observeBatch(5000, 0.3);
    const { samples, types } = parse(await m.render(gauges));

    expect(Object.fromEntries([...types].filter(([name]) => name.startsWith('coa_')))).toEqual({
      coa_http_requests_total: 'counter',
      coa_http_request_duration_seconds: 'histogram',
      coa_log_lines_dropped_total: 'counter',
      coa_wal_batch_entries: 'histogram',
      coa_wal_sync_seconds: 'histogram',
      coa_wal_commits_total: 'counter',
      coa_wal_pending_entries: 'gauge',
      coa_accounts: 'gauge',
      coa_mailbox_depth_max: 'gauge',
      coa_replication_leader: 'gauge',
      coa_snapshot_last_bytes: 'gauge',
      coa_snapshot_last_duration_seconds: 'gauge',
      coa_snapshot_last_ok: 'gauge',
      coa_snapshot_last_start_time_seconds: 'gauge',
      coa_replication_synchronous_standby: 'gauge',
      coa_idempotency_records: 'gauge',
      coa_idempotency_oldest_age_seconds: 'gauge',
      coa_webhook_deliveries_total: 'counter',
      coa_webhook_queue_depth: 'gauge',
      coa_webhook_in_flight: 'gauge',
      coa_webhook_oldest_undelivered_age_seconds: 'gauge',
      coa_webhook_attempts_allowed_per_second: 'gauge',
      coa_webhook_failing_endpoints: 'gauge',
      coa_webhook_messages_dropped_total: 'counter',
      coa_orders: 'gauge',
    });
    // prom-client's default process figures.
    expect(types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
    expect(types.get('nodejs_heap_size_used_bytes')).toBe('gauge');
    expect(types.get('nodejs_gc_duration_seconds')).toBe('histogram');
    expect(types.get('process_cpu_user_seconds_total')).toBe('counter');
    expect(samples.find((s) => s.name === 'coa_idempotency_records')?.value).toBe(4);
    expect(samples.find((s) => s.name === 'coa_idempotency_oldest_age_seconds')?.value).toBe(1.5);
    const counter = (route: string, status: string, code: string) =>
      samples.find((s) => s.name === 'coa_http_requests_total' && s.labels.route === route && s.labels.status === status && s.labels.code === code)?.value;
    expect(counter('POST /api/v1/order', '201', '')).toBe(3);
    expect(counter('POST /api/v1/order', '402', 'BALANCE')).toBe(1);
    expect(counter('GET /api/v1/balance', '429', 'RATE')).toBe(1);

    const http = checkHistograms(samples, 'coa_http_request_duration_seconds', HTTP_DURATION_BUCKETS);
    // The pre-created route renders with zeros before its first request.
    expect(http.size).toBe(3);
    const order = http.get(JSON.stringify([['route', 'POST /api/v1/order']]))!;
    // 0.0004 ≤ 0.0005; 0.0012 ≤ 0.002; 0.003 ≤ 0.005; 2.5 only in +Inf.
    expect(order.buckets).toEqual([1, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 4]);
    expect(order.count).toBe(4);
    expect(order.sum).toBeCloseTo(2.5046, 10);
    expect(http.get(JSON.stringify([['route', 'GET /api/v1/services']]))!.count).toBe(0);

    const batches = checkHistograms(samples, 'coa_wal_batch_entries', WAL_BATCH_BUCKETS).get('[]')!;
    expect(batches.buckets).toEqual([1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3]);
    expect(batches.sum).toBe(5004);
    const sync = checkHistograms(samples, 'coa_wal_sync_seconds', WAL_SYNC_BUCKETS).get('[]')!;
    expect(sync.count).toBe(3);
    expect(sync.buckets[0]).toBe(1);

    const gauge = (name: string, labels: Record<string, string> = {}) =>
      samples.find((s) => s.name === name && JSON.stringify(s.labels) === JSON.stringify(labels))?.value;
    expect(gauge('coa_accounts')).toBe(3);
    expect(gauge('coa_mailbox_depth_max')).toBe(7);
    expect(gauge('coa_wal_pending_entries')).toBe(11);
    expect(gauge('coa_wal_commits_total')).toBe(9);
    expect(gauge('coa_orders', { status: 'pending' })).toBe(5);
    expect(gauge('coa_orders', { status: 'completed' })).toBe(2);
    expect(gauge('coa_webhook_deliveries_total', { outcome: 'failed' })).toBe(2);
    expect(gauge('coa_webhook_oldest_undelivered_age_seconds')).toBe(2.5);
    expect(gauge('coa_webhook_messages_dropped_total')).toBe(4);
  });

  it('a figure read at scrape time shows its part\'s latest value, not a sum of scrapes', async () => {
    const m = new Metrics();
    await m.render(gauges);
    const { samples } = parse(await m.render({ ...gauges, walCommits: 10, ordersByStatus: { pending: 1 }, webhooks: { ...webhooks, deliveries: { delivered: 7 } } }));
    const value = (name: string, labels: Record<string, string> = {}) => samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).map((s) => s.value);
    expect(value('coa_wal_commits_total')).toEqual([10]);
    expect(value('coa_orders')).toEqual([1]);
    expect(value('coa_webhook_deliveries_total')).toEqual([7]);
  });

  it('a value on a bucket boundary falls in that bucket (le is inclusive)', async () => {
    const m = new Metrics();
    m.observeBatch(4, 0.001);
    const { samples } = parse(await m.render(gauges));
    const bucket = (name: string, le: string) => samples.find((s) => s.name === name && s.labels.le === le)!.value;
    expect(bucket('coa_wal_batch_entries_bucket', '2')).toBe(0);
    expect(bucket('coa_wal_batch_entries_bucket', '4')).toBe(1);
    expect(bucket('coa_wal_sync_seconds_bucket', '0.0005')).toBe(0);
    expect(bucket('coa_wal_sync_seconds_bucket', '0.001')).toBe(1);
  });

  it('escapes label values and renders an empty registry', async () => {
    const m = new Metrics();
    parse(await m.render(emptyGauges));
    m.countRequest('GET /weird"route\\with\nnewline', 404, 'NOT_FOUND', 0.001);
    const { samples } = parse(await m.render(gauges));
    const s = samples.find((x) => x.name === 'coa_http_requests_total')!;
    expect(s.labels.route).toBe('GET /weird"route\\with\nnewline');
    expect(s.value).toBe(1);
  });

  it('a bad duration cannot corrupt the sum', async () => {
    const m = new Metrics();
    m.countRequest('r', 200, null, Number.NaN);
    m.countRequest('r', 200, null, -1);
    const { samples } = parse(await m.render(gauges));
    expect(samples.find((s) => s.name === 'coa_http_request_duration_seconds_sum')!.value).toBe(0);
    expect(samples.find((s) => s.name === 'coa_http_request_duration_seconds_count')!.value).toBe(2);
  });
});
