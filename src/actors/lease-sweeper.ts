/**
 * Puts claimed orders whose lease has ended back in the claim queue. A
 * worker that crashed, or whose claim's reply was lost, leaves its orders
 * processing; once the lease ends each becomes pending again through an
 * `expire-lease` command to its wallet actor, so the move is an event in
 * the log like every state change, serialised with the order's other
 * moves, and durable before the sweep step that made it resolves.
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
import type { Delivery } from './wallet-actor.js';
import type { Registry } from './registry.js';
import type { Store } from '../wal/index.js';
import { LEASE_SWEEP_STEP_MAX, LEASE_SWEEP_TURN_MAX } from './limits.js';

export class LeaseSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(
    private readonly store: Pick<Store, 'tables'>,
    private readonly registry: Pick<Registry, 'get'>,
    private readonly clock: Clock,
    /** Whether this node writes the log: a standalone node always does. */
    private readonly isLeader: () => boolean,
    private readonly stepMax = LEASE_SWEEP_STEP_MAX,
  ) {}

  /**
   * One bounded step: puts up to `stepMax` orders whose lease has ended back
   * in the queue, and resolves with how many once their moves are durable.
   * Steps run one at a time; a caller during one waits for it and gets its count.
   */
  step(): Promise<number> {
    this.running ??= this.expire().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async expire(): Promise<number> {
    if (!this.isLeader()) return 0;
    const nowMs = this.clock.wallMs();
    // Keys sort by lease end: everything before [nowMs + 1] has ended (a lease ends at its instant).
    const ended = [...this.store.tables.leases.getRange({ end: [nowMs + 1], limit: this.stepMax })];
    const moves: Delivery[] = [];
    for (let i = 0; i < ended.length; i++) {
      // The commands of one step are sent a few at a time, each batch in its own turn of the event loop, so orders wait behind no more than one batch.
      if (i > 0 && i % LEASE_SWEEP_TURN_MAX === 0) await new Promise((resolve) => setImmediate(resolve));
      const { key, value } = ended[i]!;
      const account = this.registry.get(value as number);
      if (account === undefined) continue;
      const delivery = account.actor.send({ kind: 'expire-lease', orderId: (key as [number, string])[1] });
      // A full mailbox ends the step early; the next tick goes on.
      if (delivery === null) break;
      // An order extended, released or moved since its entry was read is refused, and left as it is.
      if (delivery.decision.outcome.kind === 'changed') moves.push(delivery);
    }
    await Promise.all(moves.map((m) => m.durable));
    return moves.length;
  }

  start(intervalMs: number, onError: (error: unknown) => void): void {
    this.timer = setInterval(() => {
      this.step().catch(onError);
    }, intervalMs);
    // The sweep alone must not keep the process alive.
    this.timer.unref();
  }

  /** No new step starts; resolves once a running one has ended (its errors were reported by `start`'s caller). */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }
}
