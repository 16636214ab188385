import type { AdminRequest, AdminResponse } from './admin-client.js';
import { adminPath } from './command.js';
import { objectAt } from './response-shape.js';
import { PROGRESS_BAR_CHARS, PROGRESS_POLL_MS } from './limits.js';
import { MS_PER_SECOND } from '../platform/units.js';

/**
 * Progress of a snapshot or a verify on the operator's terminal: one line,
 * redrawn in place on stderr, with the time since the command started, the
 * events replayed of the log's total and a bar. Only on a terminal: under
 * `--json`, in a pipe or a log file it would be noise, so the runner draws
 * nothing there. The server's figures come from `GET /admin/v1/stats`
 * (`job`), asked every PROGRESS_POLL_MS while the command waits; a local
 * `verify --data-dir` reports its own.
 */

const GROUPED = new Intl.NumberFormat('en');

/** The line for `job` after `elapsedMs`, with events of total when known (a snapshot knows them once its copy is made). */
export function progressLine(job: string, elapsedMs: number, events: number | null, total: number | null): string {
  // Tenths of a second in integers: a duration, printed without a binary fraction.
  const tenths = Math.floor((elapsedMs * 10) / MS_PER_SECOND);
  const elapsed = `${Math.floor(tenths / 10)}.${tenths % 10} s`;
  if (events === null || total === null) return `${job}: ${elapsed}, ${job === 'snapshot' ? 'copying the store' : 'starting'}`;
  const share = total === 0 ? 1 : Math.min(1, events / total);
  const filled = Math.round(share * PROGRESS_BAR_CHARS);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(PROGRESS_BAR_CHARS - filled)}]`;
  return `${job}: ${elapsed} ${bar} ${GROUPED.format(events)} of ${GROUPED.format(total)} events`;
}

/** Redraws one terminal line: carriage return, the text, erase to the end of the line. */
export function redraw(write: (s: string) => void, text: string): void {
  write(`\r${text}\u001b[K`);
}

export interface ProgressDisplay {
  /** Draws figures the command has itself (a local verify). */
  report(events: number, total: number): void;
  /** Stops drawing and erases the line, before the command prints its answer. */
  stop(): void;
}

/**
 * Draws `job`'s progress on `write` until stopped; with `send`, asks the
 * server for its figures every PROGRESS_POLL_MS (a failed ask is skipped:
 * the command's own request reports what went wrong).
 */
export function showProgress(job: string, write: (s: string) => void, send?: (request: AdminRequest) => Promise<AdminResponse>): ProgressDisplay {
  const startMs = performance.now();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const draw = (events: number | null, total: number | null): void => {
    if (!stopped) redraw(write, progressLine(job, performance.now() - startMs, events, total));
  };
  const poll = async (): Promise<void> => {
    try {
      const stats = await send!({ method: 'GET', path: adminPath('stats') });
      const running = objectAt(stats.body, 'job');
      const figure = (name: string): number | null => (typeof running[name] === 'number' ? (running[name] as number) : null);
      draw(figure('events'), figure('total_events'));
    } catch {
      draw(null, null);
    }
    if (!stopped) timer = setTimeout(() => void poll(), PROGRESS_POLL_MS);
  };
  draw(null, null);
  if (send !== undefined) timer = setTimeout(() => void poll(), PROGRESS_POLL_MS);
  return {
    report: draw,
    stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      redraw(write, '');
      write('\r');
    },
  };
}
