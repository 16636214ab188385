/**
 * A sweep: bounded steps of background work over a time index (leases that
 * ended, subscriptions whose expiry passed), run one at a time on a timer
 * or on demand. Each step reads the entries due now (`due`, at most its
 * bound) and sends one command per entry to its wallet actor, so each
 * change is an event in the log like every state change, serialised with
 * the record's other changes, and durable before the step resolves. The
 * commands go a few per turn of the event loop (LEASE_SWEEP_TURN_MAX), so
 * orders arriving meanwhile wait behind no more than one batch. Only the
 * leader sweeps (`isLeader`): on a replicated group the followers apply the
 * leader's log and must not write their own.
 */
import type { Registry } from './registry.js';
import type { Request } from './request.js';
import type { Delivery } from './wallet-actor.js';
import { LEASE_SWEEP_TURN_MAX } from './limits.js';

/** One due entry's command, to the actor of `account`. */
export interface DueCommand {
  account: number;
  request: Request;
}

export class Sweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(
    private readonly registry: Pick<Registry, 'get'>,
    private readonly isLeader: () => boolean,
    private readonly due: () => DueCommand[],
  ) {}

  /** Runs one step (or joins the one running) and resolves with how many records it changed, once durable. */
  step(): Promise<number> {
    this.running ??= this.send().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async send(): Promise<number> {
    if (!this.isLeader()) return 0;
    const due = this.due();
    const changes: Delivery[] = [];
    for (let i = 0; i < due.length; i++) {
      if (i > 0 && i % LEASE_SWEEP_TURN_MAX === 0) await new Promise((resolve) => setImmediate(resolve));
      const account = this.registry.get(due[i]!.account);
      if (account === undefined) continue;
      const delivery = account.actor.send(due[i]!.request);
      // A full mailbox ends the step early; the next tick goes on.
      if (delivery === null) break;
      // A record changed since its entry was read is refused, and left as it is.
      if (delivery.decision.outcome.kind === 'changed') changes.push(delivery);
    }
    await Promise.all(changes.map((c) => c.durable));
    return changes.length;
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
