/**
 * The operator's services. Changes are written through the WAL and applied
 * in memory only once durable, so the list customers see is always durable.
 * Writes are serialised so two concurrent updates of one service cannot
 * lose each other's fields.
 */
import type { Clock } from '../platform/index.js';
import { renderServiceList } from '../wire/index.js';
import type { Store, Wal } from '../wal/index.js';
import { withServiceDefaults, type ServiceRecord } from '../ledger/index.js';

export class Catalog {
  private readonly services = new Map<number, ServiceRecord>();
  private nextId = 1;
  private listBody = renderServiceList([]);
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    store: Store,
    private readonly wal: Wal,
    private readonly clock: Clock,
  ) {
    for (const { value } of store.tables.services.getRange()) this.apply(withServiceDefaults(value as ServiceRecord));
  }

  get(id: number): ServiceRecord | null {
    return this.services.get(id) ?? null;
  }

  all(): ServiceRecord[] {
    return [...this.services.values()];
  }

  /** The customers' `GET /services` body, rendered once per change. */
  publicListBody(): string {
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
    this.listBody = renderServiceList([...this.services.values()].sort((a, b) => a.id - b.id));
  }
}

function isService(value: unknown): value is ServiceRecord {
  return typeof value === 'object' && value !== null && 'rate' in value && 'platform' in value;
}
