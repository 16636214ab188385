import { ACCOUNT_COMMANDS } from './account-commands.js';
import type { Command } from './command.js';
import { LIFECYCLE_COMMANDS } from './lifecycle-commands.js';
import { ORDER_COMMANDS } from './order-commands.js';
import { SERVICE_COMMANDS } from './service-commands.js';
import { SUBSCRIPTION_COMMANDS } from './subscription-commands.js';
import { SYSTEM_COMMANDS } from './system-commands.js';
import { WEBHOOK_COMMANDS } from './webhook-commands.js';

/**
 * The command table. A new group is a new `*-commands.ts` array listed here;
 * a new command in an existing group is one more entry in its array.
 */
export const COMMANDS: readonly Command[] = [...SYSTEM_COMMANDS, ...ACCOUNT_COMMANDS, ...SERVICE_COMMANDS, ...ORDER_COMMANDS, ...LIFECYCLE_COMMANDS, ...SUBSCRIPTION_COMMANDS, ...WEBHOOK_COMMANDS];

export type Lookup =
  | { kind: 'command'; command: Command }
  /** The first word names a group (`account`) but no command in it matched. */
  | { kind: 'group'; group: string; commands: Command[] }
  | { kind: 'unknown' };

/** `accounts list` and `account list` mean the same; only the first word is ever plural. */
function normalizeFirstWord(word: string, commands: readonly Command[]): string {
  const firstWords = new Set(commands.map((c) => c.words[0]));
  if (firstWords.has(word)) return word;
  return word.endsWith('s') && firstWords.has(word.slice(0, -1)) ? word.slice(0, -1) : word;
}

export function findCommand(positionals: readonly string[], commands: readonly Command[] = COMMANDS): Lookup {
  const first = positionals[0];
  if (first === undefined) return { kind: 'unknown' };
  const words = [normalizeFirstWord(first, commands), ...positionals.slice(1)];
  let best: Command | undefined;
  for (const command of commands) {
    const matches = command.words.every((word, i) => words[i] === word);
    if (matches && (best === undefined || command.words.length > best.words.length)) best = command;
  }
  if (best) return { kind: 'command', command: best };
  const group = commands.filter((c) => c.words.length > 1 && c.words[0] === words[0]);
  return group.length > 0 ? { kind: 'group', group: words[0]!, commands: group } : { kind: 'unknown' };
}
