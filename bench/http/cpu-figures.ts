/**
 * The arithmetic of bench:cpu, kept pure so that it can be tested: one
 * measured run's CPU readings become µs of CPU per acknowledged request
 * (whole server and per thread class), the load generator's and the other
 * processes' share of the machine, and entries per commit; the runs of a
 * variant become its means; pairs of variants become the ratios the issue's
 * targets are stated in, paired by round.
 */
import type { ThreadRuntime } from './procstat.js';
import { meanSe, pairedRatio, type MeanSe } from './interleave.js';
import { classOf, THREAD_CLASSES, type ThreadClass, type ThreadRole } from './thread-classes.js';

export type ClassUs = Record<ThreadClass, number>;

/** One measured run of one variant: raw readings over the CPU window. */
export interface CpuRun {
  variant: string;
  round: number;
  /** The CPU window (wrk's whole life), seconds. */
  wallS: number;
  /** wrk's own measured duration, seconds. */
  loadS: number;
  /** 2xx answers: for the order path, each a durable (or, without syncs, committed) order. */
  acknowledged: number;
  serverUs: ClassUs;
  loadgenUs: number;
  /** CPU of the benchmark's own process (idle while wrk runs). */
  selfUs: number;
  /** Busy CPU of the whole machine, all cores. */
  machineUs: number;
  /** Group-commit entries and LMDB commits over the run; null for the bare server. */
  entries: number | null;
  commits: number | null;
}

/** What a run works out to. */
export interface RunFigures {
  perSecond: number;
  /** µs of server CPU per acknowledged request, by class, and in total. */
  perRequestUs: ClassUs & { total: number };
  loadgenPerRequestUs: number;
  /** Percent of one core. */
  loadgenPct: number;
  otherPct: number;
  entriesPerCommit: number | null;
}

/** Server CPU by thread class (µs) between two readings of its threads; a thread born in between counts from zero. */
export function cpuByClass(roles: Map<number, ThreadRole>, before: ThreadRuntime[], after: ThreadRuntime[]): ClassUs {
  const prior = new Map(before.map((t) => [t.tid, t.runNs]));
  const out: ClassUs = { 'event loop': 0, 'thread pool': 0, rest: 0 };
  for (const t of after) {
    const role = roles.get(t.tid) ?? 'unidentified';
    out[classOf(role)] += (t.runNs - (prior.get(t.tid) ?? 0)) / 1000;
  }
  return out;
}

export function runFigures(r: CpuRun): RunFigures {
  const n = Math.max(1, r.acknowledged);
  const total = THREAD_CLASSES.reduce((sum, c) => sum + r.serverUs[c], 0);
  const perRequestUs = { 'event loop': r.serverUs['event loop'] / n, 'thread pool': r.serverUs['thread pool'] / n, rest: r.serverUs.rest / n, total: total / n };
  const pctOfCore = (us: number): number => (100 * us) / (r.wallS * 1e6);
  return {
    perSecond: r.acknowledged / r.loadS,
    perRequestUs,
    loadgenPerRequestUs: r.loadgenUs / n,
    loadgenPct: pctOfCore(r.loadgenUs),
    otherPct: Math.max(0, pctOfCore(r.machineUs - total - r.loadgenUs - r.selfUs)),
    entriesPerCommit: r.entries === null || r.commits === null || r.commits === 0 ? null : r.entries / r.commits,
  };
}

/** A variant's runs in round order, with the mean and standard error of every figure. */
export interface VariantFigures {
  variant: string;
  runs: RunFigures[];
  perSecond: MeanSe;
  perRequestUs: Record<ThreadClass | 'total', MeanSe>;
  loadgenPerRequestUs: MeanSe;
  loadgenPct: MeanSe;
  otherPct: MeanSe;
  entriesPerCommit: MeanSe | null;
}

export function variantFigures(variant: string, runs: CpuRun[]): VariantFigures {
  const figures = runs.filter((r) => r.variant === variant).sort((a, b) => a.round - b.round).map(runFigures);
  const of = (pick: (f: RunFigures) => number): MeanSe => meanSe(figures.map(pick));
  const perCommit = figures.map((f) => f.entriesPerCommit).filter((v): v is number => v !== null);
  return {
    variant,
    runs: figures,
    perSecond: of((f) => f.perSecond),
    perRequestUs: {
      'event loop': of((f) => f.perRequestUs['event loop']),
      'thread pool': of((f) => f.perRequestUs['thread pool']),
      rest: of((f) => f.perRequestUs.rest),
      total: of((f) => f.perRequestUs.total),
    },
    loadgenPerRequestUs: of((f) => f.loadgenPerRequestUs),
    loadgenPct: of((f) => f.loadgenPct),
    otherPct: of((f) => f.otherPct),
    entriesPerCommit: perCommit.length === 0 ? null : meanSe(perCommit),
  };
}

export interface Ratio {
  ratio: number;
  se: number;
  rounds: number;
}

/**
 * `other ÷ base` over runs paired by round (the geometric mean of the
 * rounds' ratios, as interleave.ts pairs throughputs); one round gives its
 * ratio with no error; no common round gives null.
 */
export function roundRatio(other: number[], base: number[]): Ratio | null {
  const paired = pairedRatio(other, base);
  if (paired !== null) return paired;
  if (other.length === 0 || base.length === 0) return null;
  return { ratio: other[0]! / base[0]!, se: 0, rounds: 1 };
}

/** The figures the targets are stated in, for one build's variants against the bare server. */
export interface TargetRatios {
  serverCpu: Ratio | null;
  loopCpu: Ratio | null;
  durableOverNoSync: Ratio | null;
  orderOverBare: Ratio | null;
}

export function targetRatios(bare: VariantFigures, durable: VariantFigures, noSync: VariantFigures | null): TargetRatios {
  const bareTotal = bare.runs.map((f) => f.perRequestUs.total);
  return {
    serverCpu: roundRatio(durable.runs.map((f) => f.perRequestUs.total), bareTotal),
    loopCpu: roundRatio(durable.runs.map((f) => f.perRequestUs['event loop']), bareTotal),
    durableOverNoSync: noSync === null ? null : roundRatio(durable.runs.map((f) => f.perSecond), noSync.runs.map((f) => f.perSecond)),
    orderOverBare: roundRatio(durable.runs.map((f) => f.perSecond), bare.runs.map((f) => f.perSecond)),
  };
}

/** Each target: the ratio, which way it must lie, its bound. */
export const TARGETS: readonly { key: keyof TargetRatios; name: string; atMost: boolean; bound: number }[] = [
  { key: 'serverCpu', name: 'server CPU per durable order ÷ bare-uWS CPU per request', atMost: true, bound: 3 },
  { key: 'loopCpu', name: 'event-loop CPU per durable order ÷ bare-uWS CPU per request', atMost: true, bound: 2.5 },
  { key: 'durableOverNoSync', name: 'durable ÷ no-sync orders/s', atMost: false, bound: 0.85 },
  { key: 'orderOverBare', name: 'durable orders/s ÷ bare-uWS requests/s', atMost: false, bound: 0.5 },
];

/** "2.91 ± 0.04 (met)" or "n/a". */
export function describeAgainst(r: Ratio | null, atMost: boolean, bound: number): string {
  if (r === null) return 'n/a';
  const met = atMost ? r.ratio <= bound : r.ratio >= bound;
  return `${r.ratio.toFixed(2)} ± ${r.se.toFixed(2)} (${met ? 'met' : 'not met'})`;
}
