/**
 * Reads an `strace -f` log into the system calls it records, in the order
 * strace saw them, and checks the durability promise at the level of the
 * system calls: the write of an order's own commit is on disk (an
 * fsync/fdatasync of that file began after the write had finished and
 * completed, or the write went through a descriptor opened with
 * O_DSYNC/O_SYNC) before the server began writing the order's reply.
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
const SENDS = new Set(['write', 'writev', 'sendto', 'sendmsg']);

function fdOf(call: Syscall): number {
  return Number(/^(\d+)/.exec(call.args)?.[1] ?? -1);
}

interface OpenFile {
  path: string;
  /** Every write through this descriptor reaches the disk before it returns. */
  syncWrites: boolean;
}

/** A write to a data file, and the log line where a sync covering it returned (Infinity: never). */
interface DataWrite {
  call: Syscall;
  file: OpenFile;
  syncedAt: number;
}

export interface ReplyCheck {
  /** The order the reply acknowledged. */
  order: string;
  /** The log line where the reply began. */
  replyAt: number;
  /** The first write of the order's target to a covered data file (its own commit), described; null if none was seen. */
  write: string | null;
  /** Whether that write was on disk before the reply began. */
  syncedBefore: boolean;
}

/** Every write to a file under `dataDir` (LMDB's lock file aside), each with the line where a sync covering it returned. */
function dataWrites(events: Syscall[], dataDir: string): DataWrite[] {
  const files = new Map<number, OpenFile>();
  const writes: DataWrite[] = [];
  for (const call of events) {
    if (call.result < 0) continue;
    if (call.name === 'openat') {
      const path = /"([^"]*)"/.exec(call.args)?.[1] ?? '';
      files.set(call.result, { path, syncWrites: /O_DSYNC|O_SYNC/.test(call.args) });
    } else if (call.name === 'close') {
      files.delete(fdOf(call));
    } else if (WRITES.has(call.name)) {
      const file = files.get(fdOf(call));
      if (file === undefined || !file.path.startsWith(`${dataDir}/`) || file.path.endsWith('/lock.mdb')) continue;
      writes.push({ call, file, syncedAt: file.syncWrites ? call.endedAt : Number.POSITIVE_INFINITY });
    } else if (SYNCS.has(call.name)) {
      const file = files.get(fdOf(call));
      if (file === undefined) continue;
      // A sync covers every write to the same file that had returned before it began.
      for (const w of writes) {
        if (w.file.path === file.path && w.call.endedAt < call.startedAt && w.syncedAt === Number.POSITIVE_INFINITY) w.syncedAt = call.endedAt;
      }
    }
  }
  return writes;
}

/**
 * For every reply that starts with `replyPrefix` (e.g. "HTTP/1.1 201") and
 * names an order (`"order":"<id>"` in its body), finds the first write to a
 * covered data file that holds the order's target (`targets`: order id →
 * a target text unique to it). That write belongs to the commit that made
 * the order: a row enters LMDB's pages, or a commit-log record, only in
 * that commit; later commits may rewrite the same page, never earlier ones.
 * The check is whether a sync covering that write had returned before the
 * reply's first byte was sent. This holds with many orders in flight,
 * where the writes between a request and its reply also include later
 * commits, not yet synced, of other orders.
 */
export function checkOwnCommitSynced(
  calls: Syscall[],
  dataDir: string,
  replyPrefix: string,
  targets: ReadonlyMap<string, string>,
  /** The data files whose writes must be synced before a reply (default: all but lock.mdb). */
  covered: (path: string) => boolean = () => true,
): ReplyCheck[] {
  const writes = dataWrites([...calls].sort((a, b) => a.endedAt - b.endedAt), dataDir).filter((w) => covered(w.file.path));
  writes.sort((a, b) => a.call.startedAt - b.call.startedAt);
  const checks: ReplyCheck[] = [];
  for (const reply of calls) {
    if (!SENDS.has(reply.name) || !reply.args.includes(`"${replyPrefix}`)) continue;
    const order = /\\"order\\":\\"([^\\"]+)\\"/.exec(reply.args)?.[1];
    const target = order === undefined ? undefined : targets.get(order);
    if (order === undefined || target === undefined) continue;
    const own = writes.find((w) => w.call.args.includes(target));
    checks.push({
      order,
      replyAt: reply.startedAt + 1,
      write: own === undefined ? null : `${own.call.name} to ${own.file.path} (log line ${own.call.startedAt + 1}, synced by line ${own.syncedAt + 1})`,
      syncedBefore: own !== undefined && own.syncedAt < reply.startedAt,
    });
  }
  return checks;
}
