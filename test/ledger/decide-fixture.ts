/**
 * Plain inputs for the decision function's unit tests: a wallet, a service,
 * an order record and a clock reading, each with every field written out,
 * so that a test changes only what it is about. Amounts are integer
 * micro-credits (1 credit = 1,000,000).
 */
import { decide, initialState, type Command, type Decision, type Now, type WalletState } from '../../src/ledger/decide.js';
import { withServiceDefaults, type OrderRecord, type ServiceRecord, type WalletRecord } from '../../src/ledger/index.js';

export const CREDIT = 1_000_000;
export const WALL_MS = Date.UTC(2026, 0, 15, 12, 0, 0);
export const NOW: Now = { monotonicMs: 5_000, wallMs: WALL_MS };
export const WALLET_ID = 42;

export function wallet(over: Partial<WalletRecord> = {}): WalletRecord {
  return { id: WALLET_ID, credits: 100 * CREDIT, banned: false, rateLimitPerMinute: 60, unlimitedExpiresMs: null, ...over };
}

export function stateOf(over: Partial<WalletRecord> = {}): WalletState {
  return initialState(wallet(over), NOW.monotonicMs);
}

/** A state whose rate-limit bucket is empty at NOW. */
export function drainedState(over: Partial<WalletRecord> = {}): WalletState {
  return { wallet: wallet(over), bucket: { tokens: 0, atMs: NOW.monotonicMs } };
}

export function service(over: Partial<ServiceRecord> = {}): ServiceRecord {
  return withServiceDefaults({ id: 7, platform: 'instagram', name: 'Followers', rate: 100_000, min: 10, max: 10_000, enabled: true, ...over });
}

/** An order of 100 units at 0.1 credit a unit, debited 10 credits, in `status`. */
export function order(over: Partial<OrderRecord> = {}): OrderRecord {
  return {
    id: 'ord-1',
    account: WALLET_ID,
    service: 7,
    target: 'https://example.com/p/1',
    quantity: 100,
    rate: 100_000,
    charge: 10 * CREDIT,
    debit: 10 * CREDIT,
    status: 'pending',
    remains: null,
    channel: 'api',
    unlimited: false,
    createdAtMs: WALL_MS - 60_000,
    seq: 1,
    number: 1,
    ...over,
  };
}

export function decideAt(state: WalletState, command: Command, now: Now = NOW): Decision {
  return decide(state, command, now);
}

/** The error a decision refused with, as code and message. */
export function refusalOf(d: Decision): { code: string; message: string } {
  if (d.outcome.kind !== 'error') throw new Error(`expected a refusal, got ${JSON.stringify(d.outcome)}`);
  return { code: d.outcome.error.code, message: d.outcome.error.message };
}

/** The one event an accepted change logs. */
export function eventOf(d: Decision): Record<string, unknown> {
  if (d.events.length !== 1) throw new Error(`expected one event, got ${JSON.stringify(d.events)}`);
  return d.events[0] as unknown as Record<string, unknown>;
}
