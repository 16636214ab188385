/**
 * Puts claimed orders whose lease has ended back in the claim queue. A
 * worker that crashed, or whose claim's reply was lost, leaves its orders
 * processing; once the lease ends each becomes pending again through an
 * `expire-lease` command to its wallet actor, so the move is an event in
 * the log like every state change, serialised with the order's other
 * moves, and durable before the sweep step that made it resolves (see
 * sweep.ts, which also holds the leader-only rule and the pacing).
 *
 * It reads the lease index (`leases`, keyed by [lease end, order id] and
 * written in the same commit as each lease), earliest end first, so each
 * step reads only ended leases, at most `stepMax` of them: the work per
 * tick is bounded whatever the backlog. The clock is the injected one, so
 * tests move time and call `step()`. Only the leader sweeps (`isLeader`):
 * on a replicated group the followers apply the leader's log and must not
 * write their own. Claims call `step()` too before they read the queue, so
 * an order whose lease has ended is claimable at once, sweep or no sweep.
 */
import type { Clock } from '../platform/index.js';
import type { Registry } from './registry.js';
import type { Store } from '../wal/index.js';
import { Sweep } from './sweep.js';
import { LEASE_SWEEP_STEP_MAX } from './limits.js';

export class LeaseSweeper extends Sweep {
  constructor(
    store: Pick<Store, 'tables'>,
    registry: Pick<Registry, 'get'>,
    clock: Clock,
    /** Whether this node writes the log: a standalone node always does. */
    isLeader: () => boolean,
    stepMax = LEASE_SWEEP_STEP_MAX,
  ) {
    super(registry, isLeader, () =>
      // Keys sort by lease end: everything before [nowMs + 1] has ended (a lease ends at its instant).
      [...store.tables.leases.getRange({ end: [clock.wallMs() + 1], limit: stepMax })].map(({ key, value }) => ({
        account: value as number,
        request: { kind: 'expire-lease', orderId: (key as [number, string])[1] },
      })),
    );
  }
}
