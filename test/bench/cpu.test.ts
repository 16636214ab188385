/**
 * bench:cpu's arithmetic and its naming of threads. The benchmark is the
 * figure of record for the CPU an order costs: a thread counted in the wrong
 * class, a ratio inverted or paired across rounds, or a figure divided by
 * every answer instead of the acknowledged ones would move the issue's
 * targets without any change to the server.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cpuByClass, describeAgainst, runFigures, targetRatios, variantFigures, type CpuRun } from '../../bench/http/cpu-figures.js';
import { figuresTable } from '../../bench/http/cpu-report.js';
import { concernShares } from '../../bench/http/profile-concerns.js';
import { classOf, parseGdbStacks, roleOf, ROLE_LOOP, ROLE_POOL } from '../../bench/http/thread-classes.js';

/** Three threads of a Node 20 server as `gdb -batch -ex 'thread apply all bt -4'` prints them (frames shortened). */
const GDB_OUTPUT = `[New LWP 28957]
Thread 11 (Thread 0x7f718d7bc6c0 (LWP 28966) "node"):
#5  0x00000000018bb4a9 in uv_cond_wait (cond=cond@entry=0x566f9a0 <cond>, mutex=mutex@entry=0x566f960 <mutex>) at ../deps/uv/src/unix/thread.c:793
#6  0x00000000018a7bdc in worker (arg=0x0) at ../deps/uv/src/threadpool.c:76
#7  0x00007f71b5fc71f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442

Thread 6 (Thread 0x7f71af7fe6c0 (LWP 28961) "node"):
#6  0x0000000000d32c5b in node::(anonymous namespace)::PlatformWorkerThread(void*) ()
#7  0x00007f71b5fc71f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442

Thread 2 (Thread 0x7f71b5f3d6c0 (LWP 28957) "node"):
#3  0x0000000000d37bf0 in node::WorkerThreadsTaskRunner::DelayedTaskScheduler::Start()::{lambda(void*)#1}::_FUN(void*) ()

Thread 1 (Thread 0x7f71b6429c80 (LWP 28956) "node"):
#3  0x0000000000bbbbe6 in node::SpinEventLoopInternal(node::Environment*) ()
[Inferior 1 (process 28956) detached]
`;

function run(overrides: Partial<CpuRun>): CpuRun {
  return {
    variant: 'durable',
    round: 1,
    wallS: 8,
    loadS: 8,
    acknowledged: 80_000,
    serverUs: { 'event loop': 4_000_000, 'thread pool': 1_600_000, rest: 400_000 },
    loadgenUs: 2_400_000,
    selfUs: 100_000,
    machineUs: 10_000_000,
    entries: 80_000,
    commits: 5_000,
    ...overrides,
  };
}

describe('which thread is which', () => {
  it('names Node 20 threads, all called "node", by the functions gdb finds at the bottom of their stacks', () => {
    const stacks = parseGdbStacks(GDB_OUTPUT);
    expect([...stacks.keys()].sort()).toEqual([28956, 28957, 28961, 28966]);
    const role = (tid: number): string => roleOf(28956, tid, 'node', stacks.get(tid));
    expect(role(28956)).toBe(ROLE_LOOP);
    expect(role(28966)).toBe(ROLE_POOL);
    expect(role(28961)).toBe('V8 platform worker');
    expect(role(28957)).toBe('V8 delayed-task scheduler');
    expect([28956, 28966, 28961, 28957].map((tid) => classOf(role(tid)))).toEqual(['event loop', 'thread pool', 'rest', 'rest']);
  });

  it('names threads by their comm where the runtime names them, and leaves a bare "node" unidentified in the rest', () => {
    expect(classOf(roleOf(100, 101, 'libuv-worker'))).toBe('thread pool');
    expect(roleOf(100, 102, 'V8Worker')).toBe('V8 platform worker');
    expect(roleOf(100, 103, 'node')).toBe('unidentified');
    expect(classOf(roleOf(100, 103, 'node'))).toBe('rest');
    // The main thread is the one whose id is the process's, whatever its name.
    expect(classOf(roleOf(100, 100, 'MainThread'))).toBe('event loop');
  });

  it('adds each thread\'s scheduler time to its class, a thread born during the run from zero', () => {
    const roles = new Map([
      [100, ROLE_LOOP],
      [101, ROLE_POOL],
      [102, 'V8 platform worker'],
    ]);
    const before = [
      { tid: 100, comm: 'node', runNs: 5_000_000 },
      { tid: 101, comm: 'node', runNs: 1_000_000 },
    ];
    const after = [
      { tid: 100, comm: 'node', runNs: 9_000_000 },
      { tid: 101, comm: 'node', runNs: 1_500_000 },
      { tid: 102, comm: 'node', runNs: 250_000 },
      { tid: 103, comm: 'node', runNs: 50_000 },
    ];
    expect(cpuByClass(roles, before, after)).toEqual({ 'event loop': 4000, 'thread pool': 500, rest: 300 });
  });
});

describe('what a run works out to', () => {
  it('divides the server\'s CPU by the acknowledged requests, per class and in total, and leaves the server, wrk and the bench out of "other"', () => {
    const f = runFigures(run({}));
    expect(f.perSecond).toBe(10_000);
    expect(f.perRequestUs).toEqual({ 'event loop': 50, 'thread pool': 20, rest: 5, total: 75 });
    expect(f.loadgenPerRequestUs).toBe(30);
    expect(f.loadgenPct).toBe(30);
    // 10 s of busy CPU in 8 s: 6 s server, 2.4 s wrk, 0.1 s bench; 1.5 s others = 18.75% of a core.
    expect(f.otherPct).toBeCloseTo(18.75, 10);
    expect(f.entriesPerCommit).toBe(16);
    expect(runFigures(run({ entries: null, commits: null })).entriesPerCommit).toBeNull();
  });

  it('pairs the ratios by round: a round that ran slow on both sides does not move them', () => {
    const runs = [
      run({ variant: 'bare uWS', round: 1, acknowledged: 160_000, serverUs: { 'event loop': 2_400_000, 'thread pool': 0, rest: 0 }, entries: null, commits: null }),
      run({ variant: 'durable', round: 1 }),
      run({ variant: 'no-sync', round: 1, acknowledged: 100_000 }),
      // Round 2: the machine was busier, and every variant ran half as fast at the same CPU per request.
      run({ variant: 'bare uWS', round: 2, acknowledged: 80_000, serverUs: { 'event loop': 1_200_000, 'thread pool': 0, rest: 0 }, entries: null, commits: null }),
      run({ variant: 'durable', round: 2, acknowledged: 40_000, serverUs: { 'event loop': 2_000_000, 'thread pool': 800_000, rest: 200_000 } }),
      run({ variant: 'no-sync', round: 2, acknowledged: 50_000 }),
    ];
    const bare = variantFigures('bare uWS', runs);
    expect(bare.perRequestUs.total.mean).toBe(15);
    const r = targetRatios(bare, variantFigures('durable', runs), variantFigures('no-sync', runs));
    expect(r.serverCpu!.ratio).toBeCloseTo(5, 10);
    expect(r.loopCpu!.ratio).toBeCloseTo(50 / 15, 10);
    expect(r.durableOverNoSync!.ratio).toBeCloseTo(0.8, 10);
    expect(r.orderOverBare!.ratio).toBeCloseTo(0.5, 10);
    expect(r.orderOverBare!.rounds).toBe(2);
    expect(r.orderOverBare!.se).toBeCloseTo(0, 10);
    expect(targetRatios(bare, variantFigures('durable', runs), null).durableOverNoSync).toBeNull();
  });

  it('says whether a ratio meets its target in the direction the target runs', () => {
    expect(describeAgainst({ ratio: 2.9, se: 0.04, rounds: 3 }, true, 3)).toBe('2.90 ± 0.04 (met)');
    expect(describeAgainst({ ratio: 3.1, se: 0.04, rounds: 3 }, true, 3)).toBe('3.10 ± 0.04 (not met)');
    expect(describeAgainst({ ratio: 0.84, se: 0.01, rounds: 3 }, false, 0.85)).toBe('0.84 ± 0.01 (not met)');
    expect(describeAgainst(null, false, 0.85)).toBe('n/a');
  });

  it('prints n/a for the thread pool when the pool could not be told apart from the rest', () => {
    const table = figuresTable([variantFigures('durable', [run({})])], false);
    expect(table.split('\n')[2]).toMatch(/^\| durable \| 1 \| 10,000 ± 0 \| \*\*75\.0 ± 0\.0\*\* \| 50\.0 ± 0\.0 \| n\/a \| 5\.0 ± 0\.0 \| 16\.0 \|/);
  });
});

describe('the main thread\'s time by concern', () => {
  /** A profile of four 1 ms samples: msgpack under an lmdb-js put, lmdb-js itself, a uWS call from the transport, app code the transport called. */
  function profileFile(): string {
    const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({ id, callFrame: { functionName, url, lineNumber: 0, columnNumber: 0 }, children });
    const app = 'file:///srv/dist/src';
    const nm = 'file:///srv/node_modules';
    const nodes = [
      frame(1, '(root)', '', [2, 6, 8]),
      frame(2, 'queue', `${app}/wal/group-commit.js`, [3]),
      frame(3, 'put', `${nm}/lmdb/write.js`, [4, 5]),
      frame(4, 'pack', `${nm}/msgpackr/pack.js`),
      frame(5, 'writeInstructions', `${nm}/lmdb/write.js`),
      frame(6, 'write', `${app}/http/transport/reply.js`, [7]),
      frame(7, 'answered', `${app}/ops/metrics-observer.js`),
      frame(8, '(idle)', ''),
    ];
    const dir = mkdtempSync(join(tmpdir(), 'cpu-test-profile-'));
    const file = join(dir, 'p.cpuprofile');
    // Each sample lasts until the next one: 1 ms apiece, the last one (idle) ends the profile.
    writeFileSync(file, JSON.stringify({ nodes, startTime: 0, endTime: 6000, samples: [4, 5, 6, 7, 8, 8], timeDeltas: [0, 1000, 1000, 1000, 1000, 1000] }));
    return file;
  }

  it('gives a sample to the innermost library below it, and to the transport only for the transport\'s own time', () => {
    const file = profileFile();
    const shares = concernShares(file, null);
    rmSync(dirname(file), { recursive: true, force: true });
    const pct = (name: string): number | undefined => shares.find((s) => s.name.startsWith(name))?.pct;
    expect(pct('msgpack')).toBe(25);
    expect(pct('lmdb-js')).toBe(25);
    expect(pct('uWS calls')).toBe(25);
    expect(pct("the app's own code, src/ops")).toBe(25);
    // Idle time is not busy time.
    expect(shares.reduce((sum, s) => sum + s.pct, 0)).toBe(100);
  });
});
