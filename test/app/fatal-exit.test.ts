/**
 * The fail-stop's exit waits for LMDB's write thread to settle what it was
 * handed (committed, and flushed where LMDB flushes behind its commits), at
 * most a bound, so that the process exits with status 1 rather than dying
 * in lmdb-js's native teardown under a running write thread.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { exitWhenStoreSettles } from '../../src/app/fatal-exit.js';
import { FATAL_SETTLE_MS } from '../../src/app/limits.js';
import { tempStores } from '../helpers/temp-store.js';

interface Deferred {
  promise: Promise<boolean>;
  resolve(): void;
  reject(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: () => void;
  const promise = new Promise<boolean>((ok, fail) => {
    resolve = () => ok(true);
    reject = () => fail(new Error('EIO: i/o error, fdatasync'));
  });
  return { promise, resolve, reject };
}

/** Timers whose single callback the test fires by hand, with the bound it was given. */
function manualTimers(): { setTimeout(callback: () => void, ms: number): void; fire(): void; boundMs: number | null } {
  let pending: (() => void) | null = null;
  const timers = {
    boundMs: null as number | null,
    setTimeout(callback: () => void, ms: number) {
      pending = callback;
      timers.boundMs = ms;
    },
    fire() {
      pending?.();
    },
  };
  return timers;
}

const turns = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

function fakeStore(syncMode: 'commit' | 'overlapping' | 'log', committed: Deferred, flushed: Deferred) {
  return { syncMode, root: { committed: committed.promise, flushed: flushed.promise } } as never;
}

describe('the fail-stop exit', () => {
  const stores = tempStores('coa-fatal-exit');
  afterEach(() => stores.cleanup());

  it('exits with status 1 at once when no store is open yet', () => {
    const codes: number[] = [];
    exitWhenStoreSettles(null, (code) => codes.push(code), FATAL_SETTLE_MS, manualTimers());
    expect(codes).toEqual([1]);
  });

  it("in sync mode 'commit', waits for the handed commits and exits once they settle, also when they fail", async () => {
    for (const settle of ['resolve', 'reject'] as const) {
      const committed = deferred();
      const codes: number[] = [];
      const timers = manualTimers();
      exitWhenStoreSettles(fakeStore('commit', committed, deferred()), (code) => codes.push(code), FATAL_SETTLE_MS, timers);
      await turns();
      expect(codes, settle).toEqual([]);
      committed[settle]();
      await turns();
      expect(codes, settle).toEqual([1]);
      timers.fire();
      expect(codes, `${settle}: one exit, not two`).toEqual([1]);
    }
  });

  it('where LMDB flushes behind its commits, waits for the flush too', async () => {
    for (const mode of ['overlapping', 'log'] as const) {
      const committed = deferred();
      const flushed = deferred();
      const codes: number[] = [];
      exitWhenStoreSettles(fakeStore(mode, committed, flushed), (code) => codes.push(code), FATAL_SETTLE_MS, manualTimers());
      committed.resolve();
      await turns();
      expect(codes, mode).toEqual([]);
      flushed.reject();
      await turns();
      expect(codes, mode).toEqual([1]);
    }
  });

  it('exits after FATAL_SETTLE_MS when the disk never answers', async () => {
    const codes: number[] = [];
    const timers = manualTimers();
    exitWhenStoreSettles(fakeStore('log', deferred(), deferred()), (code) => codes.push(code), FATAL_SETTLE_MS, timers);
    await turns();
    expect(codes).toEqual([]);
    expect(timers.boundMs).toBe(FATAL_SETTLE_MS);
    timers.fire();
    expect(codes).toEqual([1]);
  });

  it('on a real store, exits only after the write handed to LMDB has committed', async () => {
    const { store } = stores.open();
    const events: string[] = [];
    const write = store.tables.meta.put('fatal-exit', 1).then(() => events.push('committed'));
    exitWhenStoreSettles(store, () => events.push('exit'), FATAL_SETTLE_MS, manualTimers());
    await write;
    await turns();
    expect(events).toEqual(['committed', 'exit']);
  });
});
