import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  decide,
  initialState,
  type Command,
  type Decision,
  type ForceJoinVerdict,
  type Now,
  type OrderRequest,
  type WalletState,
} from '../../src/ledger/decide.js';
import { ManualClock } from '../../src/platform/clock.js';
import { errorOutcome, renderError, type ErrorOutcome } from '../../src/errors/catalogue.js';
import { renderAnswer } from '../../src/http/transport/answer.js';
import { MICRO_MAX, parseMicro } from '../../src/money/index.js';
import { plainRefund } from '../helpers/plain-money.js';
import { addMonthsUtc, FINAL_STATUSES, placedStatusView, statusView, withServiceDefaults, isUnlimited, type Channel, type IdempotencyRecord, type OrderPayload, type OrderRecord, type OrderStatus, type ServiceRecord, type WalletRecord } from '../../src/ledger/index.js';

type OrderCommand = Extract<Command, { kind: 'order' }>;

const micro = (text: string): number => {
  const m = parseMicro(text);
  if (m === null) throw new Error(`bad amount in test: ${text}`);
  return m;
};

function nowOf(clock: ManualClock): Now {
  return { monotonicMs: clock.monotonicMs(), wallMs: clock.wallMs() };
}

function makeWallet(over: Partial<WalletRecord> = {}): WalletRecord {
  return { id: 42, credits: micro('100'), banned: false, rateLimitPerMinute: 60, unlimitedExpiresMs: null, ...over };
}

function makeService(over: Partial<ServiceRecord> = {}): ServiceRecord {
  return withServiceDefaults({ id: 7, platform: 'instagram', name: 'Followers', rate: micro('0.1'), min: 10, max: 10_000, enabled: true, ...over });
}

/** An order command described flat: `invalid` set means the front end could not parse it. */
interface OrderSpec {
  requestId?: string;
  orderId?: string;
  number?: number;
  channel?: Channel;
  invalid?: ErrorOutcome | null;
  payload?: OrderPayload;
  service?: ServiceRecord | null;
  /** The request's key and fingerprint, and the record the actor found under it. */
  idempotency?: { key: string; fingerprint: string; prior: IdempotencyRecord | null } | null;
  forceJoin?: ForceJoinVerdict | null;
}

let nextOrder = 1;
function orderCommand(spec: OrderSpec = {}): OrderCommand {
  const service = spec.service === undefined ? makeService() : spec.service;
  const idem = spec.idempotency ?? null;
  const request: OrderRequest =
    spec.invalid != null
      ? { ok: false, reason: spec.invalid }
      : {
          ok: true,
          payload: spec.payload ?? { serviceId: service?.id ?? 999, target: 'https://example.com/p/1', quantity: 100 },
          service,
          idempotency: idem === null ? null : { key: idem.key, fingerprint: idem.fingerprint },
          forceJoin: spec.forceJoin ?? null,
        };
  return {
    kind: 'order',
    requestId: spec.requestId ?? 'req-1',
    number: spec.number ?? nextOrder,
    seq: nextOrder,
    orderId: spec.orderId ?? `ord-${nextOrder++}`,
    channel: spec.channel ?? 'api',
    request,
    prior: idem?.prior ?? null,
  };
}

/** The answer a client gets for this decision, as the front end renders it. */
function answerOf(d: Decision, requestId = 'req-1'): { status: number; body: string } {
  return renderAnswer(d.outcome, requestId);
}

const notJoined: Extract<ForceJoinVerdict, { joined: false }> = {
  joined: false,
  message: 'Join the channel https://t.me/panelnews before ordering.',
  joinLink: 'https://t.me/panelnews',
  transient: false,
};

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * Calls decide with deep-frozen inputs (a write to them throws in ESM strict
 * mode) and checks afterwards that they still equal copies taken before.
 */
function run(state: WalletState, command: Command, now: Now): Decision {
  const stateBefore = structuredClone(state);
  const commandBefore = structuredClone(command);
  const nowBefore = structuredClone(now);
  deepFreeze(state);
  deepFreeze(command);
  deepFreeze(now);
  const decision = decide(state, command, now);
  expect(state).toEqual(stateBefore);
  expect(command).toEqual(commandBefore);
  expect(now).toEqual(nowBefore);
  return decision;
}

function errorOf(d: Decision): ErrorOutcome {
  if (d.outcome.kind !== 'error') throw new Error(`expected an error outcome, got ${JSON.stringify(d.outcome)}`);
  return d.outcome.error;
}

function okBody(d: Decision): Record<string, unknown> {
  if (d.outcome.kind === 'error' || d.outcome.kind === 'replay' || d.outcome.kind === 'pass' || d.outcome.kind === 'changed') {
    throw new Error(`expected an accepted outcome with an answer, got ${JSON.stringify(d.outcome)}`);
  }
  return JSON.parse(answerOf(d).body) as Record<string, unknown>;
}

/** A state whose bucket is empty at `now`. */
function drained(wallet: WalletRecord, now: Now): WalletState {
  return { wallet, bucket: { tokens: 0, atMs: now.monotonicMs } };
}

const invalidQuantity = errorOutcome('VALIDATION', 'quantity must be a JSON integer.');

describe('check order: BANNED > RATE > VALIDATION > SERVICE > QTY > FORCEJOIN > BALANCE', () => {
  const clock = new ManualClock();
  const now = nowOf(clock);

  /** Builds a state and an order command that fail exactly the named checks. */
  function failing(f: { banned: boolean; rate: boolean; validation: boolean; service: boolean; qty: boolean; forcejoin?: boolean; balance: boolean }) {
    const wallet = makeWallet({ banned: f.banned, credits: f.balance ? micro('0.5') : micro('1000') });
    const state = f.rate ? drained(wallet, now) : initialState(wallet, now.monotonicMs);
    const service = f.service ? makeService({ enabled: false }) : makeService();
    const command = orderCommand({
      service,
      invalid: f.validation ? invalidQuantity : null,
      payload: { serviceId: service.id, target: 't', quantity: f.qty ? 5 : 100 },
      forceJoin: f.forcejoin === true ? notJoined : { joined: true },
    });
    return { state, command };
  }

  const order = ['banned', 'rate', 'validation', 'service', 'qty', 'forcejoin', 'balance'] as const;
  const codes = { banned: 'BANNED', rate: 'RATE', validation: 'VALIDATION', service: 'SERVICE', qty: 'QTY', forcejoin: 'FORCEJOIN', balance: 'BALANCE' } as const;

  it('everything failing at once: BANNED wins', () => {
    const { state, command } = failing({ banned: true, rate: true, validation: true, service: true, qty: true, forcejoin: true, balance: true });
    const e = errorOf(run(state, command, now));
    expect(e.code).toBe('BANNED');
    expect(e.status).toBe(403);
  });

  it('all but BANNED failing: RATE wins, with retry_after', () => {
    const { state, command } = failing({ banned: false, rate: true, validation: true, service: true, qty: true, balance: true });
    const d = run(state, command, now);
    const e = errorOf(d);
    expect(e.code).toBe('RATE');
    expect(e.status).toBe(429);
    expect(e.extra?.['retry_after']).toBeGreaterThanOrEqual(1);
    expect(d.rate?.allowed).toBe(false);
  });

  it('VALIDATION beats SERVICE, QTY and BALANCE', () => {
    const { state, command } = failing({ banned: false, rate: false, validation: true, service: true, qty: true, balance: true });
    expect(errorOf(run(state, command, now))).toEqual(invalidQuantity);
  });

  it('SERVICE beats QTY and BALANCE (disabled and unknown services)', () => {
    const { state, command } = failing({ banned: false, rate: false, validation: false, service: true, qty: true, balance: true });
    expect(errorOf(run(state, command, now)).code).toBe('SERVICE');
    const unknown = orderCommand({ service: null, payload: { serviceId: 999, target: 't', quantity: 5 } });
    const e = errorOf(run(state, unknown, now));
    expect(e.code).toBe('SERVICE');
    expect(e.status).toBe(422);
  });

  it('QTY beats FORCEJOIN and BALANCE and names the allowed range', () => {
    const { state, command } = failing({ banned: false, rate: false, validation: false, service: false, qty: true, forcejoin: true, balance: true });
    const e = errorOf(run(state, command, now));
    expect(e.code).toBe('QTY');
    expect(e.status).toBe(422);
    expect(e.extra).toEqual({ min: 10, max: 10_000 });
    expect(e.message).toContain('10');
    expect(e.message).toContain('10000');
  });

  it.each([0, -1, 9, 10_001, Number.MAX_SAFE_INTEGER])('quantity %d outside min..max is QTY', (quantity) => {
    const state = initialState(makeWallet(), now.monotonicMs);
    const command = orderCommand({ payload: { serviceId: 7, target: 't', quantity } });
    expect(errorOf(run(state, command, now)).code).toBe('QTY');
  });

  it('FORCEJOIN beats BALANCE and carries the join link', () => {
    const { state, command } = failing({ banned: false, rate: false, validation: false, service: false, qty: false, forcejoin: true, balance: true });
    const e = errorOf(run(state, command, now));
    expect(e).toEqual({ code: 'FORCEJOIN', status: 403, message: notJoined.message, extra: { join_link: 'https://t.me/panelnews' } });
  });

  it('BALANCE when the charge exceeds the credits, with exact charge and balance as JSON numbers', () => {
    const { state, command } = failing({ banned: false, rate: false, validation: false, service: false, qty: false, balance: true });
    const d = run(state, command, now);
    const e = errorOf(d);
    expect(e.code).toBe('BALANCE');
    expect(e.status).toBe(402);
    const body = renderError(e, 'r');
    expect(body).toContain('"charge":10,');
    expect(body).toContain('"balance":0.5,');
    expect(JSON.parse(body)).toMatchObject({ ok: false, error: 'BALANCE', charge: 10, balance: 0.5 });
    expect(d.state.wallet.credits).toBe(micro('0.5'));
  });

  it('for any combination of failing checks the first in contract order wins (property)', () => {
    fc.assert(
      fc.property(
        fc.record({ banned: fc.boolean(), rate: fc.boolean(), validation: fc.boolean(), service: fc.boolean(), qty: fc.boolean(), forcejoin: fc.boolean(), balance: fc.boolean() }),
        (f) => {
        const { state, command } = failing(f);
        const d = run(state, command, now);
        const first = order.find((k) => f[k]);
        if (first === undefined) {
          expect(d.outcome.kind).toBe('placed');
        } else {
          expect(errorOf(d).code).toBe(codes[first]);
          // A rejected order never touches the wallet or writes anything.
          expect(d.state.wallet).toEqual(state.wallet);
          expect(d.events).toEqual([]);
          expect(d.order).toBeNull();
          expect(d.remember).toBeNull();
        }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('rejected orders past the rate check still count against the limit', () => {
    let state = initialState(makeWallet({ rateLimitPerMinute: 3 }), now.monotonicMs);
    const bad = { payload: { serviceId: 7, target: 't', quantity: 1 } }; // QTY
    for (let i = 0; i < 3; i++) {
      const d = run(state, orderCommand(bad), now);
      expect(errorOf(d).code).toBe('QTY');
      expect(d.rate).toMatchObject({ allowed: true, remaining: 2 - i });
      state = d.state;
    }
    expect(errorOf(run(state, orderCommand(bad), now)).code).toBe('RATE');
  });

  it('touch and balance requests are rate limited too, and banned accounts are refused', () => {
    let state = initialState(makeWallet({ rateLimitPerMinute: 2 }), now.monotonicMs);
    const touch = run(state, { kind: 'touch' }, now);
    expect(touch.outcome).toEqual({ kind: 'pass' });
    state = touch.state;
    const bal = run(state, { kind: 'balance' }, now);
    expect(okBody(bal)).toEqual({ ok: true, credits: 100, unlimited: false, unlimited_expires: null });
    state = bal.state;
    expect(errorOf(run(state, { kind: 'touch' }, now)).code).toBe('RATE');
    expect(errorOf(run(state, { kind: 'balance' }, now)).code).toBe('RATE');

    const banned = initialState(makeWallet({ banned: true }), now.monotonicMs);
    expect(errorOf(run(banned, { kind: 'touch' }, now)).code).toBe('BANNED');
    expect(errorOf(run(banned, { kind: 'balance' }, now)).code).toBe('BANNED');
  });
});

describe('accepted order', () => {
  it("the order.placed event alone says what a status read shows of the order placed (a placement's webhook message is rendered from it)", () => {
    const clock = new ManualClock();
    const now = nowOf(clock);
    const plain = orderCommand({ number: 5, service: makeService({ min: 1 }), payload: { serviceId: 7, target: 'https://x.test/u', quantity: 30 } });
    const drip = orderCommand({ service: makeService({ min: 1, dripfeed: true }), payload: { serviceId: 7, target: 'https://x.test/u', quantity: 30, runs: 4, interval: 15 } });
    for (const command of [plain, drip]) {
      const d = run(initialState(makeWallet({ credits: micro('100') }), now.monotonicMs), command, now);
      const placed = d.events[0]!;
      if (placed.type !== 'order.placed') throw new Error(`expected order.placed, got ${placed.type}`);
      expect(placedStatusView(placed)).toEqual(statusView(d.order!));
    }
    const d = run(initialState(makeWallet({ credits: micro('100') }), now.monotonicMs), drip, now);
    // remains counts every run's units: 30 × 4.
    expect(statusView(d.order!)).toMatchObject({ status: 'pending', remains: 120, startCount: null, runs: 4, interval: 15 });
  });

  it('debits exactly quantity × rate, emits one order.placed event and an order record with its rate', () => {
    const clock = new ManualClock();
    const now = nowOf(clock);
    const state = initialState(makeWallet({ credits: micro('100') }), now.monotonicMs);
    const service = makeService({ rate: micro('0.1'), min: 1 });
    const command = orderCommand({ orderId: 'ord-abc', number: 41, service, channel: 'api', payload: { serviceId: 7, target: 'https://x.test/u', quantity: 3 } });
    const d = run(state, command, now);

    expect(d.outcome).toEqual({ kind: 'placed', order: d.order, balance: micro('99.7') });
    // Exact decimals in the answer: 0.1 × 3 = 0.3 and 100 - 0.3 = 99.7.
    expect(answerOf(d)).toEqual({ status: 201, body: '{"ok":true,"order":"ord-abc","number":41,"charge":0.3,"status":"pending","balance":99.7}' });
    expect(d.state.wallet.credits).toBe(micro('99.7'));
    expect(d.state.wallet).toEqual({ ...state.wallet, credits: micro('99.7') });
    expect(d.events).toEqual([
      {
        type: 'order.placed',
        atMs: now.wallMs,
        account: 42,
        order: 'ord-abc',
        number: 41,
        service: 7,
        quantity: 3,
        rate: micro('0.1'),
        charge: micro('0.3'),
        debit: micro('0.3'),
        balance: micro('99.7'),
        channel: 'api',
        idempotencyKey: null,
      },
    ]);
    expect(d.order).toEqual({
      id: 'ord-abc',
      account: 42,
      service: 7,
      target: 'https://x.test/u',
      quantity: 3,
      rate: micro('0.1'),
      charge: micro('0.3'),
      debit: micro('0.3'),
      status: 'pending',
      remains: null,
      channel: 'api',
      unlimited: false,
      createdAtMs: now.wallMs,
      seq: command.seq,
      number: 41,
    });
    expect(d.remember).toBeNull();
    expect(d.rate).toMatchObject({ allowed: true, remaining: 59 });
  });

  it('each order keeps the rate it was placed with when the service rate changes', () => {
    const now = nowOf(new ManualClock());
    const s0 = initialState(makeWallet({ credits: micro('1000') }), now.monotonicMs);
    const first = run(s0, orderCommand({ service: makeService({ rate: micro('0.1') }), payload: { serviceId: 7, target: 't', quantity: 100 } }), now);
    const second = run(first.state, orderCommand({ service: makeService({ rate: micro('0.25') }), payload: { serviceId: 7, target: 't', quantity: 100 } }), now);
    expect(first.order).toMatchObject({ rate: micro('0.1'), charge: micro('10') });
    expect(second.order).toMatchObject({ rate: micro('0.25'), charge: micro('25') });
    expect(second.state.wallet.credits).toBe(micro('965'));
  });

  it('the panel channel is recorded on the order and the event', () => {
    const now = nowOf(new ManualClock());
    const d = run(initialState(makeWallet(), now.monotonicMs), orderCommand({ channel: 'panel' }), now);
    expect(d.order?.channel).toBe('panel');
    expect(d.events[0]).toMatchObject({ channel: 'panel' });
  });

  it('panel orders skip the API-access checks (ban, rate limit) but not the business checks', () => {
    const now = nowOf(new ManualClock());
    const state = drained(makeWallet({ banned: true, credits: micro('10') }), now);
    const d = run(state, orderCommand({ channel: 'panel' }), now);
    expect(d.outcome.kind).toBe('placed');
    expect(d.rate).toBeNull();
    expect(d.state.bucket).toEqual(state.bucket);
    expect(d.state.wallet.credits).toBe(0);
    expect(errorOf(run(d.state, orderCommand({ channel: 'panel' }), now)).code).toBe('BALANCE');
    expect(errorOf(run(state, orderCommand({ channel: 'panel', service: null }), now)).code).toBe('SERVICE');
  });

  it('debits quantity × rate exactly for any in-range order (property, BigInt reference)', () => {
    const now = nowOf(new ManualClock());
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1, max: micro('1000') }),
        fc.integer({ min: 0, max: 1e15 }),
        (quantity, rate, spare) => {
          const charge = BigInt(quantity) * BigInt(rate);
          const credits = Number(charge) + spare;
          fc.pre(credits <= MICRO_MAX);
          const state = initialState(makeWallet({ credits }), now.monotonicMs);
          const d = run(state, orderCommand({ service: makeService({ rate, min: 1, max: 1_000_000 }), payload: { serviceId: 7, target: 't', quantity } }), now);
          expect(d.order?.charge).toBe(Number(charge));
          expect(d.order?.debit).toBe(Number(charge));
          expect(d.state.wallet.credits).toBe(spare);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('BALANCE boundary', () => {
  const now = nowOf(new ManualClock());

  it('charge == credits is accepted and leaves exactly 0', () => {
    const state = initialState(makeWallet({ credits: micro('10') }), now.monotonicMs);
    const d = run(state, orderCommand({ payload: { serviceId: 7, target: 't', quantity: 100 } }), now);
    expect(d.state.wallet.credits).toBe(0);
    expect(okBody(d)).toMatchObject({ charge: 10, balance: 0 });
  });

  it('charge one micro-credit above the credits is BALANCE and leaves the wallet alone', () => {
    const state = initialState(makeWallet({ credits: micro('9.999999') }), now.monotonicMs);
    const d = run(state, orderCommand({ payload: { serviceId: 7, target: 't', quantity: 100 } }), now);
    const e = errorOf(d);
    expect(e.code).toBe('BALANCE');
    expect(e.extra).toEqual({ charge: 'raw:10', balance: 'raw:9.999999' });
    expect(d.state.wallet.credits).toBe(micro('9.999999'));
    expect(d.events).toEqual([]);
    expect(d.order).toBeNull();
  });

  it('an empty wallet cannot place any charged order', () => {
    const state = initialState(makeWallet({ credits: 0 }), now.monotonicMs);
    const d = run(state, orderCommand({ service: makeService({ rate: 1, min: 1 }), payload: { serviceId: 7, target: 't', quantity: 1 } }), now);
    expect(errorOf(d).code).toBe('BALANCE');
  });
});

describe('unlimited plan', () => {
  it('a month is a calendar month in UTC: a grant from the 31st ends on the last day of a shorter month, and an extension counts from the expiry', () => {
    const at = (iso: string): number => Date.parse(iso);
    expect(addMonthsUtc(at('2025-01-31T10:00:00Z'), 1)).toBe(at('2025-02-28T10:00:00Z'));
    expect(addMonthsUtc(at('2024-01-31T10:00:00Z'), 1)).toBe(at('2024-02-29T10:00:00Z'));
    expect(addMonthsUtc(at('2025-01-31T10:00:00Z'), 2)).toBe(at('2025-03-31T10:00:00Z'));
    expect(addMonthsUtc(at('2025-12-15T23:59:59.999Z'), 1)).toBe(at('2026-01-15T23:59:59.999Z'));
    expect(addMonthsUtc(at('2025-03-31T00:00:00Z'), 120)).toBe(at('2035-03-31T00:00:00Z'));
    const now = { monotonicMs: 0, wallMs: at('2025-01-31T10:00:00Z') };
    const granted = run(initialState(makeWallet(), 0), { kind: 'grant-plan', months: 1 }, now);
    expect(granted.state.wallet.unlimitedExpiresMs).toBe(at('2025-02-28T10:00:00Z'));
    // Extended from the expiry: 28 Feb + 1 month.
    const extended = run(granted.state, { kind: 'grant-plan', months: 1 }, now);
    expect(extended.state.wallet.unlimitedExpiresMs).toBe(at('2025-03-28T10:00:00Z'));
  });

  it('while active: charge computed and shown, debit 0, balance unchanged, order marked unlimited', () => {
    const clock = new ManualClock();
    const now = nowOf(clock);
    const expires = now.wallMs + 30 * 24 * 3600 * 1000;
    // Even an empty wallet may order under the plan.
    const state = initialState(makeWallet({ credits: 0, unlimitedExpiresMs: expires }), now.monotonicMs);
    const d = run(state, orderCommand({ orderId: 'u1', number: 42, payload: { serviceId: 7, target: 't', quantity: 300 } }), now);
    expect(okBody(d)).toEqual({ ok: true, order: 'u1', number: 42, charge: 30, status: 'pending', balance: 0 });
    expect(d.state.wallet.credits).toBe(0);
    expect(d.order).toMatchObject({ charge: micro('30'), debit: 0, unlimited: true, rate: micro('0.1') });
    expect(d.events).toHaveLength(1);
    expect(d.events[0]).toMatchObject({ type: 'order.placed', charge: micro('30'), debit: 0, balance: 0 });
  });

  it('with credits: balance stays unchanged under the plan', () => {
    const now = nowOf(new ManualClock());
    const state = initialState(makeWallet({ credits: micro('50'), unlimitedExpiresMs: now.wallMs + 1 }), now.monotonicMs);
    const d = run(state, orderCommand(), now);
    expect(d.state.wallet.credits).toBe(micro('50'));
    expect(okBody(d)).toMatchObject({ charge: 10, balance: 50 });
  });

  it('the plan does not bypass SERVICE or QTY', () => {
    const now = nowOf(new ManualClock());
    const state = initialState(makeWallet({ unlimitedExpiresMs: now.wallMs + 60_000 }), now.monotonicMs);
    expect(errorOf(run(state, orderCommand({ service: null }), now)).code).toBe('SERVICE');
    expect(errorOf(run(state, orderCommand({ payload: { serviceId: 7, target: 't', quantity: 1 } }), now)).code).toBe('QTY');
  });

  it('at now.wallMs == expires the wallet is debited again (and BALANCE applies)', () => {
    const clock = new ManualClock();
    const expires = clock.wallMs() + 1000;
    let state = initialState(makeWallet({ credits: micro('15'), unlimitedExpiresMs: expires }), clock.monotonicMs());

    clock.advance(999);
    const before = run(state, orderCommand(), nowOf(clock));
    expect(before.order).toMatchObject({ unlimited: true, debit: 0 });
    expect(before.state.wallet.credits).toBe(micro('15'));
    state = before.state;

    clock.advance(1); // now.wallMs == expires
    expect(nowOf(clock).wallMs).toBe(expires);
    expect(isUnlimited(state.wallet, expires)).toBe(false);
    const at = run(state, orderCommand(), nowOf(clock));
    expect(at.order).toMatchObject({ unlimited: false, charge: micro('10'), debit: micro('10') });
    expect(at.state.wallet.credits).toBe(micro('5'));

    const after = run(at.state, orderCommand(), nowOf(clock));
    expect(errorOf(after).code).toBe('BALANCE');
  });

  it('the plan window follows the wall clock, not the monotonic one', () => {
    const clock = new ManualClock();
    const expires = clock.wallMs() + 1000;
    const state = initialState(makeWallet({ credits: micro('15'), unlimitedExpiresMs: expires }), clock.monotonicMs());
    clock.setWall(expires + 1);
    const d = run(state, orderCommand(), nowOf(clock));
    expect(d.order?.unlimited).toBe(false);
    expect(d.state.wallet.credits).toBe(micro('5'));
  });

  it('balance shows the plan while active and hides it from expiry on', () => {
    const clock = new ManualClock();
    const expires = clock.wallMs() + 1000;
    const state = initialState(makeWallet({ unlimitedExpiresMs: expires }), clock.monotonicMs());
    expect(okBody(run(state, { kind: 'balance' }, nowOf(clock)))).toEqual({
      ok: true,
      credits: 100,
      unlimited: true,
      unlimited_expires: new Date(expires).toISOString(),
    });
    clock.advance(1000);
    expect(okBody(run(state, { kind: 'balance' }, nowOf(clock)))).toEqual({ ok: true, credits: 100, unlimited: false, unlimited_expires: null });
  });
});

describe('idempotency', () => {
  const now = nowOf(new ManualClock());
  const priorOk: IdempotencyRecord = {
    fingerprint: 'fp-A',
    status: 201,
    body: '{"ok":true,"order":"ord-first","charge":10,"status":"pending","balance":90}',
    order: 'ord-first',
    atMs: now.wallMs - 5000,
  };

  it('same key and fingerprint as a stored record: replay it, change nothing', () => {
    const state = initialState(makeWallet(), now.monotonicMs);
    const d = run(state, orderCommand({ idempotency: { key: 'k1', fingerprint: 'fp-A', prior: priorOk } }), now);
    expect(d.outcome).toEqual({ kind: 'replay', record: priorOk });
    expect(d.state.wallet).toEqual(state.wallet);
    expect(d.events).toEqual([]);
    expect(d.order).toBeNull();
    expect(d.remember).toBeNull();
  });

  it('replays the original success even when the wallet could no longer pay for it', () => {
    const state = initialState(makeWallet({ credits: 0 }), now.monotonicMs);
    const d = run(state, orderCommand({ idempotency: { key: 'k1', fingerprint: 'fp-A', prior: priorOk } }), now);
    expect(d.outcome.kind).toBe('replay');
  });

  it('same key with a different fingerprint: IDEMPOTENCY 422, nothing stored', () => {
    const state = initialState(makeWallet(), now.monotonicMs);
    const d = run(state, orderCommand({ idempotency: { key: 'k1', fingerprint: 'fp-B', prior: priorOk } }), now);
    const e = errorOf(d);
    expect(e.code).toBe('IDEMPOTENCY');
    expect(e.status).toBe(422);
    expect(d.state.wallet).toEqual(state.wallet);
    expect(d.events).toEqual([]);
    expect(d.order).toBeNull();
    expect(d.remember).toBeNull();
  });

  it('a new key on an accepted order stores the 201 answer with the order id', () => {
    const state = initialState(makeWallet(), now.monotonicMs);
    const d = run(state, orderCommand({ orderId: 'ord-k', idempotency: { key: 'k2', fingerprint: 'fp-C', prior: null } }), now);
    expect(d.outcome.kind).toBe('placed');
    expect(d.order?.id).toBe('ord-k');
    expect(d.remember).toEqual({ key: 'k2', fingerprint: 'fp-C' });
    expect(answerOf(d).status).toBe(201);
    expect(d.events).toHaveLength(1);
    expect(d.events[0]).toMatchObject({ type: 'order.placed', idempotencyKey: 'k2' });
  });

  it.each([
    ['SERVICE', { service: null }, 422],
    ['QTY', { payload: { serviceId: 7, target: 't', quantity: 1 } }, 422],
    ['FORCEJOIN', { forceJoin: notJoined }, 403],
    ['BALANCE', { payload: { serviceId: 7, target: 't', quantity: 10_000 } }, 402],
  ] as const)('a %s rejection with a key is remembered with its error answer', (code, over, status) => {
    const state = initialState(makeWallet({ credits: micro('100') }), now.monotonicMs);
    const d = run(state, orderCommand({ ...over, requestId: 'req-77', idempotency: { key: 'k3', fingerprint: 'fp-D', prior: null } }), now);
    const e = errorOf(d);
    expect(e.code).toBe(code);
    expect(d.remember).toEqual({ key: 'k3', fingerprint: 'fp-D' });
    const answer = answerOf(d, 'req-77');
    expect(answer).toEqual({ status, body: renderError(e, 'req-77') });
    expect(JSON.parse(answer.body)).toMatchObject({ ok: false, error: code, request_id: 'req-77' });
    // The wallet is untouched; the rejection is logged so the record is durable with it.
    expect(d.state.wallet).toEqual(state.wallet);
    expect(d.order).toBeNull();
    expect(d.events).toEqual([{ type: 'order.rejected', atMs: now.wallMs, account: 42, idempotencyKey: 'k3', code }]);
  });

  it('a FORCEJOIN refusal because Telegram could not be asked (transient) is not stored, so a retry can succeed', () => {
    const state = initialState(makeWallet(), now.monotonicMs);
    const unreachable = { ...notJoined, message: 'Telegram could not be reached; try again shortly.', transient: true };
    const d = run(state, orderCommand({ forceJoin: unreachable, idempotency: { key: 'k6', fingerprint: 'fp-G', prior: null } }), now);
    expect(errorOf(d).code).toBe('FORCEJOIN');
    expect(d.remember).toBeNull();
    expect(d.events).toEqual([]);
    // The retry with the same key, once Telegram answers "joined", is placed.
    const retry = run(d.state, orderCommand({ forceJoin: { joined: true }, idempotency: { key: 'k6', fingerprint: 'fp-G', prior: null } }), now);
    expect(retry.outcome.kind).toBe('placed');
    expect(retry.remember).toEqual({ key: 'k6', fingerprint: 'fp-G' });
  });

  it('an invalid payload is VALIDATION even when its key has a stored record (validation runs first)', () => {
    const state = initialState(makeWallet(), now.monotonicMs);
    for (const fingerprint of ['fp-A', 'fp-other']) {
      const d = run(state, orderCommand({ invalid: invalidQuantity, idempotency: { key: 'k1', fingerprint, prior: priorOk } }), now);
      expect(errorOf(d)).toEqual(invalidQuantity);
    }
  });

  it('VALIDATION with a key stores nothing', () => {
    const state = initialState(makeWallet(), now.monotonicMs);
    const d = run(state, orderCommand({ invalid: invalidQuantity, idempotency: { key: 'k4', fingerprint: 'fp-E', prior: null } }), now);
    expect(errorOf(d).code).toBe('VALIDATION');
    expect(d.remember).toBeNull();
    expect(d.events).toEqual([]);
  });

  describe('after the operator changed the service', () => {
    const payload: OrderPayload = { serviceId: 7, target: 'https://x.test/p/1', quantity: 100, runs: 3, interval: 10 };
    const state = initialState(makeWallet(), now.monotonicMs);
    const retry = (service: ServiceRecord, fingerprint: string, prior: IdempotencyRecord) => run(state, orderCommand({ service, payload, idempotency: { key: 'k1', fingerprint, prior } }), now);

    it('a stored key with the same fingerprint replays although the service now refuses the payload', () => {
      const d = retry(makeService({ min: 1, dripfeed: false }), 'fp-A', priorOk);
      expect(d.outcome).toEqual({ kind: 'replay', record: priorOk });
      expect(d.events).toEqual([]);
    });

    it('a different fingerprint on a payload the service refuses is VALIDATION, the same verdict as without a key', () => {
      expect(errorOf(retry(makeService({ min: 1, dripfeed: false }), 'fp-B', priorOk)).code).toBe('VALIDATION');
    });
  });

  it('RATE with a key stores nothing, and neither does BANNED', () => {
    const rated = drained(makeWallet(), now);
    const d = run(rated, orderCommand({ idempotency: { key: 'k5', fingerprint: 'fp-F', prior: null } }), now);
    expect(errorOf(d).code).toBe('RATE');
    expect(d.remember).toBeNull();
    expect(d.events).toEqual([]);

    const banned = initialState(makeWallet({ banned: true }), now.monotonicMs);
    const b = run(banned, orderCommand({ idempotency: { key: 'k5', fingerprint: 'fp-F', prior: null } }), now);
    expect(errorOf(b).code).toBe('BANNED');
    expect(b.remember).toBeNull();
    expect(b.events).toEqual([]);
  });
});

describe('credit command', () => {
  const now = nowOf(new ManualClock());

  it('adds credits exactly and logs the adjustment with the new balance', () => {
    const state = initialState(makeWallet({ credits: micro('0.1') }), now.monotonicMs);
    const d = run(state, { kind: 'credit', amount: micro('0.2'), reason: 'top-up' }, now);
    expect(d.state.wallet.credits).toBe(micro('0.3'));
    expect(okBody(d)).toEqual({ ok: true, credits: 0.3 });
    expect(answerOf(d).body).toBe('{"ok":true,"credits":0.3}');
    expect(d.events).toEqual([
      { type: 'credits.adjusted', atMs: now.wallMs, account: 42, amount: micro('0.2'), reason: 'top-up', balance: micro('0.3') },
    ]);
    expect(d.rate).toBeNull();
  });

  it('a negative amount that would make the balance negative is BALANCE and changes nothing', () => {
    const state = initialState(makeWallet({ credits: micro('5') }), now.monotonicMs);
    const d = run(state, { kind: 'credit', amount: -micro('5.000001'), reason: 'chargeback' }, now);
    expect(errorOf(d).code).toBe('BALANCE');
    expect(d.state).toEqual(state);
    expect(d.events).toEqual([]);
  });

  it('a negative amount down to exactly zero is accepted', () => {
    const state = initialState(makeWallet({ credits: micro('5') }), now.monotonicMs);
    const d = run(state, { kind: 'credit', amount: -micro('5'), reason: 'refund to card' }, now);
    expect(d.state.wallet.credits).toBe(0);
  });

  it('a top-up beyond the largest balance is refused and changes nothing', () => {
    const state = initialState(makeWallet({ credits: MICRO_MAX - 1 }), now.monotonicMs);
    const d = run(state, { kind: 'credit', amount: 2, reason: 'x' }, now);
    expect(errorOf(d).code).toBe('VALIDATION');
    expect(d.state).toEqual(state);
    expect(d.events).toEqual([]);
    const exact = run(state, { kind: 'credit', amount: 1, reason: 'x' }, now);
    expect(exact.state.wallet.credits).toBe(MICRO_MAX);
  });

  it('operator credits are neither rate limited nor blocked by a ban', () => {
    const state = drained(makeWallet({ banned: true, credits: 0 }), now);
    const d = run(state, { kind: 'credit', amount: micro('1'), reason: 'x' }, now);
    expect(d.state.wallet.credits).toBe(micro('1'));
    expect(d.state.bucket).toEqual(state.bucket);
  });
});

describe('update command', () => {
  it('lowering the limit does not refill a drained bucket; raising it gives a full bucket of the new size', () => {
    const clock = new ManualClock();
    const now = nowOf(clock);
    let state = drained(makeWallet({ rateLimitPerMinute: 60 }), now);
    expect(errorOf(run(state, { kind: 'touch' }, now)).code).toBe('RATE');

    const lowered = run(state, { kind: 'update', rateLimitPerMinute: 4 }, now);
    expect(errorOf(run(lowered.state, { kind: 'touch' }, now)).code).toBe('RATE');
    const same = run(lowered.state, { kind: 'update', rateLimitPerMinute: 4 }, now);
    expect(errorOf(run(same.state, { kind: 'touch' }, now)).code).toBe('RATE');

    const u = run(same.state, { kind: 'update', rateLimitPerMinute: 5 }, now);
    expect(u.state.wallet.rateLimitPerMinute).toBe(5);
    expect(u.events).toEqual([{ type: 'account.updated', atMs: now.wallMs, account: 42, rateLimitPerMinute: 5 }]);
    state = u.state;
    for (let i = 0; i < 5; i++) {
      const d = run(state, { kind: 'touch' }, now);
      expect(d.outcome.kind).toBe('pass');
      expect(d.rate?.remaining).toBe(4 - i);
      state = d.state;
    }
    const refused = run(state, { kind: 'touch' }, now);
    expect(errorOf(refused).code).toBe('RATE');
    expect(errorOf(refused).message).toContain('5 requests per minute');
  });

  it('raising the limit to 100,000,000 applies at once', () => {
    const now = nowOf(new ManualClock());
    const u = run(drained(makeWallet(), now), { kind: 'update', rateLimitPerMinute: 100_000_000 }, now);
    const d = run(u.state, { kind: 'touch' }, now);
    expect(d.rate).toMatchObject({ allowed: true, remaining: 99_999_999 });
  });

  it('ban and unban change nothing else (the bucket is not refilled)', () => {
    const now = nowOf(new ManualClock());
    const state = drained(makeWallet(), now);
    const banned = run(state, { kind: 'update', banned: true }, now);
    expect(banned.state.wallet).toEqual({ ...state.wallet, banned: true });
    expect(banned.events).toEqual([{ type: 'account.updated', atMs: now.wallMs, account: 42, banned: true }]);
    expect(errorOf(run(banned.state, orderCommand(), now)).code).toBe('BANNED');
    const unbanned = run(banned.state, { kind: 'update', banned: false }, now);
    expect(unbanned.state.bucket).toEqual(state.bucket);
    expect(errorOf(run(unbanned.state, orderCommand(), now)).code).toBe('RATE');
  });
});

describe('refill status', () => {
  it('a refill superseded by a later one is refused as closed, even when its row was read before the move that closed it was durable', () => {
    const clock = new ManualClock();
    const now = nowOf(clock);
    const placed = run(initialState(makeWallet(), clock.monotonicMs()), orderCommand(), now);
    // In memory the order's latest refill is 2; the row of refill 1 was read while its move to completed was on its way.
    const order: OrderRecord = { ...placed.order!, status: 'completed', refill: { id: 2, status: 'pending', createdAtMs: now.wallMs } };
    const stale = { id: 1, order: order.id, account: 42, status: 'pending' as const, createdAtMs: now.wallMs, updatedAtMs: now.wallMs };
    const d = run(placed.state, { kind: 'refill-status', stored: stale, orderId: order.id, order, to: 'rejected' }, now);
    expect(errorOf(d)).toMatchObject({ code: 'CONFLICT', message: `Refill 1 is closed: order ${order.id} has a later refill; it cannot move again.` });
    expect(d.events).toEqual([]);
  });
});

describe('ledger and purity (property)', () => {
  const serviceArb = fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .record({ rate: fc.integer({ min: 0, max: micro('2') }), max: fc.oneof(fc.integer({ min: 1, max: 500 }), fc.constant(500)) })
        .map(({ rate, max }) => makeService({ rate, min: 1, max })),
    },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constant(makeService({ enabled: false })) },
  );

  /** A step; `set-status` picks one of the orders placed so far when it runs. */
  type Step =
    | { advanceMs: number; command: Command }
    | { advanceMs: number; move: { pick: number; to: OrderStatus; remains: number | null } };

  const stepArb: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        advanceMs: fc.integer({ min: 0, max: 20_000 }),
        command: fc.record({ kind: fc.constant('credit' as const), amount: fc.integer({ min: -micro('200'), max: micro('200') }), reason: fc.constant('test') }),
      }),
    },
    {
      weight: 6,
      arbitrary: fc.record({
        advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 20_000 })),
        command: fc
          .record({
            service: serviceArb,
            quantity: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 60 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 600 }) }),
            channel: fc.constantFrom<Channel>('api', 'api', 'panel'),
            key: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: null }),
            invalid: fc.integer({ min: 0, max: 7 }).map((n) => (n === 0 ? invalidQuantity : null)),
          })
          .map(({ service, quantity, channel, key, invalid }) =>
            orderCommand({
              service,
              invalid,
              channel,
              payload: { serviceId: service?.id ?? 999, target: 't', quantity },
              idempotency: key === null ? null : { key, fingerprint: `fp-${quantity}`, prior: null },
            }),
          ),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        advanceMs: fc.integer({ min: 0, max: 5000 }),
        move: fc.record({
          pick: fc.nat(),
          to: fc.constantFrom<OrderStatus>('processing', 'in_progress', 'completed', 'partial', 'partial', 'canceled', 'canceled'),
          remains: fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 600 })),
        }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        advanceMs: fc.integer({ min: 0, max: 5000 }),
        command: fc.oneof(
          fc.constantFrom<Command>({ kind: 'touch' }, { kind: 'balance' }),
          fc.record({ kind: fc.constant('update' as const), rateLimitPerMinute: fc.integer({ min: 1, max: 200 }) }),
          fc.record({ kind: fc.constant('grant-plan' as const), months: fc.integer({ min: 0, max: 2 }) }),
        ),
      }),
    },
  );

  it('the wallet never goes negative and credits == initial + Σ credits − Σ debits + Σ refunds; inputs are never mutated', () => {
    // How often the interesting paths ran, so a weakened generator cannot make this pass vacuously.
    const seen = { placed: 0, unlimited: 0, moved: 0, refund: 0, balance: 0, negativeCredit: 0 };
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: micro('500') }),
        fc.oneof({ weight: 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 120_000 }) }),
        fc.array(stepArb, { minLength: 1, maxLength: 60, size: 'max' }),
        (initialCredits, planMs, steps) => {
          const clock = new ManualClock();
          const wallet = makeWallet({ credits: initialCredits, unlimitedExpiresMs: planMs === null ? null : clock.wallMs() + planMs });
          let state = initialState(wallet, clock.monotonicMs());
          let credited = 0;
          let debited = 0;
          let refunded = 0;
          // Replaying only the events must give the same balance too.
          let fromEvents = initialCredits;
          const orders: OrderRecord[] = [];
          const refundedPerOrder = new Map<string, number>();
          for (const step of steps) {
            clock.advance(step.advanceMs);
            const now = nowOf(clock);
            let command: Command;
            if ('move' in step) {
              const order = orders.length === 0 ? null : orders[step.move.pick % orders.length]!;
              command = { kind: 'set-status', orderId: order?.id ?? 'ord-none', order, to: step.move.to, remains: step.move.remains };
            } else {
              command = step.command;
            }
            const before = state.wallet.credits;
            const d = run(state, command, now);
            const w = d.state.wallet;
            for (const ev of d.events) {
              if (ev.type === 'credits.adjusted') {
                credited += ev.amount;
                fromEvents += ev.amount;
                expect(ev.balance).toBe(fromEvents);
              } else if (ev.type === 'order.placed') {
                debited += ev.debit;
                fromEvents -= ev.debit;
                expect(ev.balance).toBe(fromEvents);
                expect(ev.charge).toBe(ev.quantity * ev.rate);
                expect(ev.debit === ev.charge || ev.debit === 0).toBe(true);
                expect(ev.debit === 0 && ev.charge !== 0).toBe(isUnlimited(state.wallet, now.wallMs) && ev.charge !== 0);
                expect(d.order).toMatchObject({ id: ev.order, charge: ev.charge, debit: ev.debit, rate: ev.rate, status: 'pending' });
                orders.push(d.order!);
                seen.placed++;
                if (ev.debit === 0 && ev.charge > 0) seen.unlimited++;
              } else if (ev.type === 'order.status') {
                refunded += ev.refund;
                seen.moved++;
                if (ev.refund > 0) seen.refund++;
                fromEvents += ev.refund;
                expect(ev.balance).toBe(fromEvents);
                const o = d.order!;
                // A refund happens only on the move to a final state, once, and never exceeds the debit.
                if (ev.refund > 0) expect(['partial', 'canceled']).toContain(ev.to);
                const total = (refundedPerOrder.get(o.id) ?? 0) + ev.refund;
                refundedPerOrder.set(o.id, total);
                expect(total).toBeLessThanOrEqual(o.debit);
                if (ev.to === 'canceled') expect(ev.refund).toBe(o.debit);
                if (ev.to === 'partial') expect(ev.refund).toBe(plainRefund(o, 'partial', o.remains));
                // The order keeps the rate and charge it was placed with.
                const i = orders.findIndex((x) => x.id === o.id);
                const finished = FINAL_STATUSES.has(ev.to) ? { finishedAtMs: ev.atMs } : {};
                expect(o).toEqual({ ...orders[i]!, status: ev.to, remains: o.remains, ...finished });
                orders[i] = o;
              }
            }
            expect(Number.isSafeInteger(w.credits)).toBe(true);
            expect(w.credits).toBeGreaterThanOrEqual(0);
            expect(w.credits).toBe(initialCredits + credited - debited + refunded);
            expect(w.credits).toBe(fromEvents);
            if (d.outcome.kind === 'error' && d.outcome.error.code === 'BALANCE') {
              seen.balance++;
              if (command.kind === 'credit') seen.negativeCredit++;
            }
            // A decision that writes nothing never moves money.
            if (d.events.length === 0) expect(w.credits).toBe(before);
            state = d.state;
          }
        },
      ),
      { numRuns: 200 },
    );
    for (const [path, count] of Object.entries(seen)) expect(count, path).toBeGreaterThan(20);
  });
});
