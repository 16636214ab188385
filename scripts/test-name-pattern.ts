/**
 * The `-t` pattern that selects exactly one test by its full name. Vitest
 * matches `-t` against a test's names (its describe blocks' names, then its
 * own) joined by single spaces, as a regular expression that may match
 * anywhere: a name like "a (b)" or "5 + 5" selects nothing or something else
 * unless its characters are escaped, and a short name selects every test
 * whose name contains it unless the pattern is anchored at both ends.
 */

/** The name vitest matches `-t` against: the describe blocks' names, then the test's own, joined by spaces. */
export function runnerFullName(names: readonly string[]): string {
  return names.join(' ');
}

/** `text` with every regular-expression character escaped, so that it matches only itself. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The anchored pattern that matches the full name `names` make and no other. */
export function exactNamePattern(names: readonly string[]): RegExp {
  return new RegExp(`^${escapeRegExp(runnerFullName(names))}$`);
}

/** A shell word that passes `text` through unchanged (single quotes, each quote inside spelled out). */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
