/**
 * bench:cpu's tables in markdown: one row per variant (requests/s, µs of
 * CPU per acknowledged request for the server and per thread class, entries
 * per commit, the load generator and the other processes), then the ratios
 * the targets are stated in, one column per build.
 */
import type { MeanSe } from './interleave.js';
import { describeAgainst, TARGETS, type TargetRatios, type VariantFigures } from './cpu-figures.js';
import { f0, f1 } from './util.js';

const pm0 = (m: MeanSe): string => `${f0(m.mean)} ± ${f0(m.se)}`;
const pm1 = (m: MeanSe): string => `${f1(m.mean)} ± ${f1(m.se)}`;

export function figuresTable(variants: VariantFigures[], poolKnown: boolean): string {
  const lines = [
    '| variant | rounds | acknowledged requests/s | server µs CPU per request | event loop µs | thread pool µs | rest µs | entries per commit | wrk µs per request (% of a core) | other processes (% of a core) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const v of variants) {
    const us = v.perRequestUs;
    lines.push(
      `| ${v.variant} | ${v.runs.length} | ${pm0(v.perSecond)} | **${pm1(us.total)}** | ${pm1(us['event loop'])} | ${poolKnown ? pm1(us['thread pool']) : 'n/a'} | ${pm1(us.rest)} | ` +
        `${v.entriesPerCommit === null ? '–' : f1(v.entriesPerCommit.mean)} | ${f1(v.loadgenPerRequestUs.mean)} (${f0(v.loadgenPct.mean)}%) | ${f0(v.otherPct.mean)}% |`,
    );
  }
  return lines.join('\n');
}

/** One column per build ("A", and "B" when a second build ran), one row per target. */
export function ratiosTable(builds: { label: string; ratios: TargetRatios }[]): string {
  const lines = [`| ratio (paired by round) | target | ${builds.map((b) => b.label).join(' | ')} |`, `|---|---:|${builds.map(() => '---:').join('|')}|`];
  for (const t of TARGETS) {
    const cells = builds.map((b) => describeAgainst(b.ratios[t.key], t.atMost, t.bound));
    lines.push(`| ${t.name} | ${t.atMost ? '≤' : '≥'} ${t.bound} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}
