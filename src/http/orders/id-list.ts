/**
 * The lists of ids a customer request names (batch status, cancel, refill,
 * refill status): at most BATCH_IDS_MAX, each named once. One parser for
 * the query form (`orders=a,b,c`) and one for the body form
 * (`{"orders": [...]}`), shared by every front end.
 */
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { BATCH_IDS_MAX } from '../../ledger/index.js';

export type IdList = { ok: true; ids: string[] } | { ok: false; error: ErrorOutcome };

/** Ids as sent (blank ones dropped, repeats named once), within BATCH_IDS_MAX. */
export function listOf(values: string[], name: string, example: string): IdList {
  if (values.length === 0 || values.every((v) => v === '')) {
    return { ok: false, error: errorOutcome('VALIDATION', `Name at least one id in ${name}, e.g. ${example}.`) };
  }
  const ids = [...new Set(values)];
  if (ids.length > BATCH_IDS_MAX) {
    return { ok: false, error: errorOutcome('VALIDATION', `${name} names ${ids.length} ids; the limit is ${BATCH_IDS_MAX} per request.`) };
  }
  return { ok: true, ids };
}

/** `name=a,b,c` from a query string; the parameter must appear once. */
export function queryIdList(params: URLSearchParams, name: string, example: string): IdList {
  const values = params.getAll(name);
  if (values.length > 1) return { ok: false, error: errorOutcome('VALIDATION', `Pass ${name} once, as a comma-separated list: ${example}.`) };
  return listOf((values[0] ?? '').split(',').map((v) => v.trim()).filter((v) => v !== ''), name, example);
}

/** `{"<name>": [id, …]}` from a JSON body; ids are strings (integers allowed for integer ids). */
export function bodyIdList(body: unknown, name: string, example: string): IdList {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, error: errorOutcome('VALIDATION', 'The request body must be a JSON object.') };
  }
  for (const key of Object.keys(body)) {
    if (key !== name) return { ok: false, error: errorOutcome('VALIDATION', `Field '${key}' is not allowed; send only ${name}.`) };
  }
  const list = (body as Record<string, unknown>)[name];
  if (!Array.isArray(list) || !list.every((v) => typeof v === 'string')) {
    return { ok: false, error: errorOutcome('VALIDATION', `Field '${name}' must be an array of id strings, e.g. ${example}.`) };
  }
  return listOf(list as string[], name, example);
}
