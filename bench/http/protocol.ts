/**
 * What the HTTP benchmark's orchestrator (`order.ts`) and its load-generator
 * process (`runner.ts`) tell each other over the child-process IPC channel.
 */

/** Written by the orchestrator to a temp JSON file; its path is the runner's only argument. */
export interface RunnerConfig {
  /** Customer API base URL, e.g. http://127.0.0.1:40123 */
  baseUrl: string;
  connections: number;
  serviceId: number;
  quantity: number;
  accounts: { key: string; secret: string }[];
  /**
   * How requests are spread over the accounts. 'prebuilt': every connection
   * gets its own share of the accounts as ready-made request buffers and
   * cycles through them (cheapest for the load generator, one account never
   * has two requests in flight). 'rotate': a setupRequest hook builds every
   * request afresh from a global round-robin counter (unique targets, but
   * about a third more load-generator CPU per request).
   */
  mode: 'prebuilt' | 'rotate';
}

export type ToRunner =
  | { cmd: 'run'; label: string; durationS: number }
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

export interface LoadResult {
  /** Wall-clock seconds between autocannon's start and finish. */
  durationS: number;
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
  /** The runner's 10 µs-resolution histogram of 2xx response times, same clock as autocannon's. */
  latency: LatencySummary;
  /** Completed requests per one-second sample (autocannon's samples). */
  perSecond: { mean: number; stddev: number; min: number; max: number };
}
