/**
 * What the HTTP benchmark's orchestrators (`order.ts`, `run-all.ts`, …) and
 * the load-generator process (`runner.ts`) tell each other over the
 * child-process IPC channel.
 */

/**
 * What the load generator sends.
 *  - order: POST /api/v1/order only.
 *  - mixed: per account, in this order: order, status, status, balance, status
 *    (1 order : 3 status polls : 1 balance); the status polls ask for an order
 *    of the same account placed before the run (RunnerAccount.orderId).
 *  - idempotent: POST /api/v1/order, every request with a new Idempotency-Key.
 */
export type Scenario = 'order' | 'mixed' | 'idempotent' | 'v2';

/** Which endpoint a request went to; figures are also kept per kind. */
export type RequestKind = 'order' | 'status' | 'balance';

export interface RunnerAccount {
  key: string;
  secret: string;
  /** An order of this account, for the mixed scenario's status polls. */
  orderId?: string;
  /** The account's API v2 key (the v2 scenario's `key` field). */
  v2Key?: string;
}

/** Written by the orchestrator to a temp JSON file; its path is the runner's only argument. */
export interface RunnerConfig {
  /** Customer API base URL, e.g. http://127.0.0.1:40123 */
  baseUrl: string;
  /** Connections of a run unless the run asks for another number. */
  connections: number;
  /** Requests a second offered in all, spread evenly in time (runner.ts, Pacer); null: as many as the connections can make. */
  rate?: number | null;
  serviceId: number;
  quantity: number;
  accounts: RunnerAccount[];
  /**
   * How requests are spread over the accounts. 'prebuilt': every connection
   * gets its own share of the accounts as ready-made request buffers and
   * cycles through them (cheapest for the load generator, one account never
   * has two requests in flight). 'rotate': a setupRequest hook builds every
   * request afresh from a global round-robin counter (unique targets, but
   * about a third more load-generator CPU per request; order and idempotent
   * scenarios only).
   */
  mode: 'prebuilt' | 'rotate';
  /** Default 'order'. */
  scenario?: Scenario;
}

export type ToRunner =
  | { cmd: 'run'; label: string; durationS: number; connections?: number }
  | { cmd: 'exit' };

export type FromRunner =
  | { type: 'ready' }
  | { type: 'result'; label: string; result: LoadResult }
  | { type: 'error'; message: string };

export interface LatencySummary {
  /** Milliseconds. */
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  count: number;
}

export interface KindResult {
  completed: number;
  ok2xx: number;
  statusCodes: Record<string, number>;
  /** 2xx responses of this kind. */
  latency: LatencySummary;
}

export interface LoadResult {
  /** Wall-clock seconds between autocannon's start and finish. */
  durationS: number;
  /** Connections used in this run. */
  connections: number;
  /** CLOCK_MONOTONIC microseconds at start and finish (matches V8 .cpuprofile timestamps). */
  startMonoUs: number;
  finishMonoUs: number;
  sent: number;
  completed: number;
  ok2xx: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  resets: number;
  /** autocannon's own histogram (2xx only, 1 ms resolution). */
  autocannonLatencyMs: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
  /** The runner's 10 µs-resolution histogram of 2xx response times (all kinds), same clock as autocannon's. */
  latency: LatencySummary;
  /** The same per endpoint (only the kinds that were sent). */
  byKind: Partial<Record<RequestKind, KindResult>>;
  /** Completed requests per one-second sample (autocannon's samples). */
  perSecond: { mean: number; stddev: number; min: number; max: number };
}
