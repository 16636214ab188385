/** What the HTTP handlers need from the rest of the process. */
import type { Logger } from 'pino';
import type { Account, Catalog, ForceJoinVerdict, Registry } from '../actors/index.js';
import type { Clock } from '../clock.js';
import type { Store, Wal } from '../wal/index.js';
import type { Metrics } from '../ops/index.js';
import type { AuthFailureLimiter } from './auth-failures.js';
import type { AbuseLog } from './abuse-log.js';

export interface HttpLimits {
  bodyBytesMax: number;
}

export interface AppContext {
  registry: Registry;
  catalog: Catalog;
  store: Store;
  wal: Wal;
  clock: Clock;
  log: Logger;
  limits: HttpLimits;
  authFailures: AuthFailureLimiter;
  abuse: AbuseLog;
  adminToken: string;
  metrics: Metrics;
  openapiBody: string;
  /**
   * The force-join verdict for an account's order, or null (synchronously,
   * so the order path stays synchronous) when no channel is required.
   */
  forceJoinVerdict: (account: Account) => Promise<ForceJoinVerdict> | null;
  /** The operator changed an account's force-join settings: forget cached answers. */
  forceJoinChanged: (accountId: number) => void;
  /** True while the server is shutting down: new requests get 503. */
  draining: () => boolean;
}
