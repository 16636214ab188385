/**
 * How long a service takes: the times from placement to completion of its
 * last SERVICE_TIMES_KEPT completed orders, and their median, which the
 * service lists show as `average_time` (as panels do, from their recent
 * completed orders; a median, so that one order stuck for a week does not
 * move it).
 *
 * Kept incrementally and durably: an order's move to `completed` writes its
 * service's whole window (a `meta` row, SERVICE_TIMES_PREFIX + the service
 * id) in the same commit as the move, so a restart reads the windows back
 * and nothing is ever recounted from the orders. Only `completed` counts:
 * a partial or canceled order did not deliver what was asked.
 *
 * Moves of one service's orders come from many wallet actors, so the
 * window each row holds builds on the last one appended (applied in memory
 * as it is appended, in the order the group commit writes them); the lists
 * show a window only once its commit is durable, so a customer never sees a
 * time that a crash could take back.
 */
import type { OrderRecord } from '../ledger/index.js';
import type { Store, TablePut } from '../wal/index.js';
import { SERVICE_TIMES_KEPT } from './limits.js';

/** Prefix of the `meta` keys of the windows: `serviceTimes:<service id>`. */
export const SERVICE_TIMES_PREFIX = 'serviceTimes:';

/** A window as stored: the times in ms, oldest first. */
type Window = readonly number[];

/** The median of a window, in whole ms (the mean of the two middle ones for an even count); null when empty. */
export function medianMs(window: Window): number | null {
  if (window.length === 0) return null;
  const sorted = [...window].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : Math.floor((sorted[middle - 1]! + sorted[middle]!) / 2);
}

export class ServiceTimes {
  /** Each service's window as last appended (what the next completion builds on). */
  private readonly appendedWindows = new Map<number, Window>();
  /** Each service's window as durable, with the count of appends it reflects (a later one is never replaced by an earlier). */
  private readonly durable = new Map<number, { appends: number; window: Window }>();
  private appends = 0;
  /** Changes when a durable window changes, so that a cached list knows to render again. */
  version = 0;

  constructor(store: Pick<Store, 'tables'>) {
    for (const { key, value } of store.tables.meta.getRange({ start: SERVICE_TIMES_PREFIX, end: `${SERVICE_TIMES_PREFIX}\uffff` })) {
      const service = Number(String(key).slice(SERVICE_TIMES_PREFIX.length));
      if (!Number.isSafeInteger(service) || !Array.isArray(value)) continue;
      this.appendedWindows.set(service, value as Window);
      this.durable.set(service, { appends: 0, window: value as Window });
    }
  }

  /** The median time of the service's last completions, as durable; null before its first. */
  medianMs(service: number): number | null {
    return medianMs(this.durable.get(service)?.window ?? []);
  }

  /**
   * The row a completed order writes with its move: its service's window
   * with this order's time added (the oldest dropped beyond
   * SERVICE_TIMES_KEPT). Changes nothing: `appended` does, once the WAL
   * holds the entry.
   */
  rowFor(order: Pick<OrderRecord, 'service' | 'createdAtMs' | 'finishedAtMs'>): TablePut {
    // A wall clock stepped back makes no negative time.
    const tookMs = Math.max(0, (order.finishedAtMs ?? order.createdAtMs) - order.createdAtMs);
    const window = [...(this.appendedWindows.get(order.service) ?? []), tookMs].slice(-SERVICE_TIMES_KEPT);
    return { table: 'meta', key: `${SERVICE_TIMES_PREFIX}${order.service}`, value: window };
  }

  /** The WAL holds `row` (from `rowFor`): later completions build on it, and the lists show it once `durable` resolves. */
  appended(service: number, row: TablePut, durable: Promise<void>): void {
    const window = row.value as Window;
    const appends = ++this.appends;
    this.appendedWindows.set(service, window);
    durable.then(
      () => {
        const shown = this.durable.get(service);
        if (shown !== undefined && shown.appends > appends) return;
        this.durable.set(service, { appends, window });
        this.version++;
      },
      // A failed commit stops the process (the WAL's fail-stop); nothing is shown meanwhile.
      () => {},
    );
  }
}
