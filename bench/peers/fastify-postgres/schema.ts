/**
 * The peer's tables and its seeding path (direct SQL, no admin API).
 *
 * Money is BIGINT micro-credits (1 credit = 1,000,000), like ours. Order ids
 * are random UUIDs (128 bits; opaque, not guessable, reveal no volume), the
 * primary key of `orders`, the usual choice in a conventional schema.
 */
import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';

export const SCHEMA_SQL = `
CREATE TABLE services (
  id          integer PRIMARY KEY,
  platform    text    NOT NULL,
  name        text    NOT NULL,
  rate_micro  bigint  NOT NULL CHECK (rate_micro >= 0),
  min_qty     bigint  NOT NULL,
  max_qty     bigint  NOT NULL,
  enabled     boolean NOT NULL DEFAULT true
);
CREATE TABLE accounts (
  id             bigint  PRIMARY KEY,
  name           text    NOT NULL,
  api_key        text    NOT NULL UNIQUE,
  secret_sha256  bytea   NOT NULL,
  credits        bigint  NOT NULL CHECK (credits >= 0),
  banned         boolean NOT NULL DEFAULT false
);
CREATE TABLE orders (
  id            uuid        PRIMARY KEY,
  account_id    bigint      NOT NULL REFERENCES accounts (id),
  service_id    integer     NOT NULL REFERENCES services (id),
  target        text        NOT NULL,
  quantity      bigint      NOT NULL,
  rate_micro    bigint      NOT NULL,
  charge_micro  bigint      NOT NULL,
  status        text        NOT NULL DEFAULT 'pending',
  created_at    timestamptz NOT NULL DEFAULT now()
);
`;

export interface SeededAccount {
  id: number;
  key: string;
  secret: string;
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/**
 * Creates the tables, one service and `count` accounts with `creditsMicro`
 * each, in one transaction (one INSERT … SELECT FROM unnest(...) of arrays:
 * as fast as generate_series, with secrets that are random rather than
 * derived). Returns the keys and secrets for the load generator.
 */
export async function createAndSeed(
  client: pg.ClientBase,
  count: number,
  creditsMicro: bigint,
  service: { id: number; rateMicro: bigint; min: number; max: number },
): Promise<SeededAccount[]> {
  const accounts: SeededAccount[] = [];
  const ids: string[] = [];
  const keys: string[] = [];
  const hashes: Buffer[] = [];
  for (let i = 1; i <= count; i++) {
    const key = 'key_' + randomBytes(16).toString('hex');
    const secret = 'sec_' + randomBytes(32).toString('base64url');
    accounts.push({ id: i, key, secret });
    ids.push(String(i));
    keys.push(key);
    hashes.push(hashSecret(secret));
  }
  await client.query('BEGIN');
  await client.query(SCHEMA_SQL);
  await client.query('INSERT INTO services (id, platform, name, rate_micro, min_qty, max_qty) VALUES ($1, $2, $3, $4, $5, $6)', [
    service.id,
    'bench',
    'bench',
    service.rateMicro.toString(),
    service.min,
    service.max,
  ]);
  await client.query(
    `INSERT INTO accounts (id, name, api_key, secret_sha256, credits)
     SELECT a.id, 'bench-' || a.id, a.key, a.hash, $4::bigint
     FROM unnest($1::bigint[], $2::text[], $3::bytea[]) AS a (id, key, hash)`,
    [ids, keys, hashes, creditsMicro.toString()],
  );
  await client.query('COMMIT');
  await client.query('VACUUM ANALYZE');
  await client.query('CHECKPOINT');
  return accounts;
}
