/**
 * pino, JSON lines with ISO-8601 UTC times (`"time":"2026-01-31T12:00:00.000Z"`),
 * which a person reads and every log shipper parses. Secrets never reach a
 * log line: request headers are never logged, and the redaction list
 * catches the fields that carry them should anything log a whole object by
 * mistake.
 *
 * The server's output is standard output through one buffered writer
 * (log-writer.ts), flushed as the process exits. A line written once per
 * request (the access log) is built by hand (`infoLine`) into the same
 * output: its fields are fixed, so it needs none of pino's serialisation,
 * and it waits in the buffer, where pino's own lines are written at once.
 */
import { pino, type Logger, type DestinationStream } from 'pino';
import { LogWriter } from './log-writer.js';

let stdout: LogWriter | null = null;

/** The writer of standard output, one per process, flushed on the process's exit. */
function stdoutWriter(): LogWriter {
  if (stdout === null) {
    const writer = new LogWriter(1);
    process.on('exit', () => writer.flushAtExit());
    stdout = writer;
  }
  return stdout;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'credit-order-api' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['apiSecret', 'api_secret', 'secret', 'token', 'adminToken', '*.apiSecret', '*.api_secret', '*.secretHash'], censor: '[redacted]' },
  };
  return pino(options, destination ?? stdoutWriter());
}

/** Log lines standard output dropped since start (see LogWriter: a full non-blocking output, or one that is gone). */
export function logLinesDropped(): number {
  return stdout?.droppedLines ?? 0;
}

/**
 * A writer of hand-built lines at info into `log`'s output, with pino's
 * frame (level, ISO time, the logger's bindings, `msg`), or null when `log`
 * does not log at info. The caller gives the fields between the bindings
 * and `msg` as JSON members (`"status":200,"route":"/x"`), every string
 * among them escaped (JSON.stringify).
 */
export function infoLine(log: Logger, msg: string): ((fields: string) => void) | null {
  if (!log.isLevelEnabled('info')) return null;
  const output = (log as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]!;
  const bindings = JSON.stringify(log.bindings()).slice(1, -1);
  const head = `{"level":${log.levels.values['info']},"time":"`;
  const middle = bindings === '' ? '",' : `",${bindings},`;
  const tail = `,"msg":${JSON.stringify(msg)}}\n`;
  if (output instanceof LogWriter) return (fields) => output.buffer(head + isoNow() + middle + fields + tail);
  return (fields) => output.write(head + isoNow() + middle + fields + tail);
}

let isoMs = 0;
let iso = new Date(0).toISOString();

/** Now as ISO-8601 UTC, formatted once per millisecond: many answers of one event-loop turn share it. */
function isoNow(): string {
  const nowMs = Date.now();
  if (nowMs !== isoMs) {
    isoMs = nowMs;
    iso = new Date(nowMs).toISOString();
  }
  return iso;
}

