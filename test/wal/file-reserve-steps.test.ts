/**
 * The file reserve's guards, seen through a store whose write transactions
 * the test watches: a full reserve takes no write lock, a reserve filled by
 * another writer between its look and its lock writes nothing more, the
 * start-up fill syncs what it wrote (and only then), a failed sync is
 * reported once and turns the reserve off, and a closed reserve does nothing.
 */
import { closeSync, fstatSync, openSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { dataFileBytes, FileReserve, type Store } from '../../src/wal/index.js';
import { tempStores } from '../helpers/temp-store.js';

const KIB = 1024;
const { open, cleanup } = tempStores('file-reserve-steps');

afterEach(cleanup);

type Transaction = (run: () => number, call: number) => number;

/** The store with its write transactions passed through `transaction`, which counts them. */
function watched(store: Store, transaction: Transaction): { store: Store; calls: () => number } {
  let calls = 0;
  const root = {
    getStats: () => store.root.getStats(),
    transactionSync: (run: () => number) => transaction(() => store.root.transactionSync(run), ++calls),
  };
  return { store: { ...store, root: root as unknown as Store['root'] }, calls: () => calls };
}

const fdOf = (reserve: FileReserve): number => (reserve as unknown as { fd: number }).fd;
const setFd = (reserve: FileReserve, fd: number): void => {
  (reserve as unknown as { fd: number }).fd = fd;
};

describe('file reserve: guards', () => {
  it('takes a reserve of one byte', () => {
    const { store } = open();
    const reserve = new FileReserve(store, { bytes: 1, onError: (e) => expect.fail(String(e)) });
    expect(reserve.fill()).toBe(1);
    reserve.close();
  });

  it('a full reserve takes no write transaction', () => {
    const { store: plain } = open();
    const { store, calls } = watched(plain, (run) => run());
    const reserve = new FileReserve(store, { bytes: 512 * KIB, chunkBytes: 256 * KIB, onError: (e) => expect.fail(String(e)) });
    expect(reserve.fill()).toBe(512 * KIB);
    expect(calls()).toBe(2);
    expect(reserve.topUp(5)).toBe(0);
    expect(calls()).toBe(2);
    reserve.close();
  });

  it('writes nothing when another writer filled the reserve between its look and its write lock', () => {
    const { store: plain } = open();
    const other = new FileReserve(plain, { bytes: 512 * KIB, chunkBytes: 256 * KIB, onError: (e) => expect.fail(String(e)) });
    const { store } = watched(plain, (run) => {
      expect(other.fill()).toBe(512 * KIB);
      return run();
    });
    const reserve = new FileReserve(store, { bytes: 512 * KIB, chunkBytes: 256 * KIB, onError: (e) => expect.fail(String(e)) });
    expect(reserve.topUp(1)).toBe(0);
    const { fileBytes, usedBytes } = dataFileBytes(plain);
    expect(fileBytes - usedBytes).toBe(512 * KIB);
    other.close();
    reserve.close();
  });

  it('the fill syncs what it wrote: a failed sync is reported once and turns the reserve off', () => {
    const { store: plain } = open();
    const devNull = openSync('/dev/null', 'r+');
    let reserve: FileReserve | null = null;
    // The first chunk goes to the data file; then the reserve's descriptor
    // is one that cannot be synced (EINVAL), and the next look finds nothing to write.
    const { store, calls } = watched(plain, (run, call) => {
      if (call > 1) return 0;
      const n = run();
      closeSync(fdOf(reserve!));
      setFd(reserve!, devNull);
      return n;
    });
    const errors: unknown[] = [];
    reserve = new FileReserve(store, { bytes: 512 * KIB, chunkBytes: 256 * KIB, onError: (e) => errors.push(e) });
    expect(reserve.fill()).toBe(256 * KIB);
    expect(errors.map((e) => (e as { code?: string }).code)).toEqual(['EINVAL']);
    expect(reserve.topUp()).toBe(0);
    expect(calls()).toBe(2);
    expect(errors).toHaveLength(1);
    reserve.close();
  });

  it('the fill does not sync when it wrote nothing', () => {
    const { store: plain } = open();
    const devNull = openSync('/dev/null', 'r+');
    const { store } = watched(plain, () => 0);
    const errors: unknown[] = [];
    const reserve = new FileReserve(store, { bytes: 512 * KIB, chunkBytes: 256 * KIB, onError: (e) => errors.push(e) });
    closeSync(fdOf(reserve));
    setFd(reserve, devNull);
    expect(reserve.fill()).toBe(0);
    expect(errors).toEqual([]);
    reserve.close();
  });

  it('a failure after some chunks is reported once, and what was written is not synced through the failed descriptor', () => {
    const { store: plain } = open();
    let reserve: FileReserve | null = null;
    const { store } = watched(plain, (run, call) => {
      if (call === 2) closeSync(fdOf(reserve!));
      return run();
    });
    const errors: unknown[] = [];
    reserve = new FileReserve(store, { bytes: 1024 * KIB, chunkBytes: 256 * KIB, onError: (e) => errors.push(e) });
    expect(reserve.fill()).toBe(256 * KIB);
    expect(errors.map((e) => (e as { code?: string }).code)).toEqual(['EBADF']);
  });

  it('a reserve closed during its fill does not sync and reports nothing', () => {
    const { store: plain } = open();
    let reserve: FileReserve | null = null;
    const { store } = watched(plain, (run) => {
      const n = run();
      reserve!.close();
      return n;
    });
    const errors: unknown[] = [];
    reserve = new FileReserve(store, { bytes: 512 * KIB, chunkBytes: 256 * KIB, onError: (e) => errors.push(e) });
    expect(reserve.fill()).toBe(256 * KIB);
    expect(errors).toEqual([]);
  });

  it('closes its descriptor, and a closed reserve writes nothing and reports nothing', () => {
    const { store } = open();
    const errors: unknown[] = [];
    const reserve = new FileReserve(store, { bytes: 512 * KIB, chunkBytes: 256 * KIB, onError: (e) => errors.push(e) });
    const fd = fdOf(reserve);
    reserve.close();
    expect(() => fstatSync(fd)).toThrow(/EBADF/);
    expect(reserve.topUp()).toBe(0);
    expect(reserve.fill()).toBe(0);
    const { fileBytes, usedBytes } = dataFileBytes(store);
    expect(fileBytes).toBe(usedBytes);
    expect(errors).toEqual([]);
  });
});
