/**
 * The group's tables in PostgreSQL, and every statement a node runs on them.
 *
 *   coa_log     one row per group-commit batch: position, the leader's
 *               epoch and name, the record (src/wal/log-record.ts framing)
 *   coa_leader  one row: the leader's name, its epoch, when its lease ends
 *               (on PostgreSQL's clock)
 *   coa_nodes   one row per node: the position it has applied and flushed
 *               into its own LMDB, and when it last said so
 *   coa_group   one row: fingerprints of the keys every node must share,
 *               and the position the log has been trimmed to
 *
 * Fencing lives in the append: a single statement that inserts the record
 * only while the leader row still carries the appending node's epoch,
 * holding that row FOR SHARE until it commits. Taking the lease is an
 * UPDATE of that row, so it waits for an append in progress to commit and
 * every append after it sees the new epoch and inserts nothing. See
 * docs/RELIABILITY.md, "One leader, fenced".
 *
 * The client is postgres.js: it takes a URI with several hosts and
 * `target_session_attrs=read-write`, so after a failover its next
 * connection finds the promoted standby without a restart.
 */
import postgres from 'postgres';
import { CONNECT_TIMEOUT_SECONDS, NODE_RETENTION_MS, POOL_CONNECTIONS_MAX, TRIM_RECORDS_MAX } from './limits.js';

export interface LogRow {
  position: number;
  record: Buffer;
}

/** A fingerprint of each key the nodes of a group must share. */
export interface GroupKeys {
  adminToken: string;
  sealingKey: string;
  orderIdKey: string;
}

/** Raised when an append finds that another node has taken the lease: this node must never append again. */
export class FencedError extends Error {
  constructor(node: string, epoch: number) {
    super(`node ${node} lost the leadership of epoch ${epoch}: another node took the lease, so this one stops without acknowledging anything more`);
  }
}

/** Transient failures: the connection, or PostgreSQL restarting, failing over or not yet writable. Anything else is a fault. */
export function connectionTrouble(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  return /^(E[A-Z]+|CONNECTION_[A-Z_]+|CONNECT_TIMEOUT)$/.test(code) || code.startsWith('08') || code.startsWith('57P') || code === '25006' || code.startsWith('53');
}

const SCHEMA = [
  `create table if not exists coa_log (position bigint primary key, epoch bigint not null, node text not null, record bytea not null)`,
  `create table if not exists coa_leader (id int primary key check (id = 1), node text, epoch bigint not null, expires_at timestamptz not null)`,
  `insert into coa_leader values (1, null, 0, '-infinity') on conflict do nothing`,
  `create table if not exists coa_nodes (node text primary key, flushed bigint not null, seen_at timestamptz not null)`,
  `create table if not exists coa_group (id int primary key check (id = 1), admin_token text not null, sealing_key text not null, order_id_key text not null, trimmed_to bigint not null default 0)`,
];

export class GroupDb {
  readonly sql: postgres.Sql;

  constructor(
    url: string,
    readonly node: string,
  ) {
    this.sql = postgres(url, {
      max: POOL_CONNECTIONS_MAX,
      connect_timeout: CONNECT_TIMEOUT_SECONDS,
      onnotice: () => {},
      // Positions and epochs are bigint columns; they stay far below 2^53.
      types: { bigint: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) } },
    });
  }

  /** Creates the tables if they are missing (one node at a time: an advisory lock for the transaction). */
  async ensureSchema(): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(7368519)`; // not a limit: the advisory lock key that serialises schema creation
      for (const statement of SCHEMA) await tx.unsafe(statement);
    });
  }

  /**
   * Records this group's key fingerprints if it has none yet, and returns
   * the names of the keys whose fingerprint differs from the group's.
   */
  async checkKeys(keys: GroupKeys): Promise<string[]> {
    await this.sql`insert into coa_group (id, admin_token, sealing_key, order_id_key) values (1, ${keys.adminToken}, ${keys.sealingKey}, ${keys.orderIdKey}) on conflict do nothing`;
    const [row] = await this.sql<{ admin_token: string; sealing_key: string; order_id_key: string }[]>`select admin_token, sealing_key, order_id_key from coa_group where id = 1`;
    const differ: string[] = [];
    if (row!.admin_token !== keys.adminToken) differ.push('ADMIN_TOKEN');
    if (row!.sealing_key !== keys.sealingKey) differ.push('WEBHOOKS_SECRET_KEY');
    if (row!.order_id_key !== keys.orderIdKey) differ.push('ORDER_ID_KEY');
    return differ;
  }

  /**
   * Appends one record, fenced: inserted only while the lease row carries
   * this node's epoch. A retry of an append whose first try committed (the
   * reply was lost with the connection) finds its own record and succeeds.
   */
  async append(epoch: number, position: number, record: Buffer): Promise<void> {
    const inserted = await this.sql`
      with lead as (select 1 from coa_leader where id = 1 and epoch = ${epoch} and node = ${this.node} for share)
      insert into coa_log (position, epoch, node, record) select ${position}, ${epoch}, ${this.node}, ${record} from lead
      on conflict (position) do nothing returning position`;
    if (inserted.length === 1) return;
    const [row] = await this.sql<{ epoch: number; node: string; same: boolean }[]>`select epoch, node, record = ${record} as same from coa_log where position = ${position}`;
    if (row !== undefined && row.epoch === epoch && row.node === this.node && row.same) return;
    throw new FencedError(this.node, epoch);
  }

  /** The records after `position`, oldest first, at most `limit`. */
  read(position: number, limit: number): Promise<LogRow[]> {
    return this.sql<LogRow[]>`select position, record from coa_log where position > ${position} order by position limit ${limit}`;
  }

  /** The highest position the log holds or has held (0: none). */
  async lastPosition(): Promise<number> {
    const [row] = await this.sql<{ last: number }[]>`select greatest(coalesce((select max(position) from coa_log), 0), (select trimmed_to from coa_group where id = 1)) as last`;
    return row?.last ?? 0;
  }

  /** The position the log has been trimmed to: a node must hold at least this much to follow it. */
  async trimmedTo(): Promise<number> {
    const [row] = await this.sql<{ trimmed_to: number }[]>`select trimmed_to from coa_group where id = 1`;
    return row?.trimmed_to ?? 0;
  }

  /** Takes the lease if it has run out; returns the new epoch, or null when another node holds it. */
  async tryAcquire(leaseMs: number): Promise<number | null> {
    const rows = await this.sql<{ epoch: number }[]>`
      update coa_leader set node = ${this.node}, epoch = epoch + 1, expires_at = clock_timestamp() + ${leaseMs} * interval '1 millisecond'
      where id = 1 and expires_at < clock_timestamp() returning epoch`;
    return rows[0]?.epoch ?? null;
  }

  /** Extends this node's lease of `epoch`; false when another node has taken it. */
  async renew(epoch: number, leaseMs: number): Promise<boolean> {
    const rows = await this.sql`
      update coa_leader set expires_at = clock_timestamp() + ${leaseMs} * interval '1 millisecond'
      where id = 1 and epoch = ${epoch} and node = ${this.node} returning epoch`;
    return rows.length === 1;
  }

  /** Who leads, and whether the lease has run out. */
  async leader(): Promise<{ node: string | null; epoch: number; expired: boolean }> {
    const [row] = await this.sql<{ node: string | null; epoch: number; expired: boolean }[]>`select node, epoch, expires_at < clock_timestamp() as expired from coa_leader where id = 1`;
    return row!;
  }

  /** Records the position this node has applied and flushed, and that it lives. */
  async report(flushed: number): Promise<void> {
    await this.sql`
      insert into coa_nodes (node, flushed, seen_at) values (${this.node}, ${flushed}, clock_timestamp())
      on conflict (node) do update set flushed = greatest(coa_nodes.flushed, excluded.flushed), seen_at = excluded.seen_at`;
  }

  /**
   * Deletes records every live node has flushed, keeping `keep` behind the
   * newest; returns how many went. Bounded per call.
   */
  async trim(keep: number): Promise<number> {
    return this.sql.begin(async (tx) => {
      const [row] = await tx<{ upto: number | null }[]>`
        select least(
          (select min(flushed) from coa_nodes where seen_at > clock_timestamp() - ${NODE_RETENTION_MS} * interval '1 millisecond'),
          (select max(position) from coa_log) - ${keep},
          (select min(position) from coa_log) + ${TRIM_RECORDS_MAX} - 1
        ) as upto`;
      const upto = row?.upto ?? null;
      if (upto === null || upto < 1) return 0;
      const deleted = await tx`delete from coa_log where position <= ${upto}`;
      await tx`update coa_group set trimmed_to = greatest(trimmed_to, ${upto}) where id = 1`;
      return deleted.count;
    });
  }

  /** Whether the PostgreSQL this node writes to has a synchronous standby streaming. */
  async synchronousStandby(): Promise<boolean> {
    const rows = await this.sql`select 1 from pg_stat_replication where state = 'streaming' and sync_state in ('sync', 'quorum')`;
    return rows.length > 0;
  }

  close(): Promise<void> {
    return this.sql.end({ timeout: 1 });
  }
}
