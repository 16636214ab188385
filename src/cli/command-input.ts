import type { ParsedLine } from './args.js';
import type { Command, CommandInput } from './command.js';
import { UsageError } from './errors.js';
import { checkId } from './ids.js';
import { parseDecimal, parseInteger, type JsonNumber } from './json-number.js';

/**
 * Checks the parsed line against a command's declaration (positional count,
 * required options, number formats) so every command gets the same usage
 * errors and no command can forget a check.
 */
export function buildInput(command: Command, line: ParsedLine): CommandInput {
  const positionals = command.args ?? [];
  const given = line.positionals.slice(command.words.length);
  const label = command.words.join(' ');
  if (given.length < positionals.length) {
    throw new UsageError(`${label} needs ${positionals.slice(given.length).map((p) => p.name).join(' ')}.`);
  }
  if (given.length > positionals.length) {
    throw new UsageError(`${label} does not take "${given[positionals.length]}".`);
  }
  const args = new Map<string, string>();
  positionals.forEach(({ name, id }, i) => {
    const value = given[i]!;
    if (value.trim() === '') throw new UsageError(`${label}: ${name} must not be empty.`);
    args.set(name, checkId(id, value, `${label}: ${name}`));
  });

  const texts = new Map<string, string>();
  const numbers = new Map<string, JsonNumber>();
  const flags = new Map<string, boolean>();
  for (const [name, spec] of Object.entries(command.options ?? {})) {
    const value = line.values[name];
    if (value === undefined) {
      if (spec.required) throw new UsageError(`${label} needs --${name}.`);
      continue;
    }
    if (spec.kind === 'flag') {
      flags.set(name, value === true);
      continue;
    }
    const text = String(value);
    if (spec.kind === 'decimal') numbers.set(name, parseDecimal(text, `--${name}`));
    else if (spec.kind === 'integer') numbers.set(name, parseInteger(text, `--${name}`));
    else if (spec.kind === 'account') texts.set(name, checkId('account', text, `--${name}`));
    else if (text.trim() === '') throw new UsageError(`--${name} must not be empty.`);
    else texts.set(name, text);
  }

  // Asking for an undeclared name is a bug in the command table, not a user error.
  const declared = (name: string, kinds: readonly string[]): void => {
    const spec = command.options?.[name];
    if (!spec || !kinds.includes(spec.kind)) throw new Error(`${label}: no ${kinds.join('/')} option --${name}`);
  };
  return {
    arg(name) {
      const value = args.get(name);
      if (value === undefined) throw new Error(`${label}: no positional ${name}`);
      return value;
    },
    text(name) {
      declared(name, ['text', 'account']);
      return texts.get(name);
    },
    number(name) {
      declared(name, ['decimal', 'integer']);
      return numbers.get(name);
    },
    flag(name) {
      declared(name, ['flag']);
      return flags.get(name) ?? false;
    },
  };
}
