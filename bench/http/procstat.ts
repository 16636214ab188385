/**
 * Linux /proc readings for the HTTP benchmark: CPU time per process and per
 * thread (so the report can say whether the server or the load generator is
 * the bottleneck), whole-machine CPU use, and resident memory.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';

/** Clock ticks per second for /proc CPU times (USER_HZ; 100 on every mainstream Linux). */
export const TICKS_PER_S = 100;

export interface ThreadTimes {
  tid: number;
  name: string;
  ticks: number;
}

export interface ProcessTimes {
  pid: number;
  ticks: number;
  threads: ThreadTimes[];
}

function parseStat(text: string): { name: string; ticks: number } {
  // "tid (comm) S ppid ..." where comm may contain spaces and parentheses.
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  const name = text.slice(open + 1, close);
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { name, ticks };
}

export function processTimes(pid: number): ProcessTimes | null {
  try {
    const own = parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    const threads: ThreadTimes[] = [];
    for (const entry of readdirSync(`/proc/${pid}/task`)) {
      try {
        const t = parseStat(readFileSync(`/proc/${pid}/task/${entry}/stat`, 'utf8'));
        threads.push({ tid: Number(entry), name: t.name, ticks: t.ticks });
      } catch {
        // The thread ended between readdir and read.
      }
    }
    return { pid, ticks: own.ticks, threads };
  } catch {
    return null;
  }
}

/** One thread's name and its time on a CPU so far, in nanoseconds (from /proc/<pid>/task/<tid>/schedstat). */
export interface ThreadRuntime {
  tid: number;
  comm: string;
  runNs: number;
}

/**
 * Every live thread of a process with its CPU time in nanoseconds, or null
 * when the process is gone. The scheduler's own count (schedstat) is exact,
 * where /proc's utime and stime come in ticks of 10 ms.
 */
export function threadRuntimes(pid: number): ThreadRuntime[] | null {
  let entries: string[];
  try {
    entries = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  const out: ThreadRuntime[] = [];
  for (const entry of entries) {
    try {
      const runNs = Number(readFileSync(`/proc/${pid}/task/${entry}/schedstat`, 'utf8').split(' ')[0]);
      const comm = readFileSync(`/proc/${pid}/task/${entry}/comm`, 'utf8').trim();
      out.push({ tid: Number(entry), comm, runNs });
    } catch {
      // The thread ended between readdir and read.
    }
  }
  return out;
}

/**
 * CPU ticks of this process's children that have ended and been waited
 * for (cutime + cstime of /proc/self/stat): the difference across one run of
 * a child (wrk) is that child's CPU time, every thread of it included.
 */
export function reapedChildrenTicks(): number {
  const text = readFileSync('/proc/self/stat', 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); cutime and cstime are fields 16 and 17.
  return Number(fields[13]) + Number(fields[14]);
}

export interface CpuUse {
  /** Percent of one core over the interval (200% = both cores of a 2-core machine). */
  pct: number;
  /** Per thread group (main thread separately), percent of one core, busiest first. */
  threads: { name: string; count: number; pct: number }[];
}

export function cpuUse(pid: number, before: ProcessTimes | null, after: ProcessTimes | null, seconds: number): CpuUse | null {
  if (before === null || after === null || seconds <= 0) return null;
  const pct = (ticks: number): number => (100 * ticks) / TICKS_PER_S / seconds;
  const prior = new Map(before.threads.map((t) => [t.tid, t.ticks]));
  const groups = new Map<string, { count: number; ticks: number }>();
  for (const t of after.threads) {
    const name = t.tid === pid ? 'main thread' : t.name;
    const delta = t.ticks - (prior.get(t.tid) ?? 0);
    const g = groups.get(name) ?? { count: 0, ticks: 0 };
    g.count++;
    g.ticks += delta;
    groups.set(name, g);
  }
  return {
    pct: pct(after.ticks - before.ticks),
    threads: [...groups.entries()]
      .map(([name, g]) => ({ name, count: g.count, pct: pct(g.ticks) }))
      .filter((g) => g.pct > 0)
      .sort((a, b) => b.pct - a.pct),
  };
}

export interface MachineTimes {
  busy: number;
  total: number;
  iowait: number;
}

/** Sectors (512 bytes, whatever the device's block size) written so far to one block device, from /proc/diskstats. */
export interface DiskWrites {
  device: string;
  sectors: number;
}

/**
 * The device line of /proc/diskstats for a `stat().dev` number (Linux
 * dev_t: major in bits 8–19 and 32+, minor in bits 0–7 and 20+), or null
 * when none matches (a file system without a block device, like tmpfs).
 */
export function parseDiskWrites(diskstats: string, dev: number): DiskWrites | null {
  const major = Number((BigInt(dev) >> 8n) & 0xfffn) | Number((BigInt(dev) >> 32n) & ~0xfffn);
  const minor = Number(BigInt(dev) & 0xffn) | Number((BigInt(dev) >> 12n) & ~0xffn);
  for (const line of diskstats.split('\n')) {
    const f = line.trim().split(/\s+/);
    // major minor name reads merged sectors ms writes merged sectors-written …
    if (f.length >= 10 && Number(f[0]) === major && Number(f[1]) === minor) return { device: f[2]!, sectors: Number(f[9]) };
  }
  return null;
}

/** Sectors written so far to the device that holds `path`, or null when that cannot be read. */
export function diskWrites(path: string): DiskWrites | null {
  try {
    return parseDiskWrites(readFileSync('/proc/diskstats', 'utf8'), statSync(path).dev);
  } catch {
    return null;
  }
}

export function machineTimes(): MachineTimes {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is inside user).
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = v;
  const total = user + nice + system + idle + iowait + irq + softirq + steal;
  return { busy: total - idle - iowait, total, iowait };
}

/** Whole-machine busy and iowait share over the interval, percent of all cores. */
export function machineUse(before: MachineTimes, after: MachineTimes): { busyPct: number; iowaitPct: number } {
  const total = after.total - before.total;
  if (total <= 0) return { busyPct: 0, iowaitPct: 0 };
  return { busyPct: (100 * (after.busy - before.busy)) / total, iowaitPct: (100 * (after.iowait - before.iowait)) / total };
}

export interface Memory {
  /** VmRSS: everything resident, MiB. */
  rssMiB: number;
  /** VmHWM: the peak of VmRSS, MiB. */
  peakMiB: number;
  /** RssAnon: heap and other private memory, MiB. */
  anonMiB: number;
  /** RssFile: resident file pages, mostly the LMDB memory map, MiB. */
  fileMiB: number;
}

/** The process's resident memory, or null when it is gone. */
export function memory(pid: number): Memory | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const mib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
    return { rssMiB: mib('VmRSS'), peakMiB: mib('VmHWM'), anonMiB: mib('RssAnon'), fileMiB: mib('RssFile') };
  } catch {
    return null;
  }
}

export function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    return m?.[1]?.trim() ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
