/**
 * What a caller of startServer may set besides the configuration: the
 * clock, the logger, the fail-stop handler and the fault and pacing hooks
 * tests use. Exported from server.ts.
 */
import type { Logger } from 'pino';
import type { Clock } from '../platform/index.js';
import type { openStore, Wal } from '../wal/index.js';
import type { ReplicaRole } from './replica-wal.js';

export interface ServerOptions {
  clock?: Clock;
  log?: Logger;
  /** Called when a commit fails or an invariant breaks; the default logs and exits (fail-stop). */
  onFatal?: (error: unknown) => void;
  /** How the default fail-stop handler ends the process (tests observe it instead). */
  exit?: (code: number) => void;
  /** Replace the WAL (fault injection in tests). */
  wal?: (store: ReturnType<typeof openStore>, onFatal: (error: unknown) => void) => Wal;
  /**
   * How often the Idempotency-Key sweep runs (wall time; 60 s). Null: never
   * by itself (tests on an injected clock call `sweeper.runOnce()`).
   */
  sweepEveryMs?: number | null;
  /**
   * How often the lease sweep runs (wall time; LEASE_SWEEP_EVERY_MS). Null:
   * never by itself (tests on an injected clock call `leases.step()`;
   * claims still put ended leases back in the queue).
   */
  leaseSweepEveryMs?: number | null;
  /** How often the subscription sweep runs (SUBSCRIPTION_SWEEP_EVERY_MS by default); null: never (tests call step()). */
  subscriptionSweepEveryMs?: number | null;
  /**
   * How often (wall time) the webhook dispatcher looks for retries that are
   * due on the clock (250 ms). New messages are sent as soon as they are
   * durable, whatever this is.
   */
  webhookPollMs?: number;
  /** The jitter source of webhook retries, in [0, 1) (tests make it exact). */
  random?: () => number;
  /** Webhook deliveries take only the order path's spare capacity (delivery-allowance.ts; default true; tests that count deliveries turn it off). */
  webhookYield?: boolean;
  /** Queue messages the webhook dispatcher reads ahead (default QUEUE_WINDOW_MAX; tests make it small). */
  webhookWindowMax?: number;
  /** Index entries one filtered admin listing examines (default SCAN_ENTRIES_MAX; tests make it small). */
  adminScanEntriesMax?: number;
  /** API keys whose verified secret is remembered (default VERIFIED_SECRETS_MAX; tests make it small). */
  verifiedSecretsMax?: number;
  /** Replicated mode: this node's role in its group (set by the replicated node, src/app/replicated-node.ts); absent: standalone. */
  replica?: ReplicaRole;
}
