/**
 * Reads an `strace -f` log into the system calls it records, in the order
 * strace saw them, and checks the durability promise at the level of the
 * system calls: every write the server made to its data directory while it
 * handled a request is on disk (an fsync/fdatasync of that file began after
 * the write had finished and completed, or the write went through a
 * descriptor opened with O_DSYNC/O_SYNC) before the server began writing
 * the reply.
 *
 * Order in the log is causal where it matters: strace sees a thread's
 * syscall-exit stop before that thread runs on, so a sync whose completion
 * wakes the main thread is logged before any reply the main thread then
 * sends. A call another thread interrupted is logged in two parts
 * ("<unfinished ...>" then "<... name resumed>"); its start and end are kept
 * apart.
 */
import { readFileSync } from 'node:fs';

export interface Syscall {
  pid: number;
  name: string;
  /** The arguments as strace printed them (both parts of a split call). */
  args: string;
  result: number;
  /** Line index where the call began and where it returned. */
  startedAt: number;
  endedAt: number;
}

const WHOLE = /^(\d+)\s+(\w+)\((.*)\)\s+= (-?\d+|\?)/;
const STARTED = /^(\d+)\s+(\w+)\((.*) <unfinished \.\.\.>$/;
const RESUMED = /^(\d+)\s+<\.\.\. (\w+) resumed>(.*)\)\s+= (-?\d+|\?)/;

export function readStraceLog(file: string): Syscall[] {
  const calls: Syscall[] = [];
  const open = new Map<number, { name: string; args: string; startedAt: number }>();
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    let m = WHOLE.exec(line);
    if (m !== null) {
      calls.push({ pid: Number(m[1]), name: m[2]!, args: m[3]!, result: Number(m[4]), startedAt: i, endedAt: i });
      return;
    }
    m = STARTED.exec(line);
    if (m !== null) {
      open.set(Number(m[1]), { name: m[2]!, args: m[3]!, startedAt: i });
      return;
    }
    m = RESUMED.exec(line);
    if (m !== null) {
      const begun = open.get(Number(m[1]));
      if (begun === undefined || begun.name !== m[2]) return;
      open.delete(Number(m[1]));
      calls.push({ pid: Number(m[1]), name: m[2]!, args: begun.args + m[3]!, result: Number(m[4]), startedAt: begun.startedAt, endedAt: i });
    }
  });
  // Whole calls are pushed when they return: order everything by its start.
  return calls.sort((a, b) => a.startedAt - b.startedAt);
}

/** The pid of the first process in the log (the one strace started). */
export function firstPid(file: string): number {
  const m = /^(\d+)\s/.exec(readFileSync(file, 'utf8'));
  if (m === null) throw new Error(`no pid in ${file}`);
  return Number(m[1]);
}

const WRITES = new Set(['write', 'pwrite64', 'writev', 'pwritev', 'pwritev2']);
const SYNCS = new Set(['fsync', 'fdatasync']);
const READS = new Set(['read', 'recvfrom', 'recvmsg']);
const SENDS = new Set(['write', 'writev', 'sendto', 'sendmsg']);

function fdOf(call: Syscall): number {
  return Number(/^(\d+)/.exec(call.args)?.[1] ?? -1);
}

interface OpenFile {
  path: string;
  /** Every write through this descriptor reaches the disk before it returns. */
  syncWrites: boolean;
}

export interface RequestCheck {
  /** The request's first line, as logged. */
  request: string;
  /** Writes to the data directory while it was handled (lock file aside). */
  writes: number;
  /** Those not on disk when the reply began, each described. */
  unsynced: string[];
}

/**
 * For every reply that starts with `replyPrefix` (e.g. "HTTP/1.1 201"),
 * pairs it with the last request starting with `requestPrefix` read on the
 * same socket before it, and checks every write made to a file under
 * `dataDir` between the two (LMDB's lock file aside: it holds only the
 * reader table, rebuilt when the environment opens).
 */
export function checkSyncBeforeReply(
  calls: Syscall[],
  dataDir: string,
  requestPrefix: string,
  replyPrefix: string,
  /** The data files whose writes must be synced before a reply (default: all but lock.mdb). */
  covered: (path: string) => boolean = () => true,
): RequestCheck[] {
  const files = new Map<number, OpenFile>();
  const lastRequest = new Map<number, Syscall>();
  const pending: { call: Syscall; file: OpenFile }[] = [];
  const synced = new Set<Syscall>();
  const checks: RequestCheck[] = [];
  const events = [...calls].sort((a, b) => a.endedAt - b.endedAt);
  // Walk the calls in the order they returned; a reply is checked when it
  // begins, against the writes that returned before that.
  const replies = calls.filter((c) => SENDS.has(c.name) && c.args.includes(`"${replyPrefix}`));
  let next = 0;
  const checkRepliesUpTo = (line: number): void => {
    while (next < replies.length && replies[next]!.startedAt <= line) {
      const reply = replies[next++]!;
      const request = lastRequest.get(fdOf(reply));
      if (request === undefined) continue;
      const writes = pending.filter((w) => w.call.endedAt > request.endedAt && w.call.startedAt < reply.startedAt);
      const unsynced = writes
        .filter((w) => !synced.has(w.call) || syncEnd(w.call) > reply.startedAt)
        .map((w) => `${w.call.name} to ${w.file.path} (log line ${w.call.startedAt + 1}) not synced before the reply (line ${reply.startedAt + 1})`);
      checks.push({ request: request.args.slice(0, 80), writes: writes.length, unsynced });
    }
  };
  const syncEnds = new Map<Syscall, number>();
  const syncEnd = (write: Syscall): number => syncEnds.get(write) ?? Number.POSITIVE_INFINITY;
  for (const call of events) {
    checkRepliesUpTo(call.endedAt);
    if (call.result < 0) continue;
    if (call.name === 'openat') {
      const path = /"([^"]*)"/.exec(call.args)?.[1] ?? '';
      files.set(call.result, { path, syncWrites: /O_DSYNC|O_SYNC/.test(call.args) });
    } else if (call.name === 'close') {
      files.delete(fdOf(call));
    } else if (READS.has(call.name) && call.args.includes(`"${requestPrefix}`)) {
      lastRequest.set(fdOf(call), call);
    } else if (WRITES.has(call.name)) {
      const file = files.get(fdOf(call));
      if (file === undefined || !file.path.startsWith(`${dataDir}/`) || file.path.endsWith('/lock.mdb') || !covered(file.path)) continue;
      pending.push({ call, file });
      if (file.syncWrites) {
        synced.add(call);
        syncEnds.set(call, call.endedAt);
      }
    } else if (SYNCS.has(call.name)) {
      const file = files.get(fdOf(call));
      if (file === undefined) continue;
      // A sync covers every write to the same file that had returned before it began.
      for (const w of pending) {
        if (w.file.path === file.path && w.call.endedAt < call.startedAt && !synced.has(w.call)) {
          synced.add(w.call);
          syncEnds.set(w.call, call.endedAt);
        }
      }
    }
  }
  checkRepliesUpTo(Number.POSITIVE_INFINITY);
  return checks;
}
