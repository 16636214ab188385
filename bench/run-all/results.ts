/**
 * The figures one `npm run bench` collects, as they are kept in its --json file and read back by --from-json.
 */
import { type CeilingReport } from '../http/ceiling.js';
import { type RunReport } from '../http/measure.js';
import type { Scenario } from '../http/protocol.js';
import { type ScalingResult } from '../http/scaling.js';
import { type Options, type Section } from './options.js';

export type Outcome<T> = { ok: true; value: T; seconds: number } | { ok: false; error: string; seconds: number } | { ok: null; reason: string };

export interface OrderPathRun {
  ceilingBefore: CeilingReport;
  order: RunReport;
  ceilingAfter: CeilingReport;
  /** Order path req/s ÷ mean of the two ceilings. */
  fraction: number;
}

export interface OrderPath {
  seedS: number;
  readyMs: number;
  runs: OrderPathRun[];
  stopCode: number | null;
}

export interface ScenarioFigures {
  scenario: Scenario;
  seedS: number;
  primeS: number;
  loadAccounts: number;
  runs: RunReport[];
  stopCode: number | null;
}

export interface PeerFigures {
  /** What the peer module returned (its own result object). */
  result: unknown;
  markdown: string;
  runs: { label: string; requestsPerS: number; durableOrdersPerS: number; p99: number }[];
}

export interface Environment {
  date: string;
  command: string;
  /** The arguments given to run-all.js. */
  args?: string[];
  source: string;
  node: string;
  cpu: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  dataDir: string;
  /** The disk's measured sync latency, as a sentence (http/sync-latency.ts); absent in results older than the probe. */
  syncLatency?: string;
  versions: Record<string, string>;
}

export interface Results {
  env: Environment;
  options: Omit<Options, 'skip'> & { skip: Section[] };
  totalS: number;
  micro: Outcome<string>;
  orderPath: Outcome<OrderPath>;
  mixed: Outcome<ScenarioFigures>;
  idempotent: Outcome<ScenarioFigures>;
  peer: Outcome<PeerFigures>;
  sweep: Outcome<RunReport[]>;
  scaling: Outcome<ScalingResult>;
}

