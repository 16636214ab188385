/**
 * The server's log output: lines written to a file descriptor (standard
 * output) through a bounded buffer, so that the access log costs a request
 * no write(2) of its own.
 *
 * Two kinds of line go through it, in the order they are given:
 * - `buffer(line)`, the access log's line per request, waits until
 *   LOG_FLUSH_BYTES are buffered or LOG_FLUSH_DELAY_MS have passed since
 *   the first waiting line, then all go out in one write;
 * - `write(line)`, every other line (pino's destination method: start-up,
 *   warnings, errors, the fail-stop's fatal line), goes out at once, after
 *   the lines waiting before it.
 * The process's exit (`flushAtExit`, called on 'exit') writes what is
 * left, so a clean stop, a fail-stop or process.exit loses no line; a
 * SIGKILL loses the lines still waiting, at most LOG_FLUSH_BYTES of the
 * last LOG_FLUSH_DELAY_MS.
 *
 * When the output is full: a blocking descriptor (a file, a terminal, a
 * pipe or journald's socket as a supervisor hands them over) makes the
 * write wait, as every synchronous logger does, and the buffer never grows
 * past LOG_FLUSH_BYTES. A non-blocking one answers EAGAIN: its bytes are
 * kept and written at the next flush, and once LOG_BUFFER_BYTES_MAX are
 * waiting, new lines are dropped and counted (`droppedLines`, on /metrics
 * as `coa_log_lines_dropped_total`) rather than held without end. An
 * output that is gone (EPIPE, EBADF) drops and counts its lines too: a log
 * line never fails the request or the process that writes it.
 */
import { writeSync } from 'node:fs';
import { LOG_BUFFER_BYTES_MAX, LOG_EXIT_FLUSH_MS, LOG_EXIT_RETRY_MS, LOG_FLUSH_BYTES, LOG_FLUSH_DELAY_MS } from './limits.js';

export interface LogWriterBounds {
  flushBytes: number;
  flushDelayMs: number;
  bufferBytesMax: number;
}

const DEFAULT_BOUNDS: LogWriterBounds = { flushBytes: LOG_FLUSH_BYTES, flushDelayMs: LOG_FLUSH_DELAY_MS, bufferBytesMax: LOG_BUFFER_BYTES_MAX };
const NEWLINE = 0x0a;

export class LogWriter {
  /** Lines dropped since start: the buffer was full while the output refused bytes, or the output was gone. */
  droppedLines = 0;
  private lines: string[] = [];
  private linesBytes = 0;
  /** Bytes a write left unwritten (EAGAIN), written before any line after them. */
  private held: Buffer | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly fd: number,
    private readonly bounds: LogWriterBounds = DEFAULT_BOUNDS,
  ) {}

  /** Bytes waiting to be written. */
  get bufferedBytes(): number {
    return this.linesBytes + (this.held?.length ?? 0);
  }

  /** A line that may wait for the next flush (each ends with a newline). */
  buffer(line: string): void {
    if (!this.append(line)) return;
    // While the output refuses bytes, only the timer tries it again.
    if (this.linesBytes >= this.bounds.flushBytes && this.held === null) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.bounds.flushDelayMs).unref();
  }

  /** A line written at once, after those waiting before it. */
  write(line: string): boolean {
    if (this.append(line)) this.flush();
    return true;
  }

  /** Writes every waiting line the output takes now. */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.lines.length > 0) {
      const joined = Buffer.from(this.lines.join(''));
      this.held = this.held === null ? joined : Buffer.concat([this.held, joined]);
      this.lines = [];
      this.linesBytes = 0;
    }
    if (this.held === null) return;
    const bytes = this.held;
    let offset = 0;
    try {
      while (offset < bytes.length) offset += writeSync(this.fd, bytes, offset);
      this.held = null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
        this.held = bytes.subarray(offset);
        this.timer = setTimeout(() => this.flush(), this.bounds.flushDelayMs).unref();
        return;
      }
      this.droppedLines += countLines(bytes.subarray(offset));
      this.held = null;
    }
  }

  /** Adds a line to those waiting; false when it is dropped because the buffer is full. */
  private append(line: string): boolean {
    const bytes = Buffer.byteLength(line);
    if (this.bufferedBytes + bytes > this.bounds.bufferBytesMax) {
      this.droppedLines++;
      return false;
    }
    this.lines.push(line);
    this.linesBytes += bytes;
    return true;
  }

  /**
   * The last flush, as the process exits: an output that refuses bytes
   * without blocking is retried for up to LOG_EXIT_FLUSH_MS.
   */
  flushAtExit(): void {
    const deadlineMs = Date.now() + LOG_EXIT_FLUSH_MS;
    this.flush();
    while (this.held !== null && Date.now() < deadlineMs) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LOG_EXIT_RETRY_MS);
      this.flush();
    }
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** Complete and partial lines in `bytes`. */
function countLines(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) count++;
  return bytes.length > 0 && bytes[bytes.length - 1] !== NEWLINE ? count + 1 : count;
}
