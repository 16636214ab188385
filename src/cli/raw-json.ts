/**
 * Reads pieces of a JSON text without parsing their numbers, so `--json`
 * output assembled from several responses (`order list --all`) keeps every
 * digit exactly as the server sent it. Only used on text that JSON.parse
 * already accepted, so it does not validate.
 */

function skipWhitespace(text: string, i: number): number {
  while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  return i;
}

/** `i` is at an opening quote; returns the index just past the closing one. */
function skipString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return text.length;
}

/** `i` is at the first character of a value; returns the index just past it. */
function skipValue(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return skipString(text, i);
  if (first === '{' || first === '[') {
    let depth = 0;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        i = skipString(text, i);
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return text.length;
  }
  // A number, true, false or null: runs until a delimiter.
  while (i < text.length && !',}] \t\n\r'.includes(text[i]!)) i++;
  return i;
}

/**
 * The exact text of member `key` of the top-level object, or undefined.
 * With a duplicated key the last one wins, as with JSON.parse.
 */
export function rawMember(text: string, key: string): string | undefined {
  let i = skipWhitespace(text, 0);
  if (text[i] !== '{') return undefined;
  i = skipWhitespace(text, i + 1);
  let found: string | undefined;
  while (text[i] === '"') {
    const keyEnd = skipString(text, i);
    const name = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWhitespace(text, keyEnd);
    if (text[i] !== ':') return found;
    const start = skipWhitespace(text, i + 1);
    const end = skipValue(text, start);
    if (name === key) found = text.slice(start, end);
    i = skipWhitespace(text, end);
    if (text[i] !== ',') break;
    i = skipWhitespace(text, i + 1);
  }
  return found;
}

/** The elements of a JSON array's text, without the brackets, e.g. `{"a":1},{"a":2}`; '' when empty. */
export function rawArrayItems(arrayText: string): string {
  const trimmed = arrayText.trim();
  if (!trimmed.startsWith('[') || !trimmed.endsWith(']')) return '';
  return trimmed.slice(1, -1).trim();
}
