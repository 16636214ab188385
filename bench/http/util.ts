/**
 * Small helpers shared by the HTTP benchmark's orchestrators: logging to
 * stderr with elapsed time, number formatting, waiting for a quiet machine,
 * what the data directory sits on, and where the server was built from.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineTimes, machineUse } from './procstat.js';

const T0 = performance.now();
let prefix = 'bench:http';

/** The tag every log line starts with, e.g. "bench" or "bench:http". */
export function setLogPrefix(tag: string): void {
  prefix = tag;
}

export function log(line: string): void {
  process.stderr.write(`[${prefix} +${((performance.now() - T0) / 1000).toFixed(1)}s] ${line}\n`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export const f0 = (n: number): string => Math.round(n).toLocaleString('en-US');
export const f1 = (n: number): string => n.toFixed(1);
export const f2 = (n: number): string => n.toFixed(2);

/** The repository root (this file is dist/bench/http/util.js once built). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export function filesystemOf(path: string): string {
  const names: Record<number, string> = {
    0xef53: 'ext4',
    0x01021994: 'tmpfs',
    0x58465342: 'xfs',
    0x9123683e: 'btrfs',
    0x794c7630: 'overlayfs',
    0x2fc12fc1: 'zfs',
    0x6969: 'nfs',
  };
  try {
    const type = statfsSync(path).type;
    return names[type] ?? `fs type 0x${type.toString(16)}`;
  } catch {
    return 'unknown fs';
  }
}

/** The block device holding path and its model (best effort, from /proc and /sys). */
export function diskOf(path: string): string {
  try {
    const dev = statSync(path).dev;
    const major = Math.floor(dev / 256) & 0xfff;
    const minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
    const sys = `/sys/dev/block/${major}:${minor}`;
    let name = '';
    try {
      name = readFileSync(`${sys}/uevent`, 'utf8').match(/^DEVNAME=(.+)$/m)?.[1] ?? '';
    } catch {
      // No such device entry (e.g. an overlay).
    }
    if (name === '') return `device ${major}:${minor}`;
    const base = name.replace(/p?\d+$/, '');
    const read = (file: string): string => {
      try {
        return readFileSync(file, 'utf8').trim();
      } catch {
        return '';
      }
    };
    const model = read(`/sys/block/${base}/device/model`) || read(`/sys/block/${name}/device/model`);
    const rotational = read(`/sys/block/${base}/queue/rotational`) || read(`/sys/block/${name}/queue/rotational`);
    const kind = rotational === '' ? 'rotational flag unknown' : `kernel rotational flag ${rotational}`;
    const sizeSectors = Number(read(`/sys/block/${base}/size`) || read(`/sys/block/${name}/size`));
    const size = sizeSectors > 0 ? `, ${f0((sizeSectors * 512) / 2 ** 30)} GiB` : '';
    return `/dev/${name}${model === '' ? '' : ` (${model})`}, ${kind}${size}`;
  } catch {
    return 'unknown device';
  }
}

/** Bytes allocated on disk by the files under dir (st_blocks, so sparse files count what they use). */
export function dirBytes(dir: string): { allocated: number; apparent: number } {
  let allocated = 0;
  let apparent = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const sub = dirBytes(path);
      allocated += sub.allocated;
      apparent += sub.apparent;
    } else if (entry.isFile()) {
      const st = statSync(path);
      allocated += st.blocks * 512;
      apparent += st.size;
    }
  }
  return { allocated, apparent };
}

export const MiB = (bytes: number): number => bytes / 2 ** 20;

export interface QuietOptions {
  /** Seconds to wait at most (0: don't wait). */
  quietWait: number;
  /** Percent of all cores below which the machine counts as quiet. */
  quietBelow: number;
  /** Consecutive quiet seconds required (default 2). */
  quietSeconds?: number;
}

/** The `--quiet-wait` / `--quiet-below` options every load benchmark takes, for `parseArgs`. */
export const QUIET_OPTION_SPECS = {
  'quiet-wait': { type: 'string', default: '0' },
  'quiet-below': { type: 'string', default: '10' },
} as const;

/** The parsed `--quiet-wait` / `--quiet-below` values. */
export function quietOptions(values: { 'quiet-wait'?: string | undefined; 'quiet-below'?: string | undefined }): QuietOptions {
  return {
    quietWait: positiveInt('quiet-wait', values['quiet-wait'] ?? QUIET_OPTION_SPECS['quiet-wait'].default, 0),
    quietBelow: positiveInt('quiet-below', values['quiet-below'] ?? QUIET_OPTION_SPECS['quiet-below'].default),
  };
}

/**
 * Waits (up to quietWait seconds) until the machine has been at most
 * quietBelow percent busy for quietSeconds seconds in a row; returns the
 * last one-second reading (0 when not waiting).
 */
export async function waitForQuiet(options: QuietOptions): Promise<number> {
  if (options.quietWait <= 0) return 0;
  const needed = options.quietSeconds ?? 2;
  const deadline = Date.now() + options.quietWait * 1000;
  let said = false;
  let quiet = 0;
  for (;;) {
    const before = machineTimes();
    await sleep(1000);
    const busy = machineUse(before, machineTimes()).busyPct;
    quiet = busy <= options.quietBelow ? quiet + 1 : 0;
    if (quiet >= needed) return busy;
    if (Date.now() >= deadline) {
      log(`the machine is still ${f0(busy)}% busy after waiting ${options.quietWait} s; measuring anyway`);
      return busy;
    }
    if (!said && quiet === 0) {
      log(`the machine is ${f0(busy)}% busy (other processes); waiting up to ${options.quietWait} s for ${needed} s below ${options.quietBelow}%`);
      said = true;
    }
  }
}

/** The commit the benchmark runs from, and whether src/ had uncommitted changes. */
export function sourceVersion(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return dirty === '' ? `commit ${commit}` : `commit ${commit} + uncommitted changes in src/`;
  } catch {
    return 'unknown source version (not a git checkout)';
  }
}

/** Shell-quotes an argument list for display. */
export function shellArgs(argv: string[]): string {
  return argv.map((a) => (/^[\w./=:,-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(' ');
}

export function positiveInt(name: string, raw: string, min = 1): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new Error(`--${name} must be an integer of at least ${min}; got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

/** "16,64,256" → [16, 64, 256]. */
export function intList(name: string, raw: string, min = 1): number[] {
  const out = raw.split(',').map((part) => positiveInt(name, part.trim().replace(/_/g, ''), min));
  if (out.length === 0) throw new Error(`--${name} needs at least one number`);
  return out;
}

const cleanups = new Set<() => void>();
let sigintInstalled = false;

/**
 * Registers a synchronous clean-up (kill a child, remove a temp directory)
 * to run if the benchmark is interrupted with Ctrl-C; returns the function
 * that unregisters it once the normal path has cleaned up.
 */
export function onInterrupt(fn: () => void): () => void {
  cleanups.add(fn);
  if (!sigintInstalled) {
    sigintInstalled = true;
    process.once('SIGINT', () => {
      for (const f of cleanups) {
        try {
          f();
        } catch {
          // Best effort.
        }
      }
      process.exit(130);
    });
  }
  return () => cleanups.delete(fn);
}

/** Where `npm run bench` ends the hand-written part of RESULTS.md (everything before it is kept on regeneration). */
const ANALYSIS_END = '<!-- bench:analysis:end -->';

/**
 * Replaces the block between `begin` and `end` in a results file, or, the
 * first time, adds it under `heading` at the end of the hand-written
 * analysis (so that `npm run bench`, which keeps that part, keeps it too).
 */
export function writeMarkedBlock(file: string, begin: string, end: string, heading: string, block: string): void {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    text = '# Benchmark results\n';
  }
  const fresh = `${begin}\n${block}\n${end}`;
  const at = text.indexOf(begin);
  const to = text.indexOf(end);
  if (at >= 0 && to > at) {
    text = text.slice(0, at) + fresh + text.slice(to + end.length);
  } else {
    const analysisEnd = text.indexOf(ANALYSIS_END);
    const section = `## ${heading}\n\n${fresh}\n\n`;
    text = analysisEnd >= 0 ? text.slice(0, analysisEnd) + section + text.slice(analysisEnd) : text.replace(/\n*$/, '\n') + `\n${section}`;
  }
  writeFileSync(file, text);
  log(`wrote ${file}`);
}
