/**
 * The operator's services. Changes are written through the WAL and applied
 * in memory only once durable, so the list customers see is always durable.
 * Writes are serialised so two concurrent updates of one service cannot
 * lose each other's fields. Each service's delivery time (its
 * `average_time`) is kept beside it (service-times.ts).
 */
import { MS_PER_SECOND, type Clock } from '../platform/index.js';
import { renderServiceList } from '../wire/index.js';
import type { Store, Wal } from '../wal/index.js';
import { withServiceDefaults, type ServiceRecord } from '../ledger/index.js';
import { ServiceTimes } from './service-times.js';

export class Catalog {
  private readonly services = new Map<number, ServiceRecord>();
  private nextId = 1;
  private listBody = '';
  /** The services' delivery times' version the list body was rendered with (-1: to render). */
  private listTimes = -1;
  private chain: Promise<unknown> = Promise.resolve();
  /** The services' delivery times, which the wallet actors add to as orders complete. */
  readonly times: ServiceTimes;

  constructor(
    store: Store,
    private readonly wal: Wal,
    private readonly clock: Clock,
  ) {
    this.times = new ServiceTimes(store);
    for (const { value } of store.tables.services.getRange()) this.apply(withServiceDefaults(value as ServiceRecord));
  }

  get(id: number): ServiceRecord | null {
    return this.services.get(id) ?? null;
  }

  all(): ServiceRecord[] {
    return [...this.services.values()];
  }

  /** The median time from placement to completion of the service's last completed orders, in whole seconds; null before its first. */
  averageTimeS(id: number): number | null {
    const ms = this.times.medianMs(id);
    return ms === null ? null : Math.round(ms / MS_PER_SECOND);
  }

  /** The customers' `GET /services` body, rendered once per change of a service or of a delivery time. */
  publicListBody(): string {
    if (this.listTimes !== this.times.version) {
      this.listTimes = this.times.version;
      this.listBody = renderServiceList(
        [...this.services.values()].sort((a, b) => a.id - b.id),
        (id) => this.averageTimeS(id),
      );
    }
    return this.listBody;
  }

  /**
   * Creates (id absent) or updates a service. `build` receives the current
   * record (or null) and returns the new one, or an error value to refuse.
   */
  save<E>(
    id: number | null,
    build: (current: ServiceRecord | null, id: number) => ServiceRecord | E,
    reason?: string,
  ): Promise<ServiceRecord | E | null> {
    const run = async (): Promise<ServiceRecord | E | null> => {
      const current = id === null ? null : this.get(id);
      if (id !== null && current === null) return null;
      const next = build(current, id ?? this.nextId);
      if (!isService(next)) return next;
      // Saves run one at a time, so a new service's id stays free until `apply` moves nextId past it, once durable.
      await this.wal.append({
        events: [{ type: 'service.saved', atMs: this.clock.wallMs(), service: next, ...(reason === undefined ? {} : { reason }) }],
        puts: [{ table: 'services', key: next.id, value: next }],
      });
      this.apply(next);
      return next;
    };
    const result = this.chain.then(run, run);
    this.chain = result.catch(() => {});
    return result;
  }

  private apply(service: ServiceRecord): void {
    this.services.set(service.id, service);
    if (service.id >= this.nextId) this.nextId = service.id + 1;
    this.listTimes = -1;
  }
}

function isService(value: unknown): value is ServiceRecord {
  return typeof value === 'object' && value !== null && 'rate' in value && 'platform' in value;
}
