import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { AdminResponse } from './admin-client.js';
import { adminPath, type Command, type JsonObject } from './command.js';
import { AdminApiError, CliError } from './errors.js';
import { objectAt } from './response-shape.js';
import { formatCell, formatFields } from './table.js';
import { BYTES_PER_KIB } from '../platform/units.js';
import { WHOLE_STORE_TIMEOUT_S } from './limits.js';

/** Commands about the server itself rather than an account or a service. */

/** `{a: 1, b: {c: 2}}` as `a`, `b.c` pairs, in the server's order, so new counters show up without a CLI change. */
function flatten(value: JsonObject, prefix = ''): [string, unknown][] {
  return Object.entries(value).flatMap(([key, item]): [string, unknown][] =>
    typeof item === 'object' && item !== null && !Array.isArray(item)
      ? flatten(item as JsonObject, `${prefix}${key}.`)
      : [[`${prefix}${key}`, item]],
  );
}

/** Counts, then totals, of a verify report, each under its own name (`events`, `credited`, ...). */
function reportFields(report: JsonObject): [string, unknown][] {
  return [...Object.entries(objectAt(report, 'counts')), ...Object.entries(objectAt(report, 'totals'))];
}

/** Sizes are shown with one decimal (a display of bytes, not money). */
const ONE_DECIMAL = new Intl.NumberFormat('en', { minimumFractionDigits: 1, maximumFractionDigits: 1, useGrouping: false });

function size(bytes: unknown): string {
  if (typeof bytes !== 'number') return formatCell(bytes);
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = '';
  for (const next of units) {
    if (value < BYTES_PER_KIB) break;
    value /= BYTES_PER_KIB;
    unit = next;
  }
  return unit === '' ? `${bytes} bytes` : `${bytes} bytes (${ONE_DECIMAL.format(value)} ${unit})`;
}

function snapshotFailure(body: JsonObject): string | undefined {
  const snapshot = objectAt(body, 'snapshot');
  const verify = objectAt(snapshot, 'verify');
  if (verify.ok === true) return undefined;
  const why = typeof verify.first_broken === 'string' ? verify.first_broken : 'the server did not report a verified copy';
  return `the snapshot at ${formatCell(snapshot.path)} does not verify: ${formatCell(why)}`;
}

function ledgerFailure(body: JsonObject): string | undefined {
  const report = objectAt(body, 'report');
  if (report.ok === true) return undefined;
  const why = typeof report.first_broken === 'string' ? report.first_broken : 'the server did not say which invariant broke';
  return `LEDGER: ${formatCell(why)}`;
}

/**
 * `verify --data-dir`: the same check the server runs, here, on a directory
 * opened read-only, answered as the server would answer (200 with the
 * report, or the 409 LEDGER refusal carrying it). Loaded on demand: no other
 * command needs LMDB.
 */
async function verifyLocally(dir: string, progress?: (events: number, total: number) => void): Promise<AdminResponse> {
  if (!existsSync(join(dir, 'data.mdb'))) {
    throw new CliError(`there is no store in ${dir} (no data.mdb); give a server's data directory or a snapshot directory.`);
  }
  const { renderVerifyReport, verifyDirectory, StoreFormatError } = await import('../ops/index.js');
  const report = await verifyDirectory(dir, progress).catch((error: unknown) => {
    // A store of another format is refused before anything reads it: its sentence says what to do.
    throw error instanceof StoreFormatError ? new CliError(error.message) : error;
  });
  const rendered = renderVerifyReport(report);
  if (report.ok) {
    const raw = `{"ok":true,"report":${rendered}}`;
    return { status: 200, body: JSON.parse(raw) as JsonObject, raw };
  }
  const message = report.firstBroken ?? 'The ledger does not verify.';
  const raw = `{"ok":false,"error":"LEDGER","message":${JSON.stringify(message)},"report":${rendered}}`;
  throw new AdminApiError(409, 'LEDGER', message, JSON.parse(raw) as JsonObject, raw);
}

export const SYSTEM_COMMANDS: readonly Command[] = [
  {
    words: ['health'],
    summary: 'check that the admin API answers (needs no token)',
    auth: false,
    request: () => ({ method: 'GET', path: '/healthz' }),
    render: () => 'The server is up.\n',
  },
  {
    words: ['stats'],
    summary: 'show counts (accounts, services, orders by status), the deepest wallet mailbox and WAL counters',
    request: () => ({ method: 'GET', path: adminPath('stats') }),
    render: (body) => formatFields(flatten(body).filter(([key]) => key !== 'ok')),
  },
  {
    words: ['snapshot'],
    summary: 'copy the live store into a new empty directory, verify the copy, and report it',
    timeoutS: WHOLE_STORE_TIMEOUT_S,
    progress: 'snapshot',
    options: {
      out: {
        kind: 'text',
        placeholder: 'DIR',
        required: true,
        help: 'a new or empty directory (relative to the current directory; the server writes it, so it must be on the server host)',
      },
    },
    request: (input) => ({ method: 'POST', path: adminPath('snapshot'), body: { out: resolve(input.text('out')!) } }),
    render: (body) => {
      const snapshot = objectAt(body, 'snapshot');
      const verify = objectAt(snapshot, 'verify');
      const ok = verify.ok === true;
      return (
        (ok ? 'Snapshot written and verified.\n' : 'Snapshot written, but it does NOT verify.\n') +
        formatFields([
          ['path', snapshot.path],
          ['size', size(snapshot.bytes)],
          ['events', snapshot.events],
          ['verified', ok ? 'yes' : `no: ${formatCell(verify.first_broken)}`],
        ])
      );
    },
    failure: snapshotFailure,
  },
  {
    words: ['verify'],
    summary: 'replay the whole log and check every ledger invariant; exits 1 if one is broken',
    timeoutS: WHOLE_STORE_TIMEOUT_S,
    options: {
      'data-dir': {
        kind: 'text',
        placeholder: 'DIR',
        help: 'verify the store in this directory yourself instead of asking the server: a stopped server\'s data directory, or a snapshot',
      },
    },
    request: () => ({ method: 'GET', path: adminPath('verify') }),
    local: (input, progress) => {
      const dir = input.text('data-dir');
      return dir === undefined ? null : verifyLocally(resolve(dir), progress);
    },
    progress: 'verify',
    render: (body) => {
      const report = objectAt(body, 'report');
      const heading = report.ok === true ? 'Ledger verified: every invariant holds.\n' : 'The ledger is BROKEN.\n';
      return heading + formatFields(reportFields(report));
    },
    failure: ledgerFailure,
    // 409 LEDGER still carries the report: show its counts and totals; the runner then prints the broken invariant.
    renderRefusal: (error) => {
      const report = error.body.report;
      if (error.code !== 'LEDGER' || typeof report !== 'object' || report === null || Array.isArray(report)) return undefined;
      return `The ledger is BROKEN. Counts and totals as replayed:\n${formatFields(reportFields(report as JsonObject))}`;
    },
  },
];
