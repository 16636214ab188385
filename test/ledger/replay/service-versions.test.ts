/**
 * The catalogue as the log saved it: a request logged after a save may
 * have been decided on the version that save replaced, and on no older one.
 */
import { describe, expect, it } from 'vitest';
import { withServiceDefaults } from '../../../src/ledger/index.js';
import { ServiceVersions } from '../../../src/ledger/replay/service-versions.js';
import { findingOf } from '../../helpers/ledger-image.js';

const service = (id: number, fields: Record<string, unknown> = {}): Record<string, unknown> => ({ id, platform: 'p', name: `s${id}`, rate: 1, min: 1, max: 10, enabled: true, ...fields });

describe('the versions of a service a request may have read', () => {
  it('an unknown service has none', () => {
    expect(new ServiceVersions().seen(1)).toEqual([null]);
  });

  it('after a save of the service: the saved version and the one it replaced', () => {
    const versions = new ServiceVersions();
    versions.saved(1, { service: service(1, { cancel: false }) });
    versions.saved(2, { service: service(1, { cancel: true }) });
    expect(versions.seen(1).map((s) => s?.cancel)).toEqual([true, false]);
  });

  it('once another service is saved, only the latest version of this one', () => {
    const versions = new ServiceVersions();
    versions.saved(1, { service: service(1, { cancel: false }) });
    versions.saved(2, { service: service(1, { cancel: true }) });
    versions.saved(3, { service: service(2) });
    expect(versions.seen(1).map((s) => s?.cancel)).toEqual([true]);
    expect(versions.seen(2)).toHaveLength(2);
  });

  it('a service saved before a field existed reads as its default, as the catalogue reads it', () => {
    const versions = new ServiceVersions();
    versions.saved(1, { service: service(3) });
    expect(versions.seen(3)[0]).toEqual(withServiceDefaults(service(3) as Parameters<typeof withServiceDefaults>[0]));
  });

  it('a save without a valid service id is a lifecycle finding at its seq', () => {
    expect(findingOf(() => new ServiceVersions().saved(9, { service: { id: 'x' } }))).toMatchObject({ invariant: 'lifecycle', seq: 9 });
  });
});

describe('a save the replay cannot take', () => {
  it('names a service without a valid id', () => {
    expect(findingOf(() => new ServiceVersions().saved(4, { service: service(0, { id: 'one' }) })).sentence).toBe('Lifecycle check failed at seq 4: service.saved carries no valid service id (one).');
    expect(findingOf(() => new ServiceVersions().saved(4, {})).sentence).toBe('Lifecycle check failed at seq 4: service.saved carries no valid service id (undefined).');
  });
});
