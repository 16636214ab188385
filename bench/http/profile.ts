/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time and
 * inclusive time per function, and self time per area (app code, lmdb,
 * uWebSockets.js, Node internals, GC, idle), optionally restricted to a
 * CLOCK_MONOTONIC window (microseconds), so that only the measured run
 * counts and not start-up or seeding.
 *
 *   node dist/bench/http/profile.js FILE.cpuprofile [--top 30] [--from US --to US]
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileRow {
  name: string;
  area: string;
  selfMs: number;
  selfPct: number;
  totalMs: number;
  totalPct: number;
}

export interface ProfileSummary {
  /** Sampled time inside the window, ms (idle included). */
  windowMs: number;
  /** Sampled time that was not idle, ms. */
  busyMs: number;
  windowUsed: boolean;
  areas: { area: string; selfMs: number; pctOfBusy: number }[];
  /** Percentages are of busy (non-idle) time. */
  top: ProfileRow[];
}

export function area(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return 'gc';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'program (native, unattributed)';
    return 'v8 builtins / native';
  }
  if (url.startsWith('node:')) return 'node internals';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return 'app ' + url.slice(dist + '/dist/'.length).split('/').slice(0, 2).join('/');
  return url;
}

function label(frame: CallFrame): string {
  const { url, functionName, lineNumber } = frame;
  const name = functionName === '' ? '(anonymous)' : functionName;
  if (url === '') return name;
  let file = url.replace(/^file:\/\//, '');
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) file = file.slice(nm + '/node_modules/'.length);
  const dist = file.indexOf('/dist/');
  if (dist >= 0) file = file.slice(dist + '/dist/'.length);
  return `${name} ${file}:${lineNumber + 1}`;
}

/** A profile's nodes by id, each node's parent, and the sampled self time per node inside the window. */
export interface Sampled {
  byId: Map<number, ProfileNode>;
  parent: Map<number, number>;
  selfUs: Map<number, number>;
  windowUsed: boolean;
}

export function readSamples(file: string, window: { fromUs: number; toUs: number } | null): Sampled {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) byId.set(node.id, node);
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  // V8 timestamps are CLOCK_MONOTONIC microseconds on Linux. Only use the
  // window if it overlaps the profile; otherwise count everything.
  const windowUsed = window !== null && window.fromUs < profile.endTime && window.toUs > profile.startTime;
  const selfUs = new Map<number, number>();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    const duration = profile.timeDeltas[i + 1] ?? 0;
    if (windowUsed && (t < window!.fromUs || t >= window!.toUs)) continue;
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + duration);
  }
  return { byId, parent, selfUs, windowUsed };
}

export function summarizeProfile(file: string, window: { fromUs: number; toUs: number } | null = null, topN = 30): ProfileSummary {
  const { byId, parent, selfUs, windowUsed } = readSamples(file, window);
  const selfByKey = new Map<string, { frame: CallFrame; us: number }>();
  const totalByKey = new Map<string, number>();
  const areaUs = new Map<string, number>();
  let windowUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const key = label(node.callFrame);
    const entry = selfByKey.get(key) ?? { frame: node.callFrame, us: 0 };
    entry.us += us;
    selfByKey.set(key, entry);
    const a = area(node.callFrame);
    areaUs.set(a, (areaUs.get(a) ?? 0) + us);
    windowUs += us;
    if (a === 'idle') idleUs += us;
    // Inclusive time: every distinct function on the stack gets the sample once.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = label(byId.get(cur)!.callFrame);
      if (seen.has(k)) continue;
      seen.add(k);
      totalByKey.set(k, (totalByKey.get(k) ?? 0) + us);
    }
  }
  const busyUs = windowUs - idleUs;
  const pct = (us: number): number => (busyUs === 0 ? 0 : (100 * us) / busyUs);
  const top = [...selfByKey.entries()]
    .filter(([, v]) => area(v.frame) !== 'idle')
    .sort((a, b) => b[1].us - a[1].us)
    .slice(0, topN)
    .map(([name, v]) => {
      const total = totalByKey.get(name) ?? v.us;
      return { name, area: area(v.frame), selfMs: v.us / 1000, selfPct: pct(v.us), totalMs: total / 1000, totalPct: pct(total) };
    });
  const areas = [...areaUs.entries()]
    .filter(([a]) => a !== 'idle')
    .sort((a, b) => b[1] - a[1])
    .map(([a, us]) => ({ area: a, selfMs: us / 1000, pctOfBusy: pct(us) }));
  return { windowMs: windowUs / 1000, busyMs: busyUs / 1000, windowUsed, areas, top };
}

/** The inclusive-time leaders among the app's own functions (where the request path spends its time). */
export function formatProfile(summary: ProfileSummary): string {
  const lines: string[] = [];
  lines.push(
    `CPU profile of the server's main thread${summary.windowUsed ? ' (measured run only)' : ' (whole process life)'}: ` +
      `${summary.windowMs.toFixed(0)} ms sampled, ${summary.busyMs.toFixed(0)} ms busy ` +
      `(${((100 * summary.busyMs) / Math.max(1, summary.windowMs)).toFixed(1)}%).`,
  );
  lines.push('', 'Self time by area (% of busy):');
  for (const a of summary.areas) lines.push(`  ${a.pctOfBusy.toFixed(1).padStart(5)}%  ${a.area}`);
  lines.push('', 'Top functions by self time (% of busy; total = inclusive):');
  lines.push('   self%  total%  function');
  for (const row of summary.top) {
    lines.push(`  ${row.selfPct.toFixed(1).padStart(5)}%  ${row.totalPct.toFixed(1).padStart(5)}%  ${row.name}  [${row.area}]`);
  }
  return lines.join('\n');
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '30' }, from: { type: 'string' }, to: { type: 'string' } },
  });
  const file = positionals[0];
  if (file === undefined) {
    process.stderr.write('usage: node dist/bench/http/profile.js FILE.cpuprofile [--top N] [--from US --to US]\n');
    process.exit(2);
  }
  const window = values.from !== undefined && values.to !== undefined ? { fromUs: Number(values.from), toUs: Number(values.to) } : null;
  process.stdout.write(formatProfile(summarizeProfile(file, window, Number(values.top))) + '\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
