/**
 * The catalogue as the log has saved it so far (service.saved): cancel and
 * refill requests are accepted or refused by their service's settings, so
 * the replay judges each request against the versions of its service the
 * actor may have decided it on.
 */
import { withServiceDefaults, type ServiceRecord } from '../records.js';
import { fail } from './finding.js';
import { asRaw, isInt, type Raw } from './raw.js';

export class ServiceVersions {
  /** Each service as the latest service.saved left it. */
  private readonly services = new Map<number, ServiceRecord>();
  /** The latest service.saved: which service, and the version it replaced (see seen). */
  private lastSave: { id: number; before: ServiceRecord | null } | null = null;

  /** service.saved: the catalogue's new version of a service. */
  saved(seq: number, e: Raw): void {
    const saved = asRaw(e.service);
    if (!isInt(saved.id)) fail('lifecycle', seq, null, null, `service.saved carries no valid service id (${String(saved.id)}).`);
    this.lastSave = { id: saved.id, before: this.services.get(saved.id) ?? null };
    // Services saved before a field existed read as its default, as the catalogue reads them.
    this.services.set(saved.id, withServiceDefaults(saved as Partial<ServiceRecord> & Pick<ServiceRecord, 'id'>));
  }

  /**
   * The versions of service `id` a request logged now may have been decided
   * on (null: no such service). The catalogue saves one service at a time
   * and applies a save only once it is durable, so a request logged after
   * the latest service.saved may still have read the version that save
   * replaced; every earlier save was applied before the latest was logged.
   */
  seen(id: number): (ServiceRecord | null)[] {
    const current = this.services.get(id) ?? null;
    return this.lastSave?.id === id ? [current, this.lastSave.before] : [current];
  }
}
