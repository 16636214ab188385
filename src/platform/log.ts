/**
 * pino, JSON lines with ISO-8601 UTC times (`"time":"2026-01-31T12:00:00.000Z"`),
 * which a person reads and every log shipper parses. Secrets never reach a
 * log line: request headers are never logged, and the redaction list
 * catches the fields that carry them should anything log a whole object by
 * mistake.
 */
import { pino, type Logger, type DestinationStream } from 'pino';

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'credit-order-api' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['apiSecret', 'api_secret', 'secret', 'token', 'adminToken', '*.apiSecret', '*.api_secret', '*.secretHash'], censor: '[redacted]' },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
