/**
 * The disk's sync latency, measured the same way in every benchmark report
 * so that figures from different machines can be read side by side: a
 * durable order costs at least one sync, and on a slow-sync disk (most cloud
 * block storage) the sync, not the CPU, sets the pace of the order path.
 *
 * The probe writes 4 KiB into a file that was preallocated (zero-filled and
 * synced first, so no write grows the file and no sync has to commit the
 * file system's journal for a new length) and calls fdatasync after each
 * write, a few hundred times; it reports the median and the 90th and 99th
 * percentiles. The file is made next to where the benchmark's data
 * directory goes (the same file system and device) and removed afterwards.
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { f2 } from './util.js';

export interface SyncLatency {
  /** Where the probe file was (its directory). */
  dir: string;
  samples: number;
  medianMs: number;
  p90Ms: number;
  p99Ms: number;
}

const PAGE_BYTES = 4096;

/** Writes and fdatasyncs `samples` 4 KiB pages (over a preallocated file) in a temp directory under `dir`. */
export function measureSyncLatency(dir: string, samples = 300): SyncLatency {
  if (!Number.isSafeInteger(samples) || samples < 10) throw new Error('the sync probe needs at least 10 samples');
  const probeDir = mkdtempSync(join(dir, 'sync-probe-'));
  const file = join(probeDir, 'probe');
  const fd = openSync(file, 'w+');
  const timesMs: number[] = [];
  try {
    // Preallocate: every page the probe will write exists and is synced
    // before the first timed write.
    const zeros = Buffer.alloc(PAGE_BYTES * samples);
    for (let done = 0; done < zeros.length; ) done += writeSync(fd, zeros, done, zeros.length - done, done);
    fdatasyncSync(fd);
    const page = Buffer.alloc(PAGE_BYTES, 0x5a);
    for (let i = 0; i < samples; i++) {
      const startedMs = performance.now();
      for (let done = 0; done < PAGE_BYTES; ) done += writeSync(fd, page, done, PAGE_BYTES - done, i * PAGE_BYTES + done);
      fdatasyncSync(fd);
      timesMs.push(performance.now() - startedMs);
    }
  } finally {
    closeSync(fd);
    rmSync(probeDir, { recursive: true, force: true });
  }
  timesMs.sort((a, b) => a - b);
  const at = (q: number): number => timesMs[Math.min(timesMs.length - 1, Math.floor(q * timesMs.length))]!;
  return { dir, samples, medianMs: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99) };
}

/** One sentence for a report, e.g. "disk sync latency 0.26 ms (median of 300 …; p90 0.35, p99 0.61 ms)". */
export function describeSyncLatency(s: SyncLatency): string {
  return (
    `disk sync latency ${f2(s.medianMs)} ms (median of ${s.samples} preallocated 4 KiB writes + fdatasync in ${s.dir}; ` +
    `p90 ${f2(s.p90Ms)} ms, p99 ${f2(s.p99Ms)} ms)`
  );
}
