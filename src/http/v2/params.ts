/**
 * The parameters of an API v2 request: `key`, `action` and the action's
 * fields, from the query string and from a body that is form-encoded (what
 * PHP's curl sends for a string of fields), multipart (curl with an array
 * of fields) or JSON. Body fields win over query fields of the same name and
 * a repeated name keeps its last value, as PHP's `$_REQUEST` does, so
 * scripts written against PHP panels see the same meaning here.
 *
 * Decoding is strict: a malformed percent escape or bytes that are not UTF-8
 * refuse the request instead of being replaced by U+FFFD and stored altered.
 */
import { LIST_INPUT_FIELDS } from '../../ledger/index.js';
import { inexactNumberProblem } from '../transport/exact-numbers.js';
import { isJsonContentType } from '../transport/json-request.js';
import { multipartBoundary, parseMultipart } from './multipart.js';
import { V2_FIELDS_MAX } from '../limits.js';

export type V2Params = Map<string, string>;
export type ParamsResult = { ok: true; params: V2Params } | { ok: false; message: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `a=1&b=x+y` into pairs; null when an escape is malformed or decodes to invalid UTF-8. */
export function parseFormEncoded(text: string, into: V2Params): boolean {
  if (text === '') return true;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const rawValue = eq === -1 ? '' : pair.slice(eq + 1);
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(rawName.replaceAll('+', ' '));
      value = decodeURIComponent(rawValue.replaceAll('+', ' '));
    } catch {
      return false;
    }
    into.set(name, value);
    if (into.size > V2_FIELDS_MAX) return false;
  }
  return true;
}

/** The id lists, which a form carries separated by commas. */
const ID_LIST_FIELDS: readonly string[] = ['orders', 'refills'];
/** Every field a JSON body may send as an array. */
const ARRAY_FIELDS = [...ID_LIST_FIELDS, ...LIST_INPUT_FIELDS].join(', ');

/**
 * A JSON array as the text a form would carry: ids joined with commas; the
 * lines of an order's list joined with line breaks, each item one line (an
 * item holding a line break would be counted, and charged, as two).
 * Elsewhere an array is refused: joining it would change what is ordered.
 */
function arrayAsText(name: string, items: unknown[]): { ok: true; text: string } | { ok: false; message: string } {
  const lines = (LIST_INPUT_FIELDS as readonly string[]).includes(name);
  if (!lines && !ID_LIST_FIELDS.includes(name)) return { ok: false, message: `Field '${name}' must be a string or a number; only ${ARRAY_FIELDS} take a list.` };
  if (!items.every(isScalar)) return { ok: false, message: `Field '${name}' must be a list of strings or numbers.` };
  if (!lines) return { ok: true, text: items.map(String).join(',') };
  const broken = items.findIndex((item) => /[\r\n]/.test(String(item)));
  if (broken >= 0) return { ok: false, message: `Item ${broken + 1} of '${name}' holds a line break; send one line per item.` };
  return { ok: true, text: items.map(String).join('\n') };
}

/**
 * A JSON body: an object whose values are strings, numbers or booleans (as
 * text, the way a form would carry them), or arrays where the dialect has
 * lists (arrayAsText).
 */
function parseJsonBody(bytes: Buffer, into: V2Params): string | null {
  let value: unknown;
  let text: string;
  try {
    text = utf8.decode(bytes);
    value = JSON.parse(text);
  } catch {
    return 'The request body is not valid JSON.';
  }
  const inexact = inexactNumberProblem(text);
  if (inexact !== null) return inexact;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'The JSON body must be an object of fields.';
  const entries = Object.entries(value);
  if (entries.length > V2_FIELDS_MAX) return `Send at most ${V2_FIELDS_MAX} fields.`;
  for (const [name, field] of entries) {
    if (Array.isArray(field)) {
      const list = arrayAsText(name, field);
      if (!list.ok) return list.message;
      into.set(name, list.text);
      continue;
    }
    if (!isScalar(field)) return `Field '${name}' must be a string or a number.`;
    into.set(name, String(field));
  }
  return null;
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** The request's parameters: query first, then the body (POST only; `body` is null for GET). */
export function parseV2Params(query: string, contentType: string, body: Buffer | null): ParamsResult {
  const params: V2Params = new Map();
  if (!parseFormEncoded(query, params)) return { ok: false, message: 'The query string is malformed.' };
  if (body === null || body.length === 0) return { ok: true, params };
  const media = contentType.split(';', 1)[0]!.trim().toLowerCase();
  if (media === 'application/x-www-form-urlencoded' || media === '') {
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      return { ok: false, message: 'The request body is not valid UTF-8.' };
    }
    if (!parseFormEncoded(text, params)) return { ok: false, message: 'The form-encoded body is malformed.' };
    return { ok: true, params };
  }
  if (media === 'multipart/form-data') {
    const boundary = multipartBoundary(contentType);
    if (boundary === null) return { ok: false, message: 'A multipart body needs a boundary in its Content-Type.' };
    const parsed = parseMultipart(body, boundary, V2_FIELDS_MAX);
    if (!parsed.ok) return parsed;
    for (const [name, value] of parsed.fields) params.set(name, value);
    if (params.size > V2_FIELDS_MAX) return { ok: false, message: `Send at most ${V2_FIELDS_MAX} fields.` };
    return { ok: true, params };
  }
  if (isJsonContentType(contentType)) {
    const problem = parseJsonBody(body, params);
    return problem === null ? { ok: true, params } : { ok: false, message: problem };
  }
  return {
    ok: false,
    message: 'Send the fields form-encoded (application/x-www-form-urlencoded), as multipart/form-data, as JSON, or in the query string.',
  };
}
