import { GLOBAL_OPTIONS, type OptionSpec, type OptionSpecs } from './args.js';
import type { Command } from './command.js';

/** Help text, generated from the command table so it cannot drift from what is accepted. */

export const PROGRAM = 'credit-order-api';

function optionUsage(name: string, spec: OptionSpec): string {
  return spec.kind === 'flag' ? `--${name}` : `--${name} ${spec.placeholder ?? 'VALUE'}`;
}

/** `account credits ID --amount AMOUNT --reason TEXT`, with optional options in brackets when `full`. */
export function signature(command: Command, full: boolean): string {
  const parts = [...command.words, ...(command.args ?? []).map((p) => p.name)];
  const options = Object.entries(command.options ?? {});
  for (const [name, spec] of options) if (spec.required) parts.push(optionUsage(name, spec));
  const optional = options.filter(([, spec]) => !spec.required);
  if (full) for (const [name, spec] of optional) parts.push(`[${optionUsage(name, spec)}]`);
  else if (optional.length > 0) parts.push('[options]');
  return parts.join(' ');
}

function optionLines(options: OptionSpecs): string {
  const rows = Object.entries(options).map(([name, spec]) => {
    const usage = (spec.short ? `-${spec.short}, ` : '') + optionUsage(name, spec);
    return [usage, spec.help + (spec.required ? ' (required)' : '')] as const;
  });
  const width = Math.max(...rows.map(([usage]) => usage.length));
  return rows.map(([usage, help]) => `  ${usage.padEnd(width)}  ${help}\n`).join('');
}

function commandList(commands: readonly Command[]): string {
  return commands.map((c) => `  ${signature(c, false)}\n      ${c.summary}\n`).join('');
}

const GLOBAL_SECTION = `Options for every command:\n${optionLines(GLOBAL_OPTIONS)}`;

/** The one-line usage a usage error prints: the whole program's, a group's, or a command's. */
export function generalUsage(): string {
  return `Usage: ${PROGRAM} <command> [options]`;
}

export function groupUsage(group: string): string {
  return `Usage: ${PROGRAM} ${group} <command> [options]`;
}

export function commandUsage(command: Command): string {
  return `Usage: ${PROGRAM} ${signature(command, true)} [options]`;
}

export function generalHelp(commands: readonly Command[]): string {
  return (
    `${PROGRAM}: operator CLI for the credit-order-api admin API.\n\n` +
    `${generalUsage()}\n\n` +
    `Commands:\n${commandList(commands)}\n` +
    GLOBAL_SECTION +
    `\nGroup names may be plural (accounts list = account list).\n` +
    `Exit codes: 0 success, 1 failure, 2 usage error.\n` +
    `Run \`${PROGRAM} <command> --help\` for a command's options.\n`
  );
}

export function groupHelp(group: string, commands: readonly Command[]): string {
  return `${groupUsage(group)}\n\nCommands:\n${commandList(commands)}\n${GLOBAL_SECTION}`;
}

export function commandHelp(command: Command): string {
  const own = command.options && Object.keys(command.options).length > 0 ? `Options:\n${optionLines(command.options)}\n` : '';
  return `${commandUsage(command)}\n\n${command.summary}\n\n${own}${GLOBAL_SECTION}`;
}
