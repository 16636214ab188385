/**
 * The kill test: concurrent orders (half with Idempotency-Keys) from
 * clients that record every acknowledged reply, SIGKILL at a random moment,
 * restart on the same data, and check that nothing acknowledged was lost:
 * every acknowledged order is stored with the same charge and status, every
 * wallet equals its initial credits minus the debits of its stored orders,
 * and retrying each acknowledged key returns the original answer.
 *
 * The lifecycle runs under the same kills: every fifth request of a worker
 * cancels one of its earlier orders (a pending order of a cancel service is
 * canceled and refunded at once), and every fifth completes one through the
 * admin API and asks for its refill. An acknowledged cancel must be canceled
 * after the restart with its whole debit back in the wallet, exactly once; an
 * acknowledged refill must exist, pending, and no refill moves money.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 } from '../mulberry32.js';
import { powerLossEnv, restoreDurableImages } from './power-loss.js';
import { spawnServer, type ServerProcess } from './server-process.js';

export interface CrashOptions {
  cycles: number;
  seed: number;
  accounts?: number;
  workers?: number;
  /** Upper bound of the random time each cycle runs before the kill. */
  runMsMax?: number;
  log?: (line: string) => void;
  /**
   * Power loss instead of a process kill: the server runs with the
   * power-loss recorder (power-loss.ts) and, after each kill, restarts on
   * only what it had synced.
   */
  powerLoss?: { library: string };
  /** More environment for the server (e.g. `WAL_SYNC_MODE`). */
  serverEnv?: Record<string, string>;
  /**
   * What is killed and what serves after: by default one server restarted
   * on its own data directory; `replicatedTarget` (replicated-target.ts) a
   * group whose leader is killed and replaced.
   */
  target?: (token: string) => CrashTarget;
}

/** The servers a kill test drives. */
export interface CrashTarget {
  /** Starts and returns the server that serves. */
  start(): Promise<ServerProcess>;
  /** SIGKILLs the server that serves; resolves with the one that serves next. */
  killServing(): Promise<ServerProcess>;
  /** Stops whatever still runs and removes its data. */
  close(): Promise<void>;
}

export interface CrashReport {
  cycles: number;
  acknowledged: number;
  acknowledgedWithKey: number;
  storedOrders: number;
  /** Acknowledged customer cancels (refunded at once) and refills. */
  cancelsAcknowledged: number;
  refillsAcknowledged: number;
  /** Restarts that applied a commit-log tail to LMDB first (sync mode 'log'). */
  logReplays: number;
  lost: number;
  problems: string[];
}

interface Ack {
  account: number;
  order: string;
  charge: number;
  key: string | null;
  body: string;
  payload: string;
  /** What was sent about the order after it was placed, and what was acknowledged. */
  cancel?: 'sent' | 'acked';
  complete?: 'sent' | 'acked';
  refill?: number;
}


// Enough for every cycle of a long run to place orders (at about 0.5 credits an
// order, some 20,000 orders per wallet) rather than hit BALANCE halfway.
const INITIAL_CREDITS = 10_000;
const RATE_MICRO = 1_000; // 0.001 credits per unit

async function waitHealthy(s: ServerProcess): Promise<void> {
  const res = await fetch(`${s.adminUrl}/healthz`);
  if (res.status !== 200) throw new Error('server not healthy after start');
}

export async function runCrashCycles(options: CrashOptions): Promise<CrashReport> {
  const random = mulberry32(options.seed);
  const log = options.log ?? (() => {});
  const accountsWanted = options.accounts ?? 8;
  const workers = options.workers ?? 16;
  const runMsMax = options.runMsMax ?? 600;
  const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-crash-'));
  const token = randomBytes(16).toString('hex');
  const problems: string[] = [];
  const acks: Ack[] = [];
  const imagesDir = options.powerLoss === undefined ? null : mkdtempSync(join(tmpdir(), 'credit-order-api-images-'));
  const env = { ...(options.serverEnv ?? {}), ...(options.powerLoss === undefined || imagesDir === null ? {} : powerLossEnv(options.powerLoss.library, dir, imagesDir)) };
  const target = options.target?.(token) ?? {
    start: () => spawnServer(dir, token, env),
    async killServing() {
      server.child.kill('SIGKILL');
      await server.exited;
      if (imagesDir !== null) restoreDurableImages(dir, imagesDir);
      return spawnServer(dir, token, env);
    },
    close: async () => {},
  };
  let server = await target.start();
  let logReplays = 0;
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${server.adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  try {
    await waitHealthy(server);
    const service = (
      await admin('POST', '/admin/v1/services', { platform: 'crash', name: 'crash', rate: RATE_MICRO / 1e6, min: 1, max: 1000, cancel: true, refill: true })
    ).body.service.id as number;
    const accounts: { id: number; key: string; secret: string }[] = [];
    for (let i = 0; i < accountsWanted; i++) {
      const created = await admin('POST', '/admin/v1/accounts', { name: `crash-${i}` });
      await admin('POST', `/admin/v1/accounts/${created.body.account.id}/credits`, { amount: INITIAL_CREDITS, reason: 'crash test' });
      accounts.push({ id: created.body.account.id, key: created.body.api_key, secret: created.body.api_secret });
    }

    for (let cycle = 1; cycle <= options.cycles; cycle++) {
      let stop = false;
      const base = server.url;
      const drive = async (w: number): Promise<void> => {
        const mine: Ack[] = [];
        for (let n = 0; !stop; n++) {
          const account = accounts[(w + n) % accounts.length]!;
          const earlier = mine.length === 0 ? undefined : mine[(n * 13) % mine.length];
          if (n % 5 === 3 && earlier !== undefined && earlier.cancel === undefined && earlier.complete === undefined) {
            if (!(await lifecycleStep(base, admin, accounts, earlier, 'cancel'))) return;
            continue;
          }
          if (n % 5 === 4 && earlier !== undefined && earlier.cancel === undefined && earlier.complete === undefined) {
            if (!(await lifecycleStep(base, admin, accounts, earlier, 'refill'))) return;
            continue;
          }
          const quantity = 1 + ((w * 31 + n * 7) % 1000);
          const payload = JSON.stringify({ service, target: `https://example.com/c${cycle}/w${w}/${n}`, quantity });
          const key = n % 2 === 0 ? `c${cycle}-w${w}-n${n}` : null;
          try {
            const res = await fetch(`${base}/api/v1/order`, {
              method: 'POST',
              headers: {
                'x-api-key': account.key,
                'x-api-secret': account.secret,
                'content-type': 'application/json',
                ...(key === null ? {} : { 'idempotency-key': key }),
              },
              body: payload,
            });
            const text = await res.text();
            if (res.status === 201) {
              const body = JSON.parse(text) as { order: string; charge: number };
              const ack: Ack = { account: account.id, order: body.order, charge: Math.round(body.charge * 1e6), key, body: text, payload };
              acks.push(ack);
              mine.push(ack);
            }
          } catch {
            // The server was killed mid-request: not acknowledged, nothing to check.
            return;
          }
        }
      };
      const running = Array.from({ length: workers }, (_, w) => drive(w));
      const runMs = 50 + Math.floor(random() * runMsMax);
      await new Promise((resolve) => setTimeout(resolve, runMs));
      const next = target.killServing();
      stop = true;
      await Promise.all(running);
      server = await next;
      if (server.output().includes("applied the commit log's tail")) logReplays++;
      await waitHealthy(server);
      const checked = await checkState(server, admin, accounts, acks, service);
      problems.push(...checked.problems.map((p) => `cycle ${cycle} (seed ${options.seed}): ${p}`));
      log(`cycle ${cycle}: killed after ${runMs} ms; ${acks.length} acknowledged so far, ${checked.stored} stored, problems ${checked.problems.length}`);
      if (problems.length > 0) break;
    }
    const final = await checkState(server, admin, accounts, acks, service);
    server.child.kill('SIGTERM');
    const exit = await server.exited;
    if (exit.code !== 0) problems.push(`SIGTERM exit code was ${exit.code ?? exit.signal}, expected 0`);
    const lost = acks.filter((a) => !final.storedIds.has(a.order)).length;
    return {
      cycles: options.cycles,
      acknowledged: acks.length,
      acknowledgedWithKey: acks.filter((a) => a.key !== null).length,
      storedOrders: final.stored,
      cancelsAcknowledged: acks.filter((a) => a.cancel === 'acked').length,
      refillsAcknowledged: acks.filter((a) => a.refill !== undefined).length,
      logReplays,
      lost,
      problems,
    };
  } finally {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await target.close();
    rmSync(dir, { recursive: true, force: true });
    if (imagesDir !== null) rmSync(imagesDir, { recursive: true, force: true });
  }
}

type Admin = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

/**
 * Cancels `ack`'s order as its customer, or completes it (admin) and asks for
 * a refill, recording what was sent and what was acknowledged. Returns false
 * when the server was killed mid-request.
 */
async function lifecycleStep(base: string, admin: Admin, accounts: { id: number; key: string; secret: string }[], ack: Ack, what: 'cancel' | 'refill'): Promise<boolean> {
  const account = accounts.find((a) => a.id === ack.account)!;
  const customer = (path: string): Promise<Response> =>
    fetch(`${base}/api/v1/${path}`, {
      method: 'POST',
      headers: { 'x-api-key': account.key, 'x-api-secret': account.secret, 'content-type': 'application/json' },
      body: JSON.stringify({ orders: [ack.order] }),
    });
  try {
    if (what === 'cancel') {
      ack.cancel = 'sent';
      const res = await customer('cancel');
      const body = (await res.json()) as { orders?: Record<string, { status?: string }> };
      if (body.orders?.[ack.order]?.status === 'canceled') ack.cancel = 'acked';
      return true;
    }
    ack.complete = 'sent';
    const moved = await admin('POST', `/admin/v1/orders/${ack.order}/status`, { status: 'completed' });
    if (moved.status !== 200) return true;
    ack.complete = 'acked';
    const res = await customer('refill');
    const body = (await res.json()) as { orders?: Record<string, { refill?: number }> };
    const refill = body.orders?.[ack.order]?.refill;
    if (refill !== undefined) ack.refill = refill;
    return true;
  } catch {
    return false;
  }
}

async function checkState(
  server: ServerProcess,
  admin: Admin,
  accounts: { id: number; key: string; secret: string }[],
  acks: Ack[],
  service: number,
): Promise<{ problems: string[]; stored: number; storedIds: Set<string> }> {
  const problems: string[] = [];
  const stored = new Map<string, { account: number; charge: number; debit: number; status: string; refill: { id: number; status: string } | null }>();
  for (const status of ['pending', 'completed', 'canceled']) {
    let cursor: string | null = null;
    do {
      const page: { body: { orders: any[]; next_cursor: string | null } } = await admin(
        'GET',
        `/admin/v1/orders?status=${status}&limit=500${cursor === null ? '' : `&cursor=${cursor}`}`,
      );
      for (const o of page.body.orders) {
        stored.set(o.id, { account: o.account, charge: Math.round(o.charge * 1e6), debit: Math.round(o.debit * 1e6), status: o.status, refill: o.refill });
      }
      cursor = page.body.next_cursor;
    } while (cursor !== null);
  }
  for (const ack of acks) {
    const order = stored.get(ack.order);
    // What the order may be: what was acknowledged, or anything sent but not acknowledged.
    const allowed = ack.cancel === 'acked' ? ['canceled'] : ack.complete === 'acked' ? ['completed'] : ['pending', ...(ack.cancel === 'sent' ? ['canceled'] : []), ...(ack.complete === 'sent' ? ['completed'] : [])];
    if (order === undefined) problems.push(`acknowledged order ${ack.order} is missing`);
    else if (order.charge !== ack.charge || order.account !== ack.account || !allowed.includes(order.status)) {
      problems.push(`acknowledged order ${ack.order} changed: ${JSON.stringify(order)} vs charge ${ack.charge}, expected ${allowed.join(' or ')}`);
    } else if (ack.refill !== undefined && (order.refill?.id !== ack.refill || order.refill.status !== 'pending')) {
      problems.push(`acknowledged refill ${ack.refill} of order ${ack.order} is ${JSON.stringify(order.refill)} after the restart`);
    }
  }
  const accountList: { id: number; credits: number }[] = [];
  for (let cursor: string | null = null; ; ) {
    const page = (await admin('GET', `/admin/v1/accounts?limit=500${cursor === null ? '' : `&cursor=${cursor}`}`)).body as { accounts: { id: number; credits: number }[]; next_cursor: string | null };
    accountList.push(...page.accounts);
    if (page.next_cursor === null) break;
    cursor = page.next_cursor;
  }
  if (accountList.length !== accounts.length) problems.push(`the account listing shows ${accountList.length} accounts, not the ${accounts.length} created`);
  for (const account of accountList) {
    let debits = 0;
    // A canceled order's whole debit came back; refills move nothing.
    for (const o of stored.values()) if (o.account === account.id && o.status !== 'canceled') debits += o.debit;
    const expected = INITIAL_CREDITS * 1e6 - debits;
    if (Math.round(account.credits * 1e6) !== expected) {
      problems.push(`wallet ${account.id} holds ${account.credits} but its ledger says ${expected / 1e6}`);
    }
    if (account.credits < 0) problems.push(`wallet ${account.id} is negative`);
  }
  const verify = await admin('GET', '/admin/v1/verify');
  if (verify.status !== 200) problems.push(`verify failed: ${verify.status} ${JSON.stringify(verify.body)}`);
  // Retrying every acknowledged key returns the original answer.
  for (const ack of acks) {
    if (ack.key === null) continue;
    const account = accounts.find((a) => a.id === ack.account)!;
    const res = await fetch(`${server.url}/api/v1/order`, {
      method: 'POST',
      headers: { 'x-api-key': account.key, 'x-api-secret': account.secret, 'content-type': 'application/json', 'idempotency-key': ack.key },
      body: ack.payload,
    });
    const text = await res.text();
    if (res.status !== 201 || text !== ack.body || res.headers.get('idempotent-replayed') !== 'true') {
      problems.push(`retrying key ${ack.key} gave ${res.status} ${text} instead of the original ${ack.body}`);
    }
  }
  void service;
  return { problems, stored: stored.size, storedIds: new Set(stored.keys()) };
}
