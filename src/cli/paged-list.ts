import type { AdminResponse } from './admin-client.js';
import type { OptionSpec, OptionSpecs } from './args.js';
import { adminPath, type AdminRequest, type Command, type CommandInput, type JsonObject, type Send } from './command.js';
import { CliError } from './errors.js';
import type { Positional } from './ids.js';
import { PROGRAM } from './help.js';
import { rawArrayItems, rawMember } from './raw-json.js';
import { listAt } from './response-shape.js';
import { formatCell, formatTable, type Column } from './table.js';
import { ADMIN_PAGE_DEFAULT, ADMIN_PAGE_MAX } from '../ops/limits.js';

/**
 * The listing commands (`order list`, `account list`, `order
 * cancel-requests`, `refill list`, `webhook list`): one admin listing read
 * a page at a time, `--limit`, `--cursor` and `--all`, and the command for
 * the next page. The
 * server may answer a short page, even an empty one, with a cursor (a
 * filtered listing examines a bounded number of entries per request), so
 * only a null next_cursor means the end.
 */

export interface PagedList {
  /** The command's words, e.g. `['order', 'list']`; also the start of the next-page command. */
  words: readonly string[];
  summary: string;
  /** Positional arguments, as in Command.args; the next-page command repeats them. */
  args?: readonly Positional[];
  /** The admin path's segments, e.g. `['orders']`, or a function of the input for a path that holds an argument. */
  path: readonly string[] | ((input: CommandInput) => readonly string[]);
  /** Query parameters every page carries, e.g. `{ cancel_requested: 'true' }`. */
  fixedQuery?: Readonly<Record<string, string>>;
  /** The member of the answer that holds the items, e.g. `orders`. */
  member: string;
  /** A `--status` filter, sent as `status`; the next-page command repeats it (its default when not given). */
  status?: { default: string; help: string };
  /** Other filters: each option given is sent as the query parameter of its name (a flag as `true`), and the next-page command repeats it. */
  filters?: OptionSpecs;
  /** What the items are called in sentences, e.g. `pending orders`. */
  noun(input: CommandInput): string;
  /** The sentence for an empty first page, when `No <noun>.` is not the best one. */
  none?: string;
  columns: readonly Column<JsonObject>[];
  /** Whether this run follows every cursor even without `--all` (an output that cannot say "more follow", such as CSV). */
  everyPage?: (input: CommandInput) => boolean;
}

function pageRequest(list: PagedList, input: CommandInput, cursor: string | undefined, limit: string | undefined): AdminRequest {
  const query = new URLSearchParams(list.fixedQuery);
  const status = list.status === undefined ? undefined : input.text('status');
  if (status !== undefined) query.set('status', status);
  for (const [name, spec] of Object.entries(list.filters ?? {})) {
    const value = filterValue(input, name, spec);
    if (value !== undefined) query.set(name, value);
  }
  if (limit !== undefined) query.set('limit', limit);
  if (cursor !== undefined) query.set('cursor', cursor);
  const search = query.toString();
  const path = typeof list.path === 'function' ? list.path(input) : list.path;
  return { method: 'GET', path: adminPath(...path) + (search === '' ? '' : `?${search}`) };
}

/** A filter option as given, as its query parameter's value (a flag: `true`); undefined when not given. */
function filterValue(input: CommandInput, name: string, spec: OptionSpec): string | undefined {
  if (spec.kind === 'flag') return input.flag(name) ? 'true' : undefined;
  return spec.kind === 'text' || spec.kind === 'account' ? input.text(name) : input.number(name)?.text;
}

function nextCursor(body: JsonObject): string | null {
  return typeof body.next_cursor === 'string' && body.next_cursor !== '' ? body.next_cursor : null;
}

/**
 * `--all`: follows next_cursor until it is null (through short and empty
 * pages) and answers as if the server had sent one page holding every item.
 * The `--json` text is spliced from the pages' own text, so no number is
 * re-rounded.
 */
async function followCursors(list: PagedList, first: AdminRequest, input: CommandInput, send: Send): Promise<AdminResponse> {
  if (!input.flag('all') && list.everyPage?.(input) !== true) return send(first);
  const limit = input.number('limit')?.text ?? String(ADMIN_PAGE_MAX);
  const items: JsonObject[] = [];
  const rawItems: string[] = [];
  const seen = new Set<string>();
  let cursor = input.text('cursor');
  for (;;) {
    const page = await send(pageRequest(list, input, cursor, limit));
    items.push(...listAt(page.body, list.member));
    const raw = rawMember(page.raw, list.member);
    const text = raw === undefined ? JSON.stringify(listAt(page.body, list.member)).slice(1, -1) : rawArrayItems(raw);
    if (text !== '') rawItems.push(text);
    const next = nextCursor(page.body);
    if (next === null) break;
    if (seen.has(next)) throw new CliError(`the server returned the cursor ${next} twice; stopping rather than looping forever.`);
    seen.add(next);
    cursor = next;
  }
  return {
    status: 200,
    body: { ok: true, [list.member]: items, next_cursor: null },
    raw: `{"ok":true,${JSON.stringify(list.member)}:[${rawItems.join(',')}],"next_cursor":null}`,
  };
}

/** The command that fetches the next page: the same options, plus the cursor. */
function nextPageCommand(list: PagedList, input: CommandInput, cursor: string): string {
  const parts = [PROGRAM, ...list.words, ...(list.args ?? []).map((p) => input.arg(p.name))];
  if (list.status !== undefined) parts.push('--status', input.text('status') ?? list.status.default);
  for (const [name, spec] of Object.entries(list.filters ?? {})) {
    const value = filterValue(input, name, spec);
    if (value !== undefined) parts.push(`--${name}`, ...(spec.kind === 'flag' ? [] : [value]));
  }
  const limit = input.number('limit');
  if (limit !== undefined) parts.push('--limit', limit.text);
  parts.push('--cursor', cursor);
  return parts.join(' ');
}

function renderPage(list: PagedList, body: JsonObject, input: CommandInput): string {
  const items = listAt(body, list.member);
  const noun = list.noun(input);
  const cursor = nextCursor(body);
  let out: string;
  if (items.length > 0) out = formatTable(items, list.columns);
  // Not the end: the server stopped its scan before finding any on this page.
  else if (cursor !== null) out = `No ${noun} on this page.\n`;
  else if (input.text('cursor') !== undefined) out = `No ${noun} after this cursor.\n`;
  else out = list.none ?? `No ${noun}.\n`;
  if (cursor !== null) {
    const short = items.length < Number(input.number('limit')?.text ?? ADMIN_PAGE_DEFAULT);
    const lead = short ? `The server stopped at its scan limit before the page was full; more ${noun} may follow.` : `More ${noun} follow.`;
    out += `\n${lead} Next page: \`${nextPageCommand(list, input, formatCell(cursor))}\` (or add --all for every page).\n`;
  }
  return out;
}

/** The command for a paged listing. */
export function pagedListCommand(list: PagedList): Command {
  return {
    words: list.words,
    summary: list.summary,
    ...(list.args === undefined ? {} : { args: list.args }),
    options: {
      ...(list.status === undefined ? {} : { status: { kind: 'text', placeholder: 'STATUS', help: list.status.help } }),
      ...list.filters,
      limit: { kind: 'integer', placeholder: 'N', help: `${list.member} per page, 1 to ${ADMIN_PAGE_MAX} (default ${ADMIN_PAGE_DEFAULT}; ${ADMIN_PAGE_MAX} with --all)` },
      cursor: { kind: 'text', placeholder: 'CURSOR', help: 'start after this point: the cursor a previous page printed' },
      all: { kind: 'flag', help: 'follow the cursors and list every page' },
    },
    request: (input) => pageRequest(list, input, input.text('cursor'), input.number('limit')?.text),
    exchange: (first, input, send) => followCursors(list, first, input, send),
    render: (body, input) => renderPage(list, body, input),
  };
}
