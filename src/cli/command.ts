import type { AdminRequest, AdminResponse, JsonObject } from './admin-client.js';
import type { OptionSpecs } from './args.js';
import type { AdminApiError } from './errors.js';
import type { Positional } from './ids.js';
import type { JsonNumber } from './json-number.js';

/**
 * The shape of one CLI command. Each command is a declarative entry: the
 * words that name it, what it accepts, the one admin request it makes and how
 * to show the answer. Adding a command means adding one entry to a table in
 * `*-commands.ts`; parsing, validation, help, auth, `--json` and error
 * handling come from the runner.
 */

export type { AdminRequest, JsonObject } from './admin-client.js';

/** What a command sees: positionals by name and options already checked against their kind. */
export interface CommandInput {
  arg(name: string): string;
  text(name: string): string | undefined;
  /** A `decimal` or `integer` option, still as exact text. */
  number(name: string): JsonNumber | undefined;
  flag(name: string): boolean;
}

export interface Command {
  /** e.g. `['account', 'create']`; a single word (`['snapshot']`) works too. Plural first words are accepted. */
  words: readonly string[];
  summary: string;
  /** Positional arguments, all required, each an id checked before anything is sent, e.g. `[ACCOUNT_ID]`. */
  args?: readonly Positional[];
  options?: OptionSpecs;
  /** Whether the admin token is needed; true unless set to false. */
  auth?: boolean;
  /** How long to wait for the answer unless --timeout says otherwise (default 30 s). */
  timeoutS?: number;
  request(input: CommandInput): AdminRequest;
  /**
   * A command that can also run without the server: given the input, the
   * answer it computed itself, shown exactly as a server answer would be
   * (or thrown as the same refusal); null to ask the server.
   */
  local?(input: CommandInput, progress?: (events: number, total: number) => void): Promise<AdminResponse> | null;
  /**
   * A long job (snapshot, verify): on a terminal, and not under `--json`,
   * the runner draws its progress on stderr while it waits (progress.ts).
   */
  progress?: 'snapshot' | 'verify';
  /** Text for people; `--json` bypasses this and prints the body as received. */
  render(body: JsonObject, input: CommandInput): string;
  /**
   * For a command that needs more than one request (following cursors):
   * given the first request and a way to send, returns the one response to
   * print. Without it the runner sends `request` once.
   */
  exchange?(first: AdminRequest, input: CommandInput, send: Send): Promise<AdminResponse>;
  /**
   * A 2xx answer that still means the job failed (a snapshot that does not
   * verify): a sentence makes the run exit 1 after the output is printed.
   */
  failure?(body: JsonObject, input: CommandInput): string | undefined;
  /**
   * Text printed on stdout (the raw body with `--json`) when the server
   * refuses, before the usual one-line error on stderr; `undefined` to print
   * nothing, as for every other command.
   */
  renderRefusal?(error: AdminApiError, input: CommandInput): string | undefined;
}

export type Send = (request: AdminRequest) => Promise<AdminResponse>;

/** Builds `/admin/v1/...`, escaping ids so an odd id cannot change the route. */
export function adminPath(...segments: string[]): string {
  return `/admin/v1/${segments.map(encodeURIComponent).join('/')}`;
}
