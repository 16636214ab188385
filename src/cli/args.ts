import { parseArgs } from 'node:util';
import { ORDER_ID_PATTERN } from '../ids/index.js';
import { UsageError } from './errors.js';
import { DEFAULT_TIMEOUT_S, WHOLE_STORE_TIMEOUT_S } from './limits.js';

/**
 * How an option's text is checked: `decimal`, `integer` and `account` (an
 * account id, ids.ts) are validated before anything is sent, so a typo
 * never reaches the server.
 */
export type OptionKind = 'text' | 'decimal' | 'integer' | 'account' | 'flag';

export interface OptionSpec {
  kind: OptionKind;
  help: string;
  /** Shown in usage lines, e.g. `--amount AMOUNT`. */
  placeholder?: string;
  required?: boolean;
  short?: string;
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** Accepted by every command, anywhere on the line. */
export const GLOBAL_OPTIONS: OptionSpecs = {
  'admin-url': {
    kind: 'text',
    placeholder: 'URL',
    help: 'admin API base URL (env ADMIN_URL; default http://$ADMIN_HOST:$ADMIN_PORT, i.e. http://127.0.0.1:8081)',
  },
  token: {
    kind: 'text',
    placeholder: 'TOKEN',
    help: 'admin token (env ADMIN_TOKEN; else the file $DATA_DIR/admin-token, DATA_DIR defaulting to ./data)',
  },
  timeout: {
    kind: 'integer',
    placeholder: 'SECONDS',
    help: `how long to wait for the server's answer (default ${DEFAULT_TIMEOUT_S}; ${WHOLE_STORE_TIMEOUT_S} for snapshot and verify, which copy or replay the whole store)`,
  },
  json: { kind: 'flag', help: "print the server's JSON response as is, for scripts" },
  help: { kind: 'flag', short: 'h', help: 'show help' },
  version: { kind: 'flag', help: "print the CLI's version and exit" },
};

export interface ParsedLine {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

type ParseArgsOptions = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

function toParseArgsOptions(specs: OptionSpecs): ParseArgsOptions {
  const out: NonNullable<ParseArgsOptions> = {};
  for (const [name, spec] of Object.entries(specs)) {
    out[name] = {
      type: spec.kind === 'flag' ? 'boolean' : 'string',
      ...(spec.short ? { short: spec.short } : {}),
    };
  }
  return out;
}

/**
 * parseArgs refuses `--amount -5` as ambiguous, but a negative credit
 * adjustment is an ordinary operator action; rewrite it to `--amount=-5`
 * for numeric options only, where a leading dash can only mean a sign.
 */
function joinNegativeNumbers(argv: readonly string[], specs: OptionSpecs): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    const spec = arg.startsWith('--') ? specs[arg.slice(2)] : undefined;
    if (spec && (spec.kind === 'decimal' || spec.kind === 'integer') && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/**
 * Order ids are random base64url, so one in 64 starts with a dash, which
 * parseArgs would read as options ("Unknown option '-L'"). A word that is
 * an order id and not one of the command's options is marked as an
 * argument for the parse (a prefix no option starts with) and unmarked
 * after it.
 */
const ID_MARK = '\u0000';

function markDashedIds(argv: readonly string[], specs: OptionSpecs): string[] {
  return argv.map((arg) => (arg.startsWith('-') && ORDER_ID_PATTERN.test(arg) && !(arg.startsWith('--') && Object.hasOwn(specs, arg.slice(2))) ? ID_MARK + arg : arg));
}

function unmark(value: string): string {
  return value.startsWith(ID_MARK) ? value.slice(ID_MARK.length) : value;
}

/**
 * Parses the whole line. With `strict: false` unknown options are tolerated;
 * the runner uses that first pass only to find the command words, then parses
 * again strictly with exactly that command's options.
 */
export function parseLine(argv: readonly string[], specs: OptionSpecs, strict: boolean): ParsedLine {
  try {
    const { values, positionals } = parseArgs({
      args: markDashedIds(joinNegativeNumbers(argv, specs), specs),
      options: toParseArgsOptions(specs),
      allowPositionals: true,
      strict,
    });
    const flat: Record<string, string | boolean | undefined> = {};
    for (const [name, value] of Object.entries(values)) {
      // Options are never declared `multiple`, so arrays cannot occur; keep the last value if they somehow do.
      const last = Array.isArray(value) ? value[value.length - 1] : value;
      flat[name] = typeof last === 'string' ? unmark(last) : last;
    }
    return { positionals: positionals.map(unmark), values: flat };
  } catch (err) {
    // parseArgs explains itself well ("Unknown option '--foo'"); only its error type needs changing.
    // Its long "To specify a positional argument..." hint is noise for this CLI.
    const text = err instanceof Error ? err.message : String(err);
    throw new UsageError(text.split('\n')[0]!.replace(/\. To specify .*$/, '.'));
  }
}
