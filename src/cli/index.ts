/** Public surface of the operator CLI; tests drive `runCli` in-process. */
export { runCli, type CliIo } from './run.js';
export { COMMANDS, findCommand } from './commands.js';
export type { Command, CommandInput, AdminRequest } from './command.js';
