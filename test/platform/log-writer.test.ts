/**
 * The log's buffered output on real descriptors: lines wait until the
 * flush size and then go out together, a line written at once takes the
 * waiting ones with it in order, and an output that refuses bytes (a
 * non-blocking pipe nobody reads) never makes the buffer grow past its
 * bound: the lines beyond it are dropped and counted, and the rest reach
 * the reader, whole and in order, once it reads again.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LogWriter } from '../../src/platform/log-writer.js';
import { MS_PER_HOUR } from '../../src/platform/units.js';

const dirs: string[] = [];
const fds: number[] = [];
afterEach(() => {
  for (const fd of fds.splice(0)) closeSync(fd);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-log-writer-'));
  dirs.push(dir);
  return dir;
}

/** A line of exactly `bytes` bytes, newline included, that says which it is. */
function line(n: number, bytes = 100): string {
  const head = `{"n":${n},"pad":"`;
  return head + 'x'.repeat(bytes - head.length - 3) + '"}\n';
}

/** Everything readable now from a non-blocking descriptor. */
function drain(fd: number): string {
  const chunk = Buffer.alloc(65_536); // not a limit: a read size
  let text = '';
  for (;;) {
    try {
      const n = readSync(fd, chunk);
      if (n === 0) return text;
      text += chunk.toString('utf8', 0, n);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return text;
      throw error;
    }
  }
}

describe('the log writer', () => {
  it('keeps buffered lines until the flush size, then writes them together; a line written at once takes the waiting ones first', () => {
    const path = join(tempDir(), 'out.log');
    const fd = openSync(path, 'w');
    fds.push(fd);
    // No timer flush within the test: only the size and write() flush.
    const writer = new LogWriter(fd, { flushBytes: 1000, flushDelayMs: MS_PER_HOUR, bufferBytesMax: 4000 });
    for (let n = 0; n < 9; n++) writer.buffer(line(n));
    expect(readFileSync(path, 'utf8')).toBe('');
    expect(writer.bufferedBytes).toBe(900);
    writer.buffer(line(9));
    expect(readFileSync(path, 'utf8')).toBe(Array.from({ length: 10 }, (_, n) => line(n)).join(''));
    expect(writer.bufferedBytes).toBe(0);
    writer.buffer(line(10));
    writer.write('{"fatal":true}\n');
    expect(readFileSync(path, 'utf8').split('\n').slice(-3)).toEqual([line(10).trimEnd(), '{"fatal":true}', '']);
    expect(writer.bufferedBytes).toBe(0);
    expect(writer.droppedLines).toBe(0);
  });

  it('holds at most its bound while a non-blocking pipe refuses bytes, counts the lines beyond it, and delivers the rest whole once the reader reads', () => {
    const fifo = join(tempDir(), 'fifo');
    execFileSync('mkfifo', [fifo]);
    // Read-write, so that opening does not wait for a reader; non-blocking, so that a full pipe answers EAGAIN.
    const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    fds.push(fd);
    const bound = 8000;
    const writer = new LogWriter(fd, { flushBytes: 1000, flushDelayMs: MS_PER_HOUR, bufferBytesMax: bound });
    const given = 2000; // 200,000 bytes: three times what a Linux pipe holds
    let mostBuffered = 0;
    for (let n = 0; n < given; n++) {
      writer.buffer(line(n));
      mostBuffered = Math.max(mostBuffered, writer.bufferedBytes);
    }
    expect(mostBuffered).toBeLessThanOrEqual(bound);
    expect(writer.droppedLines).toBeGreaterThan(0);

    let text = drain(fd);
    writer.flush();
    text += drain(fd);
    writer.flush();
    text += drain(fd);
    expect(writer.bufferedBytes).toBe(0);
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    // Every line that arrived is whole; the arrivals are the first lines given, in order, and with the dropped ones they account for all.
    const numbers = lines.map((l) => (JSON.parse(l) as { n: number }).n);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, n) => n));
    expect(numbers.length + writer.droppedLines).toBe(given);
  });
});
