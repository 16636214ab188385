/**
 * The zero-filled reserve ahead of LMDB's data file: it is kept topped up as
 * group commits use it, it only ever writes past the end of the file (the
 * bytes LMDB wrote are untouched), and a store that used it reopens with
 * every record.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dataFileBytes, FileReserve, LmdbGroupCommit, type WalEntry } from '../../src/wal/index.js';
import { tempStores } from '../helpers/temp-store.js';

const KIB = 1024;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const { open, cleanup } = tempStores('file-reserve');

afterEach(cleanup);

/** A log event with a 1 KiB reason, so that a few thousand of them fill some megabytes. */
function entry(n: number): WalEntry {
  return {
    events: [{ type: 'credits.adjusted', atMs: n, account: 1 + (n % 50), amount: n, reason: `r${n}-`.padEnd(1024, 'x'), balance: n }],
    puts: [{ table: 'wallets', key: 1 + (n % 50), value: { id: 1 + (n % 50), credits: n } }],
  };
}

function fileBytes(dir: string, from: number, length: number): Buffer {
  const fd = openSync(join(dir, 'data.mdb'), 'r');
  try {
    const buffer = Buffer.alloc(length);
    let done = 0;
    while (done < length) done += readSync(fd, buffer, done, length - done, from + done);
    return buffer;
  } finally {
    closeSync(fd);
  }
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe('file reserve', () => {
  it('writes zeros only past the end of the file: every byte LMDB wrote is unchanged', async () => {
    const { store, dir } = open();
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => expect.fail(String(e)) });
    await Promise.all(Array.from({ length: 200 }, (_, i) => wal.append(entry(i))));
    const before = statSync(join(dir, 'data.mdb')).size;
    const written = sha(fileBytes(dir, 0, before));
    const errors: unknown[] = [];
    const reserve = new FileReserve(store, { bytes: 1024 * KIB, chunkBytes: 256 * KIB, onError: (e) => errors.push(e) });
    expect(reserve.fill()).toBe(1024 * KIB);
    const after = dataFileBytes(store);
    expect(after.fileBytes).toBe(before + 1024 * KIB);
    expect(sha(fileBytes(dir, 0, before))).toBe(written);
    expect(fileBytes(dir, before, 1024 * KIB).equals(Buffer.alloc(1024 * KIB))).toBe(true);
    // Full: nothing more to write until commits use some of it.
    expect(reserve.topUp(10)).toBe(0);
    expect(errors).toEqual([]);
    reserve.close();
  });

  it('is topped up at idle moments as group commits use it, and the store reopens with every record', async () => {
    const { store, dir } = open();
    const reserve = new FileReserve(store, { bytes: 2048 * KIB, chunkBytes: 256 * KIB, checkEveryIdle: 1, onError: (e) => expect.fail(String(e)) });
    let idle = 0;
    const wal = new LmdbGroupCommit(store, {
      onFatal: (e) => expect.fail(String(e)),
      onIdle: () => {
        idle++;
        reserve.idle();
      },
    });
    reserve.fill();
    const filledAtStart = reserve.stats().filledBytes;
    const usedAtStart = dataFileBytes(store).usedBytes;
    // About 6 MiB of log, three times the reserve, in bursts of about 200
    // KiB: after each burst nothing is queued to LMDB, so the group commit
    // calls onIdle, and one 256 KiB chunk makes up for the burst.
    const total = 6000;
    for (let from = 0; from < total; from += 200) {
      const acks: Promise<void>[] = [];
      for (let n = from; n < from + 200; n++) {
        acks.push(wal.append(entry(n)));
        if (n % 20 === 19) await turn();
      }
      await Promise.all(acks);
    }
    const { fileBytes: length, usedBytes } = dataFileBytes(store);
    expect(usedBytes - usedAtStart).toBeGreaterThan(4096 * KIB);
    expect(idle).toBeGreaterThanOrEqual(total / 200);
    expect(reserve.stats().filledBytes).toBeGreaterThan(filledAtStart + 2048 * KIB);
    // Topped up to within a chunk of its size (one more commit may have used some since).
    expect(length - usedBytes).toBeGreaterThanOrEqual(2048 * KIB - 2 * 256 * KIB);
    reserve.close();
    await store.close();

    const { store: again } = open(dir);
    const amounts = [...again.log.getRange({})].map(({ value }) => (value as { amount: number }).amount);
    expect(amounts).toEqual(Array.from({ length: total }, (_, n) => n));
    expect(again.tables.wallets.get(1)).toEqual({ id: 1, credits: total - 50 });
  });

  it('reports a failure once and stops, leaving the store as it was', async () => {
    const { store } = open();
    await store.tables.meta.put('x', 1);
    const errors: unknown[] = [];
    const reserve = new FileReserve(store, { bytes: 512 * KIB, chunkBytes: 256 * KIB, onError: (e) => errors.push(e) });
    // Close the reserve's descriptor behind its back: its next write fails (EBADF).
    closeSync((reserve as unknown as { fd: number }).fd);
    expect(reserve.fill()).toBe(0);
    expect(reserve.topUp()).toBe(0);
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/EBADF/);
    await store.tables.meta.put('y', 2);
    expect(store.tables.meta.get('x')).toBe(1);
    expect(store.tables.meta.get('y')).toBe(2);
  });
});

describe('file reserve: its steps', () => {
  it('looks only on every checkEveryIdle-th idle moment, and a top-up writes at most the chunks asked for', () => {
    const { store } = open();
    const reserve = new FileReserve(store, { bytes: 1024 * KIB, chunkBytes: 256 * KIB, checkEveryIdle: 3, onError: (e) => expect.fail(String(e)) });
    expect(reserve.topUp(1)).toBe(256 * KIB);
    expect(reserve.topUp(2)).toBe(512 * KIB);
    reserve.idle();
    reserve.idle();
    expect(reserve.stats()).toEqual({ filledBytes: 768 * KIB });
    reserve.idle();
    expect(reserve.stats()).toEqual({ filledBytes: 1024 * KIB });
    expect(reserve.fill()).toBe(0);
    reserve.close();
    reserve.close();
  });

  it('writes a reserve smaller than a chunk whole, in one step', () => {
    const { store } = open();
    const reserve = new FileReserve(store, { bytes: 100 * KIB, chunkBytes: 256 * KIB, onError: (e) => expect.fail(String(e)) });
    expect(reserve.fill()).toBe(100 * KIB);
    const after = dataFileBytes(store);
    expect(after.fileBytes - after.usedBytes).toBeGreaterThanOrEqual(100 * KIB);
    reserve.close();
  });

  it('refuses a size that is not a positive whole number', () => {
    const { store } = open();
    for (const bytes of [0, 1.5]) {
      let message = 'nothing thrown';
      try {
        new FileReserve(store, { bytes, onError: () => {} });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toBe(`invariant: a file reserve needs a positive size; got ${bytes}`);
    }
  });

  it('a data file it cannot open is reported once, and the reserve stays off', () => {
    const { store } = open();
    const errors: unknown[] = [];
    const reserve = new FileReserve({ ...store, path: join(store.path, 'missing') }, { bytes: 256 * KIB, onError: (e) => errors.push(e) });
    expect(reserve.fill()).toBe(0);
    expect(reserve.topUp()).toBe(0);
    expect(errors).toHaveLength(1);
    expect((errors[0] as { code?: string }).code).toBe('ENOENT');
    reserve.close();
  });
});

describe('WAL_PREALLOCATE_MB', () => {
  it('defaults to 64 MiB, takes 0 to turn the reserve off, and refuses anything else with a sentence naming it', async () => {
    const { loadConfig } = await import('../../src/app/config.js');
    expect(loadConfig([], {}).walPreallocateMb).toBe(64);
    expect(loadConfig([], { WAL_PREALLOCATE_MB: '0' }).walPreallocateMb).toBe(0);
    expect(loadConfig(['--wal-preallocate-mb', '8'], {}).walPreallocateMb).toBe(8);
    for (const bad of ['-1', '1.5', 'lots', '65537']) {
      expect(() => loadConfig([], { WAL_PREALLOCATE_MB: bad })).toThrow(/^WAL_PREALLOCATE_MB \(--wal-preallocate-mb\) must be an integer from 0 to 65536/);
    }
  });

  it('sizes the reserve of a running server, and 0 leaves the data file as LMDB grows it', async () => {
    const { withServer } = await import('../helpers/server.js');
    for (const mb of [2, 0]) {
      await withServer({ config: { walPreallocateMb: mb } }, async (t) => {
        const { file_bytes: file, used_bytes: used } = (await t.admin('GET', '/admin/v1/stats')).body.storage;
        if (mb === 0) expect(file).toBe(used);
        // Start-up filled it; the start-up commits since may have used less than a chunk (1 MiB).
        else expect(file - used).toBeGreaterThan((mb - 1) * 1024 * 1024);
      });
    }
  });
});
