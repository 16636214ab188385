/**
 * The conventional peer: Fastify + node-postgres, serving our customer
 * contract for the order path (DESIGN.md §3), so that the same load
 * generator (bench/http/runner.js) drives it.
 *
 *   POST /api/v1/order  X-API-Key, X-API-Secret, {service, target, quantity}
 *     201 {ok:true, order, charge, status:"pending", balance}
 *     401 AUTH, 403 BANNED, 400/413/415 VALIDATION, 422 SERVICE/QTY, 402 BALANCE
 *   GET /healthz
 *
 * How a careful developer would write it with this stack, nothing exotic:
 * - AUTH first (route-level onRequest hook, before the body is parsed): one
 *   indexed SELECT by api_key, then a constant-time comparison of SHA-256
 *   (secret) with the stored hash (an unknown key compares against a decoy).
 * - VALIDATION by a Fastify JSON schema (Ajv, additionalProperties false, no
 *   type coercion, no silent removal of extra properties).
 * - The service catalogue is tiny and read on every order: cached in the
 *   process and re-read every second (a disabled service takes effect
 *   within a second).
 * - charge = quantity × rate exactly in BigInt micro-credits (BIGINT columns).
 * - ONE transaction per order on a pooled connection (pool size POOL_SIZE,
 *   default 16): BEGIN; the guarded UPDATE … WHERE credits >= charge
 *   RETURNING credits; INSERT INTO orders with a random UUID; COMMIT. With
 *   synchronous_commit=on the COMMIT returns only after PostgreSQL has
 *   flushed its WAL, so the reply is sent after the order is durable.
 *   TX_MODE=cte does the same in one statement (a data-modifying CTE, one
 *   round trip, autocommit: still one transaction), the best case for pg.
 *
 * Not implemented (the peer does less work than ours per order): rate
 * limiting, idempotency keys, the unlimited plan, force-join, order status.
 *
 * Environment: HOST (127.0.0.1), PORT, POOL_SIZE (16), TX_MODE (explicit |
 * cte), and node-postgres's PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import pg from 'pg';
import { hashSecret } from './schema.js';

declare module 'fastify' {
  interface FastifyRequest {
    accountId: string;
  }
}

interface Service {
  rateMicro: bigint;
  min: bigint;
  max: bigint;
  enabled: boolean;
}

interface OrderBody {
  service: number;
  target: string;
  quantity: number;
}

const HOST = process.env['HOST'] ?? '127.0.0.1';
const PORT = Number(process.env['PORT'] ?? 3000);
const POOL_SIZE = Number(process.env['POOL_SIZE'] ?? 16);
const TX_MODE = process.env['TX_MODE'] ?? 'explicit';
if (TX_MODE !== 'explicit' && TX_MODE !== 'cte') throw new Error(`TX_MODE must be explicit or cte; got ${TX_MODE}`);

const BIGINT_MAX = (1n << 63n) - 1n;
const DECOY_HASH = hashSecret(randomBytes(32).toString('hex'));

const pool = new pg.Pool({ max: POOL_SIZE });
pool.on('error', (error) => process.stderr.write(`peer: idle pool client error: ${error.message}\n`));

// ------------------------------------------------------------ catalogue cache

let services = new Map<number, Service>();

async function loadServices(): Promise<void> {
  const { rows } = await pool.query<{ id: number; rate_micro: string; min_qty: string; max_qty: string; enabled: boolean }>(
    'SELECT id, rate_micro, min_qty, max_qty, enabled FROM services',
  );
  const next = new Map<number, Service>();
  for (const r of rows) next.set(r.id, { rateMicro: BigInt(r.rate_micro), min: BigInt(r.min_qty), max: BigInt(r.max_qty), enabled: r.enabled });
  services = next;
}

// ------------------------------------------------------------ replies

/** Exact decimal credits from micro-credits, as a JSON number ("0.001", "999999999"). */
function formatMicro(micro: bigint): string {
  const sign = micro < 0n ? '-' : '';
  const abs = micro < 0n ? -micro : micro;
  const whole = abs / 1_000_000n;
  const frac = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return sign + whole.toString() + (frac === '' ? '' : '.' + frac);
}

function fail(reply: FastifyReply, status: number, code: string, message: string, extra = ''): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'application/json; charset=utf-8')
    .send(`{"ok":false,"error":"${code}","message":${JSON.stringify(message)}${extra},"request_id":"${reply.request.id}"}`);
}

// ------------------------------------------------------------ app

const REQUEST_PREFIX = randomBytes(4).toString('hex');
let requestCounter = 0;

const app = Fastify({
  logger: false,
  bodyLimit: 16 * 1024,
  return503OnClosing: true,
  genReqId: () => `req_${REQUEST_PREFIX}${(requestCounter++).toString(36)}`,
  ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
});

app.decorateRequest('accountId', '');
// Only JSON bodies: anything else is 415 (Fastify accepts text/plain by default).
app.removeContentTypeParser('text/plain');

app.setNotFoundHandler((_request, reply) => fail(reply, 404, 'NOT_FOUND', 'There is no such endpoint.'));

app.setErrorHandler((error: { code?: string; statusCode?: number; validation?: unknown; message: string }, _request, reply) => {
  if (error.validation !== undefined) return fail(reply, 400, 'VALIDATION', `Invalid request body: ${error.message}.`);
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return fail(reply, 415, 'VALIDATION', 'Content-Type must be application/json.');
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return fail(reply, 413, 'VALIDATION', 'The request body is too large.');
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return fail(reply, 400, 'VALIDATION', `Invalid request: ${error.message}`);
  process.stderr.write(`peer: ${error.message}\n`);
  return fail(reply, 500, 'INTERNAL', 'Internal error.');
});

app.get('/healthz', async () => ({ ok: true }));

async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const key = request.headers['x-api-key'];
  const secret = request.headers['x-api-secret'];
  if (typeof key !== 'string' || typeof secret !== 'string' || key.length > 256) {
    fail(reply, 401, 'AUTH', 'Missing or invalid API key or secret.');
    return;
  }
  const { rows } = await pool.query<{ id: string; secret_sha256: Buffer; banned: boolean }>({
    name: 'auth',
    text: 'SELECT id, secret_sha256, banned FROM accounts WHERE api_key = $1',
    values: [key],
  });
  const account = rows[0];
  const matches = timingSafeEqual(hashSecret(secret), account?.secret_sha256 ?? DECOY_HASH);
  if (account === undefined || !matches) {
    fail(reply, 401, 'AUTH', 'Missing or invalid API key or secret.');
    return;
  }
  if (account.banned) {
    fail(reply, 403, 'BANNED', 'API access is disabled on this account.');
    return;
  }
  request.accountId = account.id;
}

const orderSchema = {
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['service', 'target', 'quantity'],
    properties: {
      service: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
      target: { type: 'string', minLength: 1, maxLength: 2048 },
      quantity: { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
    },
  },
} as const;

const UPDATE_SQL = 'UPDATE accounts SET credits = credits - $2 WHERE id = $1 AND credits >= $2 RETURNING credits';
const INSERT_SQL =
  'INSERT INTO orders (id, account_id, service_id, target, quantity, rate_micro, charge_micro) VALUES ($1, $2, $3, $4, $5, $6, $7)';
const CTE_SQL = `WITH debit AS (
  UPDATE accounts SET credits = credits - $2 WHERE id = $1 AND credits >= $2 RETURNING id, credits
), placed AS (
  INSERT INTO orders (id, account_id, service_id, target, quantity, rate_micro, charge_micro)
  SELECT $3, id, $4, $5, $6, $7, $2 FROM debit
)
SELECT credits FROM debit`;

/** Debits and records the order in one transaction; the new balance, or null when the guarded update matched no row. */
async function placeOrder(accountId: string, orderId: string, body: OrderBody, rate: bigint, charge: bigint): Promise<bigint | null> {
  if (TX_MODE === 'cte') {
    const { rows } = await pool.query<{ credits: string }>({
      name: 'order_cte',
      text: CTE_SQL,
      values: [accountId, charge.toString(), orderId, body.service, body.target, body.quantity, rate.toString()],
    });
    return rows[0] === undefined ? null : BigInt(rows[0].credits);
  }
  const client = await pool.connect();
  let release: Error | boolean = false;
  try {
    await client.query('BEGIN');
    const debit = await client.query<{ credits: string }>({ name: 'debit', text: UPDATE_SQL, values: [accountId, charge.toString()] });
    const row = debit.rows[0];
    if (row === undefined) {
      await client.query('ROLLBACK');
      return null;
    }
    await client.query({
      name: 'insert_order',
      text: INSERT_SQL,
      values: [orderId, accountId, body.service, body.target, body.quantity, rate.toString(), charge.toString()],
    });
    await client.query('COMMIT');
    return BigInt(row.credits);
  } catch (error) {
    // The connection's state is unknown (e.g. failed mid-transaction): do not reuse it.
    release = error as Error;
    throw error;
  } finally {
    client.release(release);
  }
}

app.post<{ Body: OrderBody }>('/api/v1/order', { onRequest: authenticate, schema: orderSchema }, async (request, reply) => {
  const body = request.body;
  const service = services.get(body.service);
  if (service === undefined || !service.enabled) return fail(reply, 422, 'SERVICE', 'Unknown or disabled service.');
  const quantity = BigInt(body.quantity);
  if (quantity < service.min || quantity > service.max) {
    return fail(reply, 422, 'QTY', `Quantity must be between ${service.min} and ${service.max}.`, `,"min":${service.min},"max":${service.max}`);
  }
  const charge = quantity * service.rateMicro;
  if (charge > BIGINT_MAX) return fail(reply, 422, 'QTY', 'The charge for this quantity is too large.');
  const orderId = randomUUID();
  const balance = await placeOrder(request.accountId, orderId, body, service.rateMicro, charge);
  if (balance === null) return fail(reply, 402, 'BALANCE', 'Not enough credits for this order.');
  return reply
    .code(201)
    .header('content-type', 'application/json; charset=utf-8')
    .send(`{"ok":true,"order":"${orderId}","charge":${formatMicro(charge)},"status":"pending","balance":${formatMicro(balance)}}`);
});

// ------------------------------------------------------------ start / stop

await loadServices();
const refresh = setInterval(() => {
  loadServices().catch((error: unknown) => process.stderr.write(`peer: reloading services failed: ${(error as Error).message}\n`));
}, 1000);
refresh.unref();

await app.listen({ host: HOST, port: PORT });
process.stdout.write(`peer listening on http://${HOST}:${PORT} (pool ${POOL_SIZE}, tx ${TX_MODE})\n`);

let closing = false;
process.on('SIGTERM', () => {
  if (closing) return;
  closing = true;
  clearInterval(refresh);
  app
    .close()
    .then(() => pool.end())
    .then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`peer: shutdown failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
});
