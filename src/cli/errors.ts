/**
 * The two ways a CLI run can fail. They map to exit codes the way most Unix
 * tools do, so scripts can tell "you called me wrong" from "it did not work".
 */

/** The command line itself is wrong (unknown command, bad option value): exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The command was understood but could not be carried out: exit 1. */
export class CliError extends Error {
  override name = 'CliError';
}

/** The admin API answered with `{ok:false, error, message}`; kept apart so callers can read the code. */
export class AdminApiError extends CliError {
  override name = 'AdminApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    readonly serverMessage: string,
    /** The whole error body and its exact text, for commands that show more of a refusal (e.g. `verify`'s report). */
    readonly body: Readonly<Record<string, unknown>> = {},
    readonly raw: string = '',
  ) {
    super(`${code}: ${serverMessage}`);
  }
}
