/**
 * The wallet's decisions: a pure function of (state, command, now) that
 * returns the new state, the events to log and a domain outcome. No I/O, no
 * clock reads and no rendering: the actor shell gathers what a command needs
 * (the order, its service, a stored Idempotency-Key record, fresh ids) into
 * an immutable command, calls this, and writes the events to the log; the
 * HTTP front end renders the outcome.
 *
 * Checks run in the contract's order: BANNED, RATE, VALIDATION, then the
 * order's business checks SERVICE, QTY, FORCEJOIN, BALANCE. Expected
 * rejections are values; a broken invariant throws and stops the process.
 */
import { errorOutcome, type ErrorOutcome } from '../errors/index.js';
import { formatMicro, addMicro } from '../money/index.js';
import { assert } from '../platform/index.js';
import { chargeFor, FINAL_STATUSES, isUnlimited, planExpiryAfter, planPriceInr, refundFor, remainsRefusal, statusMoveRefusal, unitsOrdered } from './rules.js';
import {
  cancelRefusalMessage,
  cancelVerdict,
  isOpenRefill,
  progressRefusal,
  refillMoveRefusal,
  refillRefusal,
  refillRefusalMessage,
} from './lifecycle.js';
import { holdRefusal, holdRefusalMessage, leaseEnded, leaseRefusal } from './lease.js';
import { PLAN_MONTHS_MAX } from './limits.js';
import { placedEvent } from './placed-event.js';
import { decidePost, decideSubscribe, decideSubscriptionStatus, type PostReport, type SubscriptionVerdict } from './subscription-decide.js';
import type { SubscriptionRecord, SubscriptionTerms } from './subscription-record.js';
import { isRanged, readOrderInputs, type OrderExtras, type OrderPayload } from './order-types.js';
import { walletWithCredits, type Channel, type IdempotencyRecord, type LogEvent, type OrderRecord, type OrderStatus, type RefillRecord, type RefillStatus, type ServiceRecord, type WalletRecord } from './records.js';
import { fullBucket, takeToken, type BucketState, type BucketVerdict } from './token-bucket.js';

export interface WalletState {
  wallet: WalletRecord;
  bucket: BucketState;
}

export interface Now {
  monotonicMs: number;
  wallMs: number;
}

/** An order's inputs as its service's type reads them (see readOrderPayload). */
export interface OrderInput {
  serviceId: number;
  target: string;
  /** Units per run: as sent, or derived by the service's order type (a list's length, 1 for a package). */
  quantity: number;
  /** The type's other inputs and drip-feed runs, read against `Command.service` (see readOrderInputs); none for an unknown service. */
  extras: OrderExtras;
}

/**
 * Reads a payload by its service's type (readOrderInputs), or refuses it
 * (VALIDATION). An unknown service's payload is not read: the SERVICE check
 * refuses the order, and its message needs only the id.
 */
export function readOrderPayload(payload: OrderPayload, service: ServiceRecord | null): { ok: true; input: OrderInput } | { ok: false; error: ErrorOutcome } {
  const { serviceId, target } = payload;
  if (service === null) return { ok: true, input: { serviceId, target, quantity: payload.quantity ?? 0, extras: {} } };
  if (service.type === 'Subscriptions') {
    const message = `Service ${service.id} takes subscriptions, not orders: place one with POST /api/v1/subscription {service, username, min, max, posts, old_posts, delay, expiry} (API v2: action=add with the same fields); each post's delivery becomes an order of its own.`;
    return { ok: false, error: errorOutcome('VALIDATION', message) };
  }
  const typed = readOrderInputs(service.type, service.dripfeed, payload);
  if (!typed.ok) return { ok: false, error: errorOutcome('VALIDATION', typed.message) };
  return { ok: true, input: { serviceId, target, quantity: typed.quantity, extras: typed.extras } };
}

/**
 * An order as the front end parsed it, or the reason it could not: the
 * reason is refused only after the ban and rate-limit checks, so that an
 * invalid request still costs a token (the contract's check order).
 */
export type OrderRequest =
  | {
      readonly ok: true;
      /** As sent; `service`'s type reads it in decideOrder. */
      readonly payload: OrderPayload;
      /**
       * The service the front end looked up, so the type that reads the
       * payload is the one the order gets; null when unknown (the SERVICE check refuses it).
       */
      readonly service: ServiceRecord | null;
      /** The key and orderFingerprint(payload). */
      readonly idempotency: { readonly key: string; readonly fingerprint: string } | null;
      /** The force-join verdict, or null when no channel is required. */
      readonly forceJoin: ForceJoinVerdict | null;
    }
  | { readonly ok: false; readonly reason: ErrorOutcome };

/**
 * What a decision needs, gathered by the actor shell before it calls
 * `decide`: the fields marked "gathered" are lookups (durable or pending
 * rows, fresh ids), the rest is what the caller asked. Immutable: a decision
 * reads its command and never changes it.
 */
export type Command = Readonly<
  /** A rate-limited request that changes nothing (services, status). */
  | { kind: 'touch' }
  | { kind: 'balance' }
  | {
      kind: 'order';
      requestId: string;
      channel: Channel;
      request: OrderRequest;
      /** Gathered: a fresh id, used only if the order is accepted. */
      orderId: string;
      /** Gathered: a process-wide increasing counter, so orders of one millisecond stay in order. */
      seq: number;
      /** Gathered: the next order number (see src/ids/order-numbers.ts), the order's only if it is accepted. */
      number: number;
      /** Gathered: the record stored under the request's Idempotency-Key (within retention), or null. */
      prior: IdempotencyRecord | null;
    }
  /**
   * The operator moves an order. A claim names the worker it moves the
   * order to processing for and when its lease ends; a move by a worker
   * names the worker, which must hold the order (see holdRefusal). `order`
   * is gathered (null when unknown).
   */
  | { kind: 'set-status'; orderId: string; order: OrderRecord | null; to: OrderStatus; remains: number | null; reason?: string; claim?: Claim; worker?: string }
  /** The operator (or the worker holding the order) records progress of an in_progress order; an absent field is left as it is. */
  | { kind: 'progress'; orderId: string; order: OrderRecord | null; startCount?: number | null; remains?: number | null; worker?: string }
  /** The worker holding a processing order moves its lease's end; `order` is gathered. */
  | { kind: 'extend-lease'; orderId: string; order: OrderRecord | null; worker: string; leaseExpiresMs: number }
  /** The worker holding a processing order gives it back to the claim queue; `order` is gathered. */
  | { kind: 'release'; orderId: string; order: OrderRecord | null; worker: string }
  /** The sweep (or a claim) puts an order whose lease has ended back in the claim queue; `order` is gathered. */
  | { kind: 'expire-lease'; orderId: string; order: OrderRecord | null }
  /**
   * One order of a customer's cancel or refill request. The request's rate
   * limit and ban checks ran once, as a `touch`, before these. `order`,
   * `service` and `refillId` are gathered.
   */
  | { kind: 'cancel'; orderId: string; order: OrderRecord | null; service: ServiceRecord | null }
  | { kind: 'refill'; orderId: string; order: OrderRecord | null; service: ServiceRecord | null; refillId: number }
  /** The operator moves a refill; `stored` is its durable row, `order` is gathered. */
  | { kind: 'refill-status'; stored: RefillRecord; orderId: string; order: OrderRecord | null; to: RefillStatus; reason?: string }
  /**
   * A customer places a subscription (subscription-decide.ts); `number` is
   * gathered, its id if it is placed, and so is `prior`, the record stored
   * under the request's Idempotency-Key (within retention), or null.
   */
  | { kind: 'subscribe'; requestId: string; channel: Channel; request: SubscribeRequest; number: number; prior: IdempotencyRecord | null }
  /** The processing system reports a post of a subscription; `subscription` and the report's gathered fields are gathered. */
  | ({ kind: 'subscription-post'; subscriptionId: number; subscription: SubscriptionRecord | null } & PostReport)
  /** The customer or the operator cancels a subscription, or the sweep expires it; `subscription` is gathered. */
  | { kind: 'subscription-status'; subscriptionId: number; subscription: SubscriptionRecord | null; to: 'Canceled' | 'Expired'; reason: string }
  | { kind: 'grant-plan'; months: number; reason?: string }
  | { kind: 'credit'; amount: number; reason: string }
  | { kind: 'update'; banned?: boolean; rateLimitPerMinute?: number; reason?: string }
>;

/** A subscription as the front end read it, with the force-join verdict, or why it could not be read. */
export type SubscribeRequest =
  | {
      readonly ok: true;
      readonly terms: SubscriptionTerms;
      readonly service: ServiceRecord | null;
      /** The key and subscriptionFingerprint(terms), or null when none was sent. */
      readonly idempotency: { readonly key: string; readonly fingerprint: string } | null;
      readonly forceJoin: ForceJoinVerdict | null;
    }
  | { readonly ok: false; readonly reason: ErrorOutcome };

/** A claim: the worker a pending order moves to processing for, and when its lease ends. */
export interface Claim {
  worker: string;
  leaseExpiresMs: number;
}

/**
 * The force-join answer for this order. `transient` marks "Telegram could not
 * be asked": refused (fail closed) but not remembered under an
 * Idempotency-Key, so a retry after Telegram recovers can succeed.
 */
export type ForceJoinVerdict = { joined: true } | { joined: false; message: string; joinLink: string; transient: boolean };

/** What happened, in the domain's terms; the front end renders it. */
export type Outcome =
  | { kind: 'placed'; order: OrderRecord; balance: number }
  | { kind: 'balance'; credits: number; unlimitedExpiresMs: number | null }
  | { kind: 'credited'; balance: number }
  /** An order moved (by the operator, or canceled by its customer), with the refund made in the same event. */
  | { kind: 'moved'; order: OrderRecord; refund: number; balance: number }
  | { kind: 'cancel-requested'; order: OrderRecord }
  | { kind: 'refill-opened'; refill: RefillRecord }
  | { kind: 'subscribed'; subscription: SubscriptionRecord }
  /** An accepted operator change whose answer the front end builds from the new state (account, plan, progress, refill move). */
  | { kind: 'changed' }
  | { kind: 'error'; error: ErrorOutcome }
  /** Same Idempotency-Key and payload as an earlier request: send its answer again. */
  | { kind: 'replay'; record: IdempotencyRecord }
  /** Allowed; the front end answers from durable storage (status, services). */
  | { kind: 'pass' };

export interface Decision {
  state: WalletState;
  events: LogEvent[];
  outcome: Outcome;
  /** Present when the command counted against the rate limit. */
  rate: BucketVerdict | null;
  /** Written in the same commit as the events. */
  order: OrderRecord | null;
  refill: RefillRecord | null;
  /**
   * The outcome is to be remembered under this Idempotency-Key, in the same
   * commit, so that a retry gets the same answer. The shell renders it.
   */
  remember: { key: string; fingerprint: string } | null;
  /** A subscription as the decision leaves it, written in the same commit (absent when none changed). */
  subscription?: SubscriptionRecord;
}

export function initialState(wallet: WalletRecord, nowMs: number): WalletState {
  return { wallet, bucket: fullBucket(wallet.rateLimitPerMinute, nowMs) };
}


function result(state: WalletState, outcome: Outcome, rate: BucketVerdict | null = null): Decision {
  return { state, events: [], outcome, rate, order: null, refill: null, remember: null };
}

function refused(state: WalletState, error: ErrorOutcome, rate: BucketVerdict | null = null): Decision {
  return result(state, { kind: 'error', error }, rate);
}

/** An accepted change: new state, its one event, its outcome, and the order it changed, if any. */
function changed(state: WalletState, event: LogEvent, outcome: Outcome = { kind: 'changed' }, order: OrderRecord | null = null): Decision {
  return { state, events: [event], outcome, rate: null, order, refill: null, remember: null };
}

export function decide(state: WalletState, command: Command, now: Now): Decision {
  switch (command.kind) {
    case 'credit':
      return decideCredit(state, command, now);
    case 'update':
      return decideUpdate(state, command, now);
    case 'set-status':
      return decideStatus(state, command, now);
    case 'progress':
      return decideProgress(state, command, now);
    case 'cancel':
      return decideCancel(state, command, now);
    case 'refill':
      return decideRefill(state, command, now);
    case 'refill-status':
      return decideRefillStatus(state, command, now);
    case 'grant-plan':
      return decideGrant(state, command, now);
    case 'extend-lease':
    case 'release':
    case 'expire-lease':
      return decideLease(state, command, now);
    // The processing system's and the operator's side of a subscription: not the API key's, so no ban or rate check.
    case 'subscription-post':
      return fromSubscription(state, decidePost(state.wallet, command.subscriptionId, command.subscription, command, now.wallMs));
    case 'subscription-status':
      return fromSubscription(state, decideSubscriptionStatus(state.wallet, command.subscriptionId, command.subscription, command.to, command.reason, now.wallMs));
    case 'order':
      // Orders the operator places through the panel skip the API-access
      // checks (ban, rate limit) but go through every business check.
      if (command.channel === 'panel') return decideOrder(state, command, now, null);
      break;
  }
  if (state.wallet.banned) {
    return refused(state, errorOutcome('BANNED', 'API access is disabled on this account; contact the operator.'));
  }
  const { bucket, verdict } = takeToken(state.bucket, state.wallet.rateLimitPerMinute, now.monotonicMs);
  const limited: WalletState = { wallet: state.wallet, bucket };
  if (!verdict.allowed) {
    return refused(
      limited,
      errorOutcome('RATE', `Rate limit of ${state.wallet.rateLimitPerMinute} requests per minute exceeded; retry in ${verdict.retryAfterS} seconds.`, {
        retry_after: verdict.retryAfterS,
      }),
      verdict,
    );
  }
  switch (command.kind) {
    case 'touch':
      return result(limited, { kind: 'pass' }, verdict);
    case 'balance': {
      const w = limited.wallet;
      const expires = isUnlimited(w, now.wallMs) ? w.unlimitedExpiresMs : null;
      return result(limited, { kind: 'balance', credits: w.credits, unlimitedExpiresMs: expires }, verdict);
    }
    case 'order':
      return decideOrder(limited, command, now, verdict);
    case 'subscribe':
      return decideSubscribeRequest(limited, command, now, verdict);
  }
}

/**
 * A subscription: VALIDATION, then SERVICE and QTY (decideSubscribe), then
 * FORCEJOIN, after the ban and the rate limit. Its Idempotency-Key works
 * as an order's (decideOrder): the same key and terms replay the first
 * answer, other terms are refused, and the placement or a business
 * refusal (SERVICE, QTY, a FORCEJOIN that Telegram answered) is remembered
 * in its commit, so a retried place never creates a second subscription.
 */
function decideSubscribeRequest(state: WalletState, command: Extract<Command, { kind: 'subscribe' }>, now: Now, rate: BucketVerdict): Decision {
  const { request, prior } = command;
  if (!request.ok) return refused(state, request.reason, rate);
  const idem = request.idempotency;
  assertPriorHasKey(prior, idem);
  if (prior !== null) {
    if (prior.fingerprint === idem!.fingerprint) return result(state, { kind: 'replay', record: prior }, rate);
    return refused(state, errorOutcome('IDEMPOTENCY', 'This Idempotency-Key was already used with a different payload; use a new key for a new subscription.'), rate);
  }
  const verdict = decideSubscribe(state.wallet, request.terms, request.service, command.number, command.channel, now.wallMs, idem?.key ?? null);
  if (verdict.outcome.kind === 'subscribed' && request.forceJoin !== null && !request.forceJoin.joined) {
    const { message, joinLink, transient } = request.forceJoin;
    return rejectOrder(state, { error: errorOutcome('FORCEJOIN', message, { join_link: joinLink }), transient }, idem, rate, now);
  }
  const outcome = verdict.outcome;
  if (outcome.kind === 'error' && outcome.error.code !== 'VALIDATION') return rejectOrder(state, { error: outcome.error }, idem, rate, now);
  const decision = fromSubscription(state, verdict, rate);
  if (outcome.kind === 'subscribed') decision.remember = idem;
  return decision;
}

/** A subscription verdict as the wallet's decision. */
function fromSubscription(state: WalletState, verdict: SubscriptionVerdict, rate: BucketVerdict | null = null): Decision {
  const decision: Decision = {
    state: { wallet: verdict.wallet, bucket: state.bucket },
    events: verdict.events,
    outcome: verdict.outcome,
    rate,
    order: verdict.order,
    refill: null,
    remember: null,
  };
  if (verdict.subscription !== null) decision.subscription = verdict.subscription;
  return decision;
}

function decideOrder(
  state: WalletState,
  command: Extract<Command, { kind: 'order' }>,
  now: Now,
  rate: BucketVerdict | null,
): Decision {
  const request = command.request;
  if (!request.ok) return refused(state, request.reason, rate);
  const idem = request.idempotency;
  const prior = command.prior;
  assertPriorHasKey(prior, idem);
  const read = readOrderPayload(request.payload, request.service);
  // The key is looked up before the catalogue's type reads the payload: the
  // operator may have changed the service since the first attempt, whose
  // answer a retry of the same payload must get (DESIGN.md, Idempotency-Key).
  if (prior !== null && prior.fingerprint === idem!.fingerprint) {
    return result(state, { kind: 'replay', record: prior }, rate);
  }
  // VALIDATION is not remembered, and comes before IDEMPOTENCY: a payload
  // that cannot be read is refused whatever its key.
  if (!read.ok) return refused(state, read.error, rate);
  if (prior !== null) {
    return refused(
      state,
      errorOutcome('IDEMPOTENCY', 'This Idempotency-Key was already used with a different payload; use a new key for a new order.'),
      rate,
    );
  }
  const input = read.input;
  const business = checkBusiness(state, input, request.service, request.forceJoin, now);
  if (business.kind === 'error') return rejectOrder(state, business, idem, rate, now);
  return placeOrder(state, command, input, business, idem, rate, now);
}

/** The shell gathers a record stored under an Idempotency-Key only for a request that sent its key; anything else is a broken command. */
function assertPriorHasKey(prior: IdempotencyRecord | null, idem: Decision['remember']): void {
  assert(prior === null || idem !== null, 'a stored Idempotency-Key record is gathered only for a request that sent its key');
}

/**
 * A business refusal (SERVICE, QTY, FORCEJOIN, BALANCE). It is remembered
 * under the Idempotency-Key like a success, with an order.rejected event, so
 * a retry with the same key gets the same answer; a transient one (Telegram
 * could not be asked) is not, so a retry may succeed.
 */
function rejectOrder(
  state: WalletState,
  business: { readonly error: ErrorOutcome; readonly transient?: boolean },
  idem: Decision['remember'],
  rate: BucketVerdict | null,
  now: Now,
): Decision {
  const decision = refused(state, business.error, rate);
  if (idem !== null && !business.transient) {
    decision.remember = idem;
    decision.events.push({
      type: 'order.rejected',
      atMs: now.wallMs,
      account: state.wallet.id,
      idempotencyKey: idem.key,
      code: business.error.code,
    });
  }
  return decision;
}

/** The accepted order: the wallet less its debit, the order's record, and its order.placed event. */
function placeOrder(
  state: WalletState,
  command: Extract<Command, { kind: 'order' }>,
  input: OrderInput,
  accepted: Extract<BusinessCheck, { kind: 'accept' }>,
  idem: Decision['remember'],
  rate: BucketVerdict | null,
  now: Now,
): Decision {
  const { service, charge, debit, unlimited } = accepted;
  const wallet = walletWithCredits(state.wallet, state.wallet.credits - debit);
  // Field by field, in one order, the optional fields added only when the
  // order has them: every Default order's record has one hidden class.
  const order: OrderRecord = {
    id: command.orderId,
    account: wallet.id,
    service: service.id,
    target: input.target,
    quantity: input.quantity,
    rate: service.rate,
    charge,
    debit,
    status: 'pending',
    remains: null,
    channel: command.channel,
    unlimited,
    createdAtMs: now.wallMs,
    seq: command.seq,
    number: command.number,
  };
  if (service.type !== 'Default') order.type = service.type;
  if (Object.keys(input.extras).length > 0) order.extras = input.extras;
  return {
    state: { wallet, bucket: state.bucket },
    events: [placedEvent(order, wallet.credits, idem, now.wallMs)],
    outcome: { kind: 'placed', order, balance: wallet.credits },
    rate,
    order,
    refill: null,
    remember: idem,
  };
}

type BusinessCheck =
  | { kind: 'error'; error: ErrorOutcome; transient?: boolean }
  | { kind: 'accept'; service: ServiceRecord; charge: number; debit: number; unlimited: boolean };

/** SERVICE, QTY, FORCEJOIN, BALANCE, in that order. */
function checkBusiness(
  state: WalletState,
  input: OrderInput,
  service: ServiceRecord | null,
  forceJoin: ForceJoinVerdict | null,
  now: Now,
): BusinessCheck {
  if (service === null || !service.enabled) {
    return { kind: 'error', error: errorOutcome('SERVICE', `Service ${input.serviceId} does not exist or is disabled.`) };
  }
  if (isRanged(service.type) && (input.quantity < service.min || input.quantity > service.max)) {
    return {
      kind: 'error',
      error: errorOutcome('QTY', `Quantity must be between ${service.min} and ${service.max} for service ${service.id}.`, {
        min: service.min,
        max: service.max,
      }),
    };
  }
  if (forceJoin !== null && !forceJoin.joined) {
    return {
      kind: 'error',
      error: errorOutcome('FORCEJOIN', forceJoin.message, { join_link: forceJoin.joinLink }),
      transient: forceJoin.transient,
    };
  }
  const runs = input.extras.runs ?? 1;
  const charge = chargeFor(input.quantity, service.rate, runs);
  // The admin API refuses services whose max × rate does not fit, so only
  // drip-feed runs can take an in-range order's charge out of the exact range.
  if (charge === null) {
    assert(runs !== 1, `the charge of a single run must fit (${input.quantity} × ${service.rate} overflows)`);
    return { kind: 'error', error: errorOutcome('QTY', `quantity × runs × rate is larger than the largest supported charge; order fewer runs.`) };
  }
  // Stryker disable next-line StringLiteral: equivalent: a business check's kind is read only as `=== 'error'`, so any other text accepts alike
  if (isUnlimited(state.wallet, now.wallMs)) return { kind: 'accept', service, charge, debit: 0, unlimited: true };
  if (charge > state.wallet.credits) {
    return {
      kind: 'error',
      error: errorOutcome(
        'BALANCE',
        `This order costs ${formatMicro(charge)} credits but the wallet holds ${formatMicro(state.wallet.credits)}.`,
        { charge: `raw:${formatMicro(charge)}`, balance: `raw:${formatMicro(state.wallet.credits)}` },
      ),
    };
  }
  // Stryker disable next-line StringLiteral: equivalent: a business check's kind is read only as `=== 'error'`, so any other text accepts alike
  return { kind: 'accept', service, charge, debit: charge, unlimited: false };
}

function decideCredit(state: WalletState, command: Extract<Command, { kind: 'credit' }>, now: Now): Decision {
  // addMicro gives null for a sum past the safe integers, the largest of which is the largest balance (MICRO_MAX).
  const credits = addMicro(state.wallet.credits, command.amount);
  if (credits === null) {
    return refused(state, errorOutcome('VALIDATION', 'That amount would take the wallet beyond the largest supported balance.'));
  }
  if (credits < 0) {
    return refused(
      state,
      errorOutcome('BALANCE', `The wallet holds ${formatMicro(state.wallet.credits)} credits; it cannot go below zero.`),
    );
  }
  const wallet = { ...state.wallet, credits };
  return changed(
    { wallet, bucket: state.bucket },
    { type: 'credits.adjusted', atMs: now.wallMs, account: wallet.id, amount: command.amount, reason: command.reason, balance: credits },
    { kind: 'credited', balance: credits },
  );
}

function decideUpdate(state: WalletState, command: Extract<Command, { kind: 'update' }>, now: Now): Decision {
  const wallet = { ...state.wallet };
  const event: Extract<LogEvent, { type: 'account.updated' }> = { type: 'account.updated', atMs: now.wallMs, account: wallet.id };
  if (command.reason !== undefined) event.reason = command.reason;
  if (command.banned !== undefined) {
    wallet.banned = command.banned;
    event.banned = command.banned;
  }
  let bucket = state.bucket;
  if (command.rateLimitPerMinute !== undefined) {
    wallet.rateLimitPerMinute = command.rateLimitPerMinute;
    event.rateLimitPerMinute = command.rateLimitPerMinute;
    // Raising a limit applies at once (a full bucket of the new size);
    // lowering it, or setting the same one, must not hand a throttled client
    // a fresh burst: its spent tokens stay spent, capped at the new size.
    if (command.rateLimitPerMinute > state.wallet.rateLimitPerMinute) {
      bucket = fullBucket(command.rateLimitPerMinute, now.monotonicMs);
    }
  }
  return changed({ wallet, bucket }, event);
}


/**
 * Moves an order forward, and refunds in the same commit when the move is to
 * a final state: `canceled` returns the whole debit, `partial` returns
 * remains × rate (nothing for orders billed under the unlimited plan, whose
 * debit was 0). A final order never moves again.
 */
function decideStatus(state: WalletState, command: Extract<Command, { kind: 'set-status' }>, now: Now): Decision {
  const order = command.order;
  if (order === null || order.account !== state.wallet.id) {
    return refused(state, errorOutcome('NOT_FOUND', `No order with id ${command.orderId}.`));
  }
  const { to } = command;
  const notHeld = command.worker === undefined ? null : holdRefusal(order, command.worker, now.wallMs);
  if (notHeld !== null) return refused(state, errorOutcome('CONFLICT', holdRefusalMessage(notHeld, order, command.worker!)));
  const moveRefusal = statusMoveRefusal(order.status, to);
  if (moveRefusal === 'final') {
    return refused(state, errorOutcome('CONFLICT', `Order ${order.id} is already ${order.status}, a final state; it cannot move again.`));
  }
  if (moveRefusal === 'backwards') {
    return refused(state, errorOutcome('CONFLICT', `Order ${order.id} is ${order.status}; it can only move forward, not to ${to}.`));
  }
  const units = unitsOrdered(order);
  const remainsProblem = remainsRefusal(units, to, command.remains);
  if (remainsProblem === 'partial-needs-remains') {
    const of = units === order.quantity ? '' : `, of the ${units} ordered over its runs`;
    return refused(state, errorOutcome('VALIDATION', `A partial order needs remains, an integer from 1 to ${units - 1} (units not delivered${of}).`));
  }
  if (remainsProblem === 'remains-only-on-partial') {
    return refused(state, errorOutcome('VALIDATION', 'remains is only accepted when the status is partial.'));
  }
  return moveOrder(state, order, to, command.remains, now, command.reason, command.claim);
}

/** The accepted move of `order` to `to`, with its refund in the same event (see refundFor). */
function moveOrder(state: WalletState, order: OrderRecord, to: OrderStatus, remains: number | null, now: Now, reason?: string, claim?: Claim): Decision {
  const refund = refundFor(order, to, remains);
  const credits = addMicro(state.wallet.credits, refund);
  // refundFor gives back at most the order's debit: all of it on cancel, and a partial refund it asserts within it.
  assert(credits !== null, 'a refund must fit in the wallet', order);
  const wallet = walletWithCredits(state.wallet, credits);
  const updated: OrderRecord = { ...order, status: to, remains };
  if (FINAL_STATUSES.has(to)) {
    updated.finishedAtMs = now.wallMs;
    // A move to a final state resolves an open cancel request, whichever it is.
    delete updated.cancelRequested;
  }
  // A claim starts a lease; any other move of a processing order ends it.
  if (claim !== undefined) {
    updated.worker = claim.worker;
    updated.leaseExpiresMs = claim.leaseExpiresMs;
  } else {
    delete updated.leaseExpiresMs;
  }
  return changed(
    { wallet, bucket: state.bucket },
    {
      type: 'order.status',
      atMs: now.wallMs,
      account: wallet.id,
      order: order.id,
      from: order.status,
      to,
      remains,
      refund,
      balance: credits,
      ...(reason === undefined ? {} : { reason }),
      ...(claim === undefined ? {} : { worker: claim.worker, leaseExpiresMs: claim.leaseExpiresMs }),
    },
    { kind: 'moved', order: updated, refund, balance: credits },
    updated,
  );
}

function orderNotFound(state: WalletState, order: OrderRecord | null, orderId: string): Decision | null {
  if (order !== null && order.account === state.wallet.id) return null;
  return refused(state, errorOutcome('NOT_FOUND', `No order with id ${orderId}.`));
}

/** Records start_count and remains of an in_progress order (absent fields stay as they were). */
function decideProgress(state: WalletState, command: Extract<Command, { kind: 'progress' }>, now: Now): Decision {
  const missing = orderNotFound(state, command.order, command.orderId);
  if (missing !== null) return missing;
  const order = command.order!;
  const notHeld = command.worker === undefined ? null : holdRefusal(order, command.worker, now.wallMs);
  if (notHeld !== null) return refused(state, errorOutcome('CONFLICT', holdRefusalMessage(notHeld, order, command.worker!)));
  const refusal = progressRefusal(order, command.startCount, command.remains);
  if (refusal === 'nothing') return refused(state, errorOutcome('VALIDATION', 'Send at least one of start_count, remains.'));
  if (refusal === 'not-in-progress') {
    return refused(state, errorOutcome('CONFLICT', `Order ${order.id} is ${order.status}; progress is recorded only while it is in_progress.`));
  }
  if (refusal === 'start-count-range') return refused(state, errorOutcome('VALIDATION', 'start_count must be a non-negative integer or null.'));
  if (refusal === 'remains-range') return refused(state, errorOutcome('VALIDATION', `remains must be an integer from 0 to ${unitsOrdered(order)} (units not delivered) or null.`));
  const startCount = command.startCount === undefined ? (order.startCount ?? null) : command.startCount;
  const remains = command.remains === undefined ? (order.progressRemains ?? null) : command.remains;
  const updated: OrderRecord = orderWith(order, { startCount, progressRemains: remains });
  return changed(state, { type: 'order.progress', atMs: now.wallMs, account: state.wallet.id, order: order.id, startCount, remains }, undefined, updated);
}

/**
 * A lease's end moved by the worker holding the order, the order released
 * by it, or put back in the claim queue once its lease has ended. Releasing
 * and expiring move the order back to pending (no money moves): it leaves
 * the worker, and the claim queue hands it out again in its place by age.
 */
function decideLease(state: WalletState, command: Extract<Command, { kind: 'extend-lease' | 'release' | 'expire-lease' }>, now: Now): Decision {
  const missing = orderNotFound(state, command.order, command.orderId);
  if (missing !== null) return missing;
  const order = command.order!;
  if (command.kind === 'expire-lease') {
    if (!leaseEnded(order, now.wallMs)) return refused(state, errorOutcome('CONFLICT', `Order ${order.id} holds no lease that has ended.`));
    assert(order.worker !== undefined, 'an order under a lease names the worker holding it', order);
    return released(state, order, order.worker, 'expired', now);
  }
  const refusal = leaseRefusal(order, command.worker, now.wallMs);
  if (refusal !== null) return refused(state, errorOutcome('CONFLICT', holdRefusalMessage(refusal, order, command.worker)));
  if (command.kind === 'release') return released(state, order, command.worker, 'released', now);
  const { leaseExpiresMs } = command;
  return changed(
    state,
    { type: 'order.lease_extended', atMs: now.wallMs, account: state.wallet.id, order: order.id, worker: command.worker, leaseExpiresMs },
    undefined,
    orderWith(order, { leaseExpiresMs }),
  );
}

/** The order back in the claim queue: pending, held by no worker. */
function released(state: WalletState, order: OrderRecord, worker: string, cause: 'released' | 'expired', now: Now): Decision {
  const updated = orderWith(order, { status: 'pending' });
  delete updated.worker;
  delete updated.leaseExpiresMs;
  return changed(state, { type: 'order.released', atMs: now.wallMs, account: state.wallet.id, order: order.id, worker, cause }, undefined, updated);
}

/** One order of a customer's cancel: at once with a full refund, as a request, or refused (see cancelVerdict). */
function decideCancel(state: WalletState, command: Extract<Command, { kind: 'cancel' }>, now: Now): Decision {
  const missing = orderNotFound(state, command.order, command.orderId);
  if (missing !== null) return missing;
  const order = command.order!;
  const verdict = cancelVerdict(order, command.service);
  switch (verdict.kind) {
    case 'refused':
      return refused(state, errorOutcome('CONFLICT', cancelRefusalMessage(verdict.reason, order.status)));
    case 'cancel-now':
      return moveOrder(state, order, 'canceled', null, now, 'canceled by the customer');
    case 'request': {
      const updated: OrderRecord = orderWith(order, { cancelRequested: true });
      return changed(
        state,
        { type: 'order.cancel_requested', atMs: now.wallMs, account: state.wallet.id, order: order.id },
        { kind: 'cancel-requested', order: updated },
        updated,
      );
    }
  }
}

/** One order of a customer's refill request: opens refill `refillId`, or refuses (see refillRefusal). No money moves. */
function decideRefill(state: WalletState, command: Extract<Command, { kind: 'refill' }>, now: Now): Decision {
  const missing = orderNotFound(state, command.order, command.orderId);
  if (missing !== null) return missing;
  const order = command.order!;
  const refusal = refillRefusal(order, command.service, now.wallMs);
  if (refusal !== null) return refused(state, errorOutcome('CONFLICT', refillRefusalMessage(refusal, order.status, command.service?.refillDays ?? 0)));
  const id = command.refillId;
  const refill: RefillRecord = { id, order: order.id, account: order.account, status: 'pending', createdAtMs: now.wallMs, updatedAtMs: now.wallMs };
  const decision = changed(
    state,
    { type: 'refill.requested', atMs: now.wallMs, account: state.wallet.id, order: order.id, refill: id },
    { kind: 'refill-opened', refill },
    orderWith(order, { refill: { id, status: 'pending', createdAtMs: now.wallMs } }),
  );
  decision.refill = refill;
  return decision;
}

/** The operator moves a refill forward; the order's record holds the latest refill's status, so two moves cannot both start from the same one. */
function decideRefillStatus(state: WalletState, command: Extract<Command, { kind: 'refill-status' }>, now: Now): Decision {
  const missing = orderNotFound(state, command.order, command.orderId);
  if (missing !== null) return missing;
  const order = command.order!;
  const { stored, to } = command;
  const latest = order.refill?.id === stored.id ? order.refill : null;
  // Only the latest refill can be open, so an earlier one is final. Its row can
  // still read open: a move that closed it, and the refill opened after that,
  // may be decided here and not yet durable when the row was read.
  if (latest === null && isOpenRefill(stored.status)) {
    return refused(state, errorOutcome('CONFLICT', `Refill ${stored.id} is closed: order ${order.id} has a later refill; it cannot move again.`));
  }
  const from = latest?.status ?? stored.status;
  const refusal = refillMoveRefusal(from, to);
  if (refusal === 'final') return refused(state, errorOutcome('CONFLICT', `Refill ${stored.id} is already ${from}, a final state; it cannot move again.`));
  if (refusal === 'backwards') return refused(state, errorOutcome('CONFLICT', `Refill ${stored.id} is ${from}; it can only move forward, not to ${to}.`));
  const refill: RefillRecord = { ...stored, status: to, updatedAtMs: now.wallMs, ...(command.reason === undefined ? {} : { reason: command.reason }) };
  const decision = changed(
    state,
    {
      type: 'refill.status',
      atMs: now.wallMs,
      account: state.wallet.id,
      order: order.id,
      refill: stored.id,
      from,
      to,
      ...(command.reason === undefined ? {} : { reason: command.reason }),
    },
    undefined,
    orderWith(order, { refill: { id: stored.id, status: to, createdAtMs: latest!.createdAtMs } }),
  );
  decision.refill = refill;
  return decision;
}

/**
 * The order with some fields changed. Object.assign, not `{ ...order, … }`:
 * on Node 20's V8 a spread that adds fields the record lacks (startCount,
 * cancelRequested, refill) builds an object of a slow shape, about 6 µs more
 * per lifecycle change with the row's encoding (bench/RESULTS.md, on decide's updated rows).
 */
function orderWith(order: OrderRecord, changes: Partial<OrderRecord>): OrderRecord {
  return Object.assign({}, order, changes);
}

/** Grants or extends the unlimited window from the later of now and the current expiry. */
function decideGrant(state: WalletState, command: Extract<Command, { kind: 'grant-plan' }>, now: Now): Decision {
  const { months } = command;
  if (!Number.isSafeInteger(months) || months < 1 || months > PLAN_MONTHS_MAX) {
    return refused(state, errorOutcome('VALIDATION', `months must be an integer from 1 to ${PLAN_MONTHS_MAX}.`));
  }
  const expiresMs = planExpiryAfter(now.wallMs, state.wallet.unlimitedExpiresMs, months);
  const wallet: WalletRecord = { ...state.wallet, unlimitedExpiresMs: expiresMs };
  return changed(
    { wallet, bucket: state.bucket },
    {
      type: 'plan.granted',
      atMs: now.wallMs,
      account: wallet.id,
      months,
      priceInr: planPriceInr(months),
      expiresMs,
      ...(command.reason === undefined ? {} : { reason: command.reason }),
    },
  );
}
