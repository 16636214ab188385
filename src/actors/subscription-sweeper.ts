/**
 * Ends subscriptions whose expiry has passed: each becomes Expired through
 * a `subscription-status` command to its wallet actor (see sweep.ts). It
 * reads the expiry index (`subscriptionExpiry`, keyed by [expiry, id] and
 * written in the same commit as each subscription), earliest first, at
 * most `stepMax` entries a step. The clock is the injected one, so tests
 * move time and call `step()`.
 */
import type { Clock } from '../platform/index.js';
import type { Store } from '../wal/index.js';
import type { Registry } from './registry.js';
import { Sweep } from './sweep.js';
import { SUBSCRIPTION_SWEEP_STEP_MAX } from './limits.js';

export class SubscriptionSweeper extends Sweep {
  constructor(store: Pick<Store, 'tables'>, registry: Pick<Registry, 'get'>, clock: Clock, isLeader: () => boolean, stepMax = SUBSCRIPTION_SWEEP_STEP_MAX) {
    super(registry, isLeader, () =>
      // Keys sort by expiry: everything before [nowMs + 1] has passed (an expiry ends at its instant).
      [...store.tables.subscriptionExpiry.getRange({ end: [clock.wallMs() + 1], limit: stepMax })].map(({ key, value }) => ({
        account: value as number,
        request: { kind: 'subscription-status', subscriptionId: (key as [number, number])[1], to: 'Expired', reason: 'its expiry passed' },
      })),
    );
  }
}
