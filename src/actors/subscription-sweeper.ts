/**
 * Ends subscriptions whose expiry has passed. Each becomes Expired through
 * a `subscription-status` command to its wallet actor, so the move is an
 * event in the log like every state change, serialised with the
 * subscription's posts, and durable before the step that made it resolves.
 *
 * It reads the expiry index (`subscriptionExpiry`, keyed by [expiry, id]
 * and written in the same commit as each subscription), earliest first, so
 * each step reads only passed expiries, at most `stepMax` of them. The
 * clock is the injected one, so tests move time and call `step()`. Only the
 * leader sweeps (`isLeader`), as for the lease sweep (lease-sweeper.ts).
 */
import type { Clock } from '../platform/index.js';
import type { Store } from '../wal/index.js';
import type { Registry } from './registry.js';
import type { Delivery } from './wallet-actor.js';
import { LEASE_SWEEP_TURN_MAX, SUBSCRIPTION_SWEEP_STEP_MAX } from './limits.js';

export class SubscriptionSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(
    private readonly store: Pick<Store, 'tables'>,
    private readonly registry: Pick<Registry, 'get'>,
    private readonly clock: Clock,
    private readonly isLeader: () => boolean,
    private readonly stepMax = SUBSCRIPTION_SWEEP_STEP_MAX,
  ) {}

  /** One bounded step: expires up to `stepMax` subscriptions and resolves with how many once their moves are durable. */
  step(): Promise<number> {
    this.running ??= this.expire().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async expire(): Promise<number> {
    if (!this.isLeader()) return 0;
    // Keys sort by expiry: everything before [nowMs + 1] has passed (an expiry ends at its instant).
    const due = [...this.store.tables.subscriptionExpiry.getRange({ end: [this.clock.wallMs() + 1], limit: this.stepMax })];
    const moves: Delivery[] = [];
    for (let i = 0; i < due.length; i++) {
      // A few commands per turn of the event loop, as the lease sweep sends them.
      if (i > 0 && i % LEASE_SWEEP_TURN_MAX === 0) await new Promise((resolve) => setImmediate(resolve));
      const { key, value } = due[i]!;
      const account = this.registry.get(value as number);
      if (account === undefined) continue;
      const subscriptionId = (key as [number, number])[1];
      const delivery = account.actor.send({ kind: 'subscription-status', subscriptionId, to: 'Expired', reason: 'its expiry passed' });
      if (delivery === null) break;
      // One canceled or completed since its entry was read is refused, and left as it is.
      if (delivery.decision.outcome.kind === 'changed') moves.push(delivery);
    }
    await Promise.all(moves.map((m) => m.durable));
    return moves.length;
  }

  start(intervalMs: number, onError: (error: unknown) => void): void {
    this.timer = setInterval(() => {
      this.step().catch(onError);
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }
}
