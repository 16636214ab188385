/**
 * Where a batch is made durable before LMDB takes it (log-first.ts): the
 * local commit log (sync mode 'log') or, in replicated mode, the log table
 * in PostgreSQL (src/replication). `append` resolves only once the record at
 * `position` is durable there; it is called one record at a time, in
 * increasing positions.
 */
export interface DurableLog {
  append(position: number, record: Buffer): Promise<void>;
}
