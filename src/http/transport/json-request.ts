/**
 * Turns request bytes into a JSON value, or into the VALIDATION error a
 * client can act on: wrong content type (415), bytes that are not UTF-8,
 * text that is not JSON (400).
 */
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { inexactNumberProblem } from './exact-numbers.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
const JSON_MEDIA_TYPE = 'application/json';

/** Whether the media type is application/json, in any case, with or without parameters and spaces around it. */
export function isJsonContentType(contentType: string): boolean {
  // What nearly every client sends, recognised without building the three strings of the general case.
  if (contentType === JSON_MEDIA_TYPE) return true;
  const media = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return media === JSON_MEDIA_TYPE;
}

export function parseJson(contentType: string, bytes: Buffer): { ok: true; value: unknown } | { ok: false; error: ErrorOutcome } {
  if (!isJsonContentType(contentType)) {
    return { ok: false, error: errorOutcome('VALIDATION', 'Send the body as JSON with Content-Type: application/json.', undefined, 415) };
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, error: errorOutcome('VALIDATION', 'The request body is not valid UTF-8.') };
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return { ok: false, error: errorOutcome('VALIDATION', 'The request body is not valid JSON.') };
  }
  const inexact = inexactNumberProblem(text);
  if (inexact !== null) return { ok: false, error: errorOutcome('VALIDATION', inexact) };
  return { ok: true, value };
}

export const TOO_LARGE = (bytesMax: number): ErrorOutcome =>
  errorOutcome('VALIDATION', `The request body is larger than the limit of ${bytesMax} bytes.`, { limit: bytesMax }, 413);
