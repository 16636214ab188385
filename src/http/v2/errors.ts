/**
 * API v2's errors: HTTP 200 with `{"error": "<sentence>"}`; clients read the
 * body, not the status. Where panels have a settled phrase for an outcome,
 * that exact phrase is used, because reseller scripts compare against it
 * (`if ($result->error == 'Incorrect order ID')`); every other outcome keeps
 * the v1 sentence. The README's API v2 error table lists the same phrases
 * (test/http/v2.test.ts checks each one over HTTP).
 */
import { ERRORS, type ErrorCode, type ErrorOutcome } from '../../errors/index.js';
import { assert } from '../../platform/index.js';
import type { Answer } from '../transport/answer.js';
import type { ErrorDialect } from '../transport/reply.js';

/** The dialect's phrases for the v1 codes that have one. */
export const V2_PHRASES: Partial<Record<ErrorCode, string>> = {
  AUTH: 'Invalid API key',
  BALANCE: 'Not enough funds on balance',
  SERVICE: 'Incorrect service ID',
  NOT_FOUND: 'Incorrect order ID',
};

/** Missing or unknown `action`. */
export const INCORRECT_REQUEST = 'Incorrect request';
export const INCORRECT_ORDER_ID = 'Incorrect order ID';
export const INCORRECT_REFILL_ID = 'Incorrect refill ID';

/** Panels' phrase for an out-of-range quantity: which bound it broke. */
export function quantityPhrase(quantity: number | null, min: number, max: number): string {
  return quantity !== null && quantity > max ? `Quantity more than maximal ${max}` : `Quantity less than minimal ${min}`;
}

/**
 * A v1 sentence with its field names as this dialect spells them: the
 * sentences quote a field as 'name', and the only field the dialects name
 * differently is v1's 'target', v2's 'link'.
 */
export function inV2Names(sentence: string): string {
  return sentence.replaceAll("'target'", "'link'");
}

/** The sentence a v2 client gets for an error outcome. */
export function v2Sentence(error: Pick<ErrorOutcome, 'code' | 'message' | 'extra'>, quantity: number | null): string {
  if (error.code === 'QTY' && error.extra?.['min'] !== undefined) {
    return quantityPhrase(quantity, Number(error.extra['min']), Number(error.extra['max']));
  }
  return V2_PHRASES[error.code] ?? inV2Names(error.message);
}

export function renderV2Error(sentence: string): string {
  return `{"error":${JSON.stringify(sentence)}}`;
}

/**
 * The error dialect of one API v2 request, set on its exchange so that every
 * error is told this way, whoever sends it. An order's quantity, once read,
 * picks the QTY sentence.
 */
export class V2Errors implements ErrorDialect {
  /** The order's quantity, when the request is an order. */
  quantity: number | null = null;

  errorAnswer(error: ErrorOutcome): Answer {
    return { status: 200, body: renderV2Error(v2Sentence(error, this.quantity)) };
  }
}

/** The code, message and bounds of a stored v1 error body (written by renderError). */
export function storedError(body: string): Pick<ErrorOutcome, 'code' | 'message' | 'extra'> {
  const parsed = JSON.parse(body) as { error: string; message: string; min?: number; max?: number };
  assert(parsed.error in ERRORS, 'a stored error code is in the catalogue', parsed.error);
  const extra = parsed.min === undefined || parsed.max === undefined ? undefined : { min: parsed.min, max: parsed.max };
  return { code: parsed.error as ErrorCode, message: parsed.message, ...(extra === undefined ? {} : { extra }) };
}
