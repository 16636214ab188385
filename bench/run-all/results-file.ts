/**
 * Writing bench/RESULTS.md (the generated block replaced, the hand-written analysis kept) and bench/throughput.svg.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { throughputSvg } from '../chart.js';
import { f0, log, REPO_ROOT } from '../http/util.js';
import { TARGET_ORDERS, TARGET_P99 } from './options.js';
import { type Results } from './results.js';
import { chartPoints, meanOf, render } from './render.js';

export const RESULTS_MD = join(REPO_ROOT, 'bench', 'RESULTS.md');
export const CHART_SVG = join(REPO_ROOT, 'bench', 'throughput.svg');

export const GENERATED_BEGIN = '<!-- bench:generated:begin (written by npm run bench, bench/run-all.ts: edits between these markers are overwritten) -->';
export const GENERATED_END = '<!-- bench:generated:end -->';
export const ANALYSIS_BEGIN = '<!-- bench:analysis:begin (hand-written: npm run bench keeps everything between these markers as it is) -->';
export const ANALYSIS_END = '<!-- bench:analysis:end -->';

/** The analysis section of the current file (markers included), or the whole old text wrapped as one. */
export function keptAnalysis(text: string): string {
  const begin = text.indexOf(ANALYSIS_BEGIN.slice(0, ANALYSIS_BEGIN.indexOf(' (')));
  const end = text.indexOf(ANALYSIS_END);
  if (begin >= 0 && end > begin) return text.slice(begin, end + ANALYSIS_END.length);
  // No markers yet: keep everything that is not the generated block, so nothing hand-written is lost.
  let rest = text;
  const g0 = rest.indexOf(GENERATED_BEGIN.slice(0, GENERATED_BEGIN.indexOf(' (')));
  const g1 = rest.indexOf(GENERATED_END);
  if (g0 >= 0 && g1 > g0) rest = rest.slice(0, g0) + rest.slice(g1 + GENERATED_END.length);
  rest = rest.replace(/^# Benchmark results\s*/, '').trim();
  return `${ANALYSIS_BEGIN}\n\n${rest === '' ? '## Analysis\n\n(to be written)' : rest}\n\n${ANALYSIS_END}`;
}

export function writeResults(generated: string): void {
  let old = '';
  try {
    old = readFileSync(RESULTS_MD, 'utf8');
  } catch {
    // First run.
  }
  const text = [
    '# Benchmark results',
    '',
    'Generated figures first (`npm run bench`; regenerate them rather than editing), then the hand-written analysis.',
    '',
    GENERATED_BEGIN,
    '',
    '## Latest `npm run bench`',
    '',
    generated,
    '',
    GENERATED_END,
    '',
    keptAnalysis(old),
    '',
  ].join('\n');
  writeFileSync(RESULTS_MD, text);
  log(`wrote ${RESULTS_MD}`);
}

/** Prints the generated markdown and (when write) regenerates RESULTS.md and the chart. */
export function publish(results: Results, write: boolean): void {
  const generated = render(results);
  process.stdout.write(`\n${generated}\n`);
  if (!write) return;
  writeResults(generated);
  const { env, options } = results;
  if (results.sweep.ok === true) {
    const points = chartPoints(results.sweep.value);
    const ordersAt = (c: number): string => f0(meanOf(points.filter((p) => p.connections === c).map((p) => p.ordersPerS)));
    writeFileSync(
      CHART_SVG,
      throughputSvg(points, {
        title: 'credit-order-api: durable orders/s and p99 against connections',
        subtitle:
          `${env.date.slice(0, 10)}, ${env.cpu.replace(/\(R\)/g, '')}, ${env.cores} cores, ${f0(options.accounts)} accounts, ` +
          `${options.sweepDuration} s per step, ${options.runs} pass(es)` +
          (points.some((p) => p.connections === 64) ? `; at 64 connections ${ordersAt(64)}/s` : ''),
        targetOrdersPerS: TARGET_ORDERS,
        targetP99Ms: TARGET_P99,
      }),
    );
    log(`wrote ${CHART_SVG}`);
  } else log(`the connection sweep did not run; ${CHART_SVG} left as it was`);
}

