/**
 * The durable-orders cross-check: every wallet's durable balance before and
 * after a run (GET /admin/v1/accounts waits for pending syncs); the total
 * debited divided by the charge of one order is the number of orders that
 * became durable, which must cover every 201 the clients saw.
 */
import { admin, type ServerProcess } from './server-process.js';

/** Exact decimal credits text ("999999999.872") → micro-credits. */
export function microOf(text: string): bigint {
  const m = /^(-)?(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (m === null) throw new Error(`unexpected credits value ${text}`);
  const micro = BigInt(m[2]!) * 1_000_000n + BigInt((m[3] ?? '').padEnd(6, '0'));
  return m[1] === undefined ? micro : -micro;
}

/** Every wallet's durable balance (the admin listing waits for pending syncs), a page of 500 at a time. */
export async function balances(server: ServerProcess): Promise<Map<number, bigint>> {
  const out = new Map<number, bigint>();
  const pattern = /\{"id":(\d+),"name":"(?:[^"\\]|\\.)*","credits":(-?[0-9.]+)/g;
  for (let cursor: string | null = null; ; ) {
    const text = await admin(server, 'GET', `/admin/v1/accounts?limit=500${cursor === null ? '' : `&cursor=${cursor}`}`);
    const before = out.size;
    for (const m of text.matchAll(pattern)) out.set(Number(m[1]), microOf(m[2]!));
    // Credits are read from the text (exact decimals, never through a float);
    // make sure that saw every account the JSON holds.
    const page = JSON.parse(text) as { accounts?: unknown[]; next_cursor?: string | null };
    if (page.accounts?.length !== out.size - before) {
      throw new Error(`could not read the credits of every account from GET /admin/v1/accounts (${out.size - before} of ${String(page.accounts?.length)}); did its format change?`);
    }
    if (typeof page.next_cursor !== 'string') return out;
    cursor = page.next_cursor;
  }
}

export interface LedgerCheck {
  durableOrders: number;
  debitedCredits: string;
  accountsOrdering: number;
  minPerAccount: number;
  maxPerAccount: number;
  negativeWallets: number;
  /** Wallet deltas that are not a whole number of orders (must be 0). */
  oddDeltas: number;
}

export function ledgerCheck(before: Map<number, bigint>, after: Map<number, bigint>, chargeMicro: bigint): LedgerCheck {
  let debited = 0n;
  let touched = 0;
  let min = Infinity;
  let max = 0;
  let negative = 0;
  let odd = 0;
  for (const [id, was] of before) {
    const now = after.get(id);
    if (now === undefined) throw new Error(`account ${id} disappeared from the admin listing`);
    if (now < 0n) negative++;
    const delta = was - now;
    debited += delta;
    if (delta % chargeMicro !== 0n) odd++;
    const orders = Number(delta / chargeMicro);
    if (orders > 0) touched++;
    min = Math.min(min, orders);
    max = Math.max(max, orders);
  }
  return {
    durableOrders: Number(debited / chargeMicro),
    debitedCredits: `${debited / 1_000_000n}.${String(debited % 1_000_000n).padStart(6, '0')}`.replace(/\.?0+$/, ''),
    accountsOrdering: touched,
    minPerAccount: min === Infinity ? 0 : min,
    maxPerAccount: max,
    negativeWallets: negative,
    oddDeltas: odd,
  };
}

/** Throws when the ledger holds fewer orders than were acknowledged, or a wallet went wrong. */
export function assertLedger(ledger: LedgerCheck, acknowledged: number): void {
  if (ledger.durableOrders < acknowledged) {
    throw new Error(`the ledger holds ${ledger.durableOrders} orders but ${acknowledged} were acknowledged: an acknowledged order was lost (or an idempotent replay was counted)`);
  }
  if (ledger.negativeWallets > 0 || ledger.oddDeltas > 0) throw new Error('the ledger check failed (negative wallets or partial debits)');
}
