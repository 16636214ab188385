import { AdminClient, type AdminResponse } from './admin-client.js';
import { GLOBAL_OPTIONS, parseLine, type OptionSpec, type OptionSpecs, type ParsedLine } from './args.js';
import type { AdminRequest, Command, CommandInput } from './command.js';
import { showProgress } from './progress.js';
import { buildInput } from './command-input.js';
import { COMMANDS, findCommand } from './commands.js';
import { resolveAdminUrl, resolveToken } from './connection.js';
import { AdminApiError, CliError, UsageError } from './errors.js';
import { commandHelp, commandUsage, generalHelp, generalUsage, groupHelp, groupUsage, PROGRAM } from './help.js';
import { VERSION } from '../platform/index.js';
import { parseInteger } from './json-number.js';
import { DEFAULT_TIMEOUT_S, TIMEOUT_S_MAX } from './limits.js';
import { MS_PER_SECOND } from '../platform/units.js';

export interface CliIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  env: NodeJS.ProcessEnv;
  /** Whether stderr is a terminal: only then do long commands draw their progress there. */
  stderrIsTty?: boolean;
}

/**
 * Every option any command knows. The first, lenient parse needs all of them
 * so that in `--amount 5 account credits 7` the `5` is not taken for a
 * command word.
 */
function allOptions(commands: readonly Command[]): OptionSpecs {
  const all: Record<string, OptionSpec> = { ...GLOBAL_OPTIONS };
  for (const command of commands) {
    for (const [name, spec] of Object.entries(command.options ?? {})) {
      const seen = all[name];
      // Same name must mean the same kind everywhere, or the first parse would split the line wrongly.
      if (seen && (seen.kind === 'flag') !== (spec.kind === 'flag')) {
        throw new Error(`option --${name} is a flag in one command and takes a value in another`);
      }
      if (GLOBAL_OPTIONS[name]) throw new Error(`option --${name} shadows a global option`);
      all[name] = seen ?? spec;
    }
  }
  return all;
}

function stringValue(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Where a usage error should send the user for help: the words to add --help to, and the usage line to print. */
interface HelpPointer {
  target: string;
  usage: string;
}

async function run(argv: readonly string[], io: CliIo, help: HelpPointer): Promise<number> {
  const loose = parseLine(argv, allOptions(COMMANDS), false);
  const wantsHelp = loose.values.help === true;
  if (loose.values.version === true && !wantsHelp) {
    io.stdout(`${PROGRAM} ${VERSION}\n`);
    return 0;
  }

  if (loose.positionals.length === 0) {
    if (wantsHelp) {
      io.stdout(generalHelp(COMMANDS));
      return 0;
    }
    io.stderr(generalHelp(COMMANDS));
    return 2;
  }

  const lookup = findCommand(loose.positionals);
  if (lookup.kind === 'unknown') {
    throw new UsageError(`unknown command "${loose.positionals.slice(0, 2).join(' ')}".`);
  }
  if (lookup.kind === 'group') {
    help.target = `${PROGRAM} ${lookup.group}`;
    help.usage = groupUsage(lookup.group);
    if (wantsHelp) {
      io.stdout(groupHelp(lookup.group, lookup.commands));
      return 0;
    }
    const names = lookup.commands.map((c) => c.words.slice(1).join(' ')).join(', ');
    const given = loose.positionals[1];
    throw new UsageError(
      given === undefined
        ? `${lookup.group} needs a command: ${names}.`
        : `unknown ${lookup.group} command "${given}"; expected one of: ${names}.`,
    );
  }

  const command = lookup.command;
  help.target = `${PROGRAM} ${command.words.join(' ')}`;
  help.usage = commandUsage(command);
  if (wantsHelp) {
    io.stdout(commandHelp(command));
    return 0;
  }

  const line = parseLine(argv, { ...GLOBAL_OPTIONS, ...command.options }, true);
  const input = buildInput(command, line);
  // Build the request before touching the network or the token file, so usage errors come first.
  const request = command.request(input);
  const json = line.values.json === true;
  const display = command.progress !== undefined && io.stderrIsTty === true && !json ? command.progress : null;
  let response: AdminResponse;
  try {
    response = await (local(command, input, display, io) ?? remote(command, request, input, line, io, display));
  } catch (err) {
    if (err instanceof AdminApiError && command.renderRefusal) {
      const text = command.renderRefusal(err, input);
      if (text !== undefined) io.stdout(json ? withNewline(err.raw) : text);
    }
    throw err;
  }
  io.stdout(json ? withNewline(response.raw) : command.render(response.body, input));
  const failure = command.failure?.(response.body, input);
  if (failure !== undefined) throw new CliError(failure);
  return 0;
}

/** The command's exchange with the server: where it is, the token, the timeout; its progress drawn meanwhile when `display` says so. */
async function remote(command: Command, request: AdminRequest, input: CommandInput, line: ParsedLine, io: CliIo, display: string | null): Promise<AdminResponse> {
  const baseUrl = resolveAdminUrl(stringValue(line.values['admin-url']), io.env);
  const token = command.auth === false ? undefined : await resolveToken(stringValue(line.values.token), io.env);
  const timeout = stringValue(line.values.timeout);
  const timeoutS = timeout === undefined ? (command.timeoutS ?? DEFAULT_TIMEOUT_S) : Number(parseInteger(timeout, '--timeout').text);
  if (timeoutS < 1 || timeoutS > TIMEOUT_S_MAX) throw new UsageError(`--timeout must be from 1 to ${TIMEOUT_S_MAX} seconds.`);
  const client = new AdminClient(baseUrl, token, timeoutS * MS_PER_SECOND);
  const send = (next: AdminRequest) => client.send(next);
  const progress = display === null ? null : showProgress(display, io.stderr, send);
  try {
    return await (command.exchange ? command.exchange(request, input, send) : send(request));
  } finally {
    progress?.stop();
  }
}

/** A command's own answer without the server (verify --data-dir), drawing its progress when `display` says so; null to ask the server. */
function local(command: Command, input: CommandInput, display: string | null, io: CliIo): Promise<AdminResponse> | null {
  if (command.local === undefined) return null;
  if (display === null) return command.local(input);
  const progress = showProgress(display, io.stderr);
  const answer = command.local(input, (events, total) => progress.report(events, total));
  if (answer === null) {
    progress.stop();
    return null;
  }
  return answer.finally(() => progress.stop());
}

function withNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** Runs one CLI invocation and returns its exit code: 0 success, 1 failure, 2 usage error. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const help: HelpPointer = { target: PROGRAM, usage: generalUsage() };
  try {
    return await run(argv, io, help);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`error: ${err.message}\n${help.usage}\nRun \`${help.target} --help\` for details.\n`);
      return 2;
    }
    if (err instanceof CliError) {
      io.stderr(`error: ${err.message}\n`);
      return 1;
    }
    // A bug in the CLI itself: keep the stack, it is what a bug report needs.
    io.stderr(`error: unexpected failure in the CLI: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  }
}
