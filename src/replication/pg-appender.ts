/**
 * The leader's durable log in replicated mode (the `DurableLog` the
 * log-first WAL writes to): each record is one fenced INSERT, one
 * PostgreSQL commit per batch, which with a synchronous standby returns
 * only once two machines have it on disk. A failure of the connection is
 * retried until PostgreSQL answers again (a failover: the client finds the
 * promoted standby); the replies of the batch wait meanwhile. A refusal by
 * the fence, or any other error, rejects, and the WAL stops the process.
 */
import type { DurableLog } from '../wal/index.js';
import { connectionTrouble, type GroupDb } from './group-db.js';
import { RETRY_EVERY_MS } from './limits.js';

export class PgAppender implements DurableLog {
  constructor(
    private readonly db: GroupDb,
    private readonly epoch: number,
    private readonly onRetry: (error: unknown) => void = () => {},
  ) {}

  async append(position: number, record: Buffer): Promise<void> {
    for (;;) {
      try {
        await this.db.append(this.epoch, position, record);
        return;
      } catch (error) {
        if (!connectionTrouble(error)) throw error;
        this.onRetry(error);
        await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY_MS));
      }
    }
  }
}
