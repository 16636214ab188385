/**
 * The batch answers of API v1 (status, cancel and refill for many ids at
 * once): one item per id asked for, each a record or a refusal.
 */

/** A per-order (or per-refill) refusal inside a batch answer. */
export function renderItemError(error: { code: string; message: string }): string {
  return `{"error":"${error.code}","message":${JSON.stringify(error.message)}}`;
}

/** `{"ok":true,"<field>":{"<id>":<item>,…}}`: a batch answer keyed by the ids asked for. */
export function renderBatch(field: string, items: Iterable<[string | number, string]>): string {
  const parts: string[] = [];
  for (const [id, item] of items) parts.push(`${JSON.stringify(String(id))}:${item}`);
  return `{"ok":true,"${field}":{${parts.join(',')}}}`;
}
