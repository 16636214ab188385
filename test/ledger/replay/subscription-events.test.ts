/**
 * Subscriptions as the replay checks them (invariant (h)): a placement with
 * a fresh number, terms its service took and its service's rate; status
 * moves the actor's rules allow; each post's order within the terms; and
 * the subscriptions table against what the log leaves. The sentences are
 * what an operator reads, so they are pinned whole.
 */
import { describe, expect, it } from 'vitest';
import { checkSubscriptionRows, subscriptionOrder, subscriptionPlaced, subscriptionStatus } from '../../../src/ledger/replay/subscription-events.js';
import type { ReplayState, ReplaySubscription } from '../../../src/ledger/replay/replay-state.js';
import type { SourceRow } from '../../../src/ledger/index.js';
import { Ledger } from '../../helpers/ledger.js';
import { findingOf, replayStateOf } from '../../helpers/ledger-image.js';

const AT_MS = Date.UTC(2026, 10, 27, 12);
/** The end of 30 December 2026 (UTC): a day's end ahead of AT_MS. */
const EXPIRY_MS = Date.UTC(2026, 11, 31);
const RATE = 500_000;

/** A replay state whose catalogue holds service 5, a Subscriptions service for 10..100 at 0.5 credits. */
function withService(type = 'Subscriptions'): ReplayState {
  const state = replayStateOf(new Ledger());
  state.services.saved(1, { service: { id: 5, platform: 'instagram', name: 'Auto likes', rate: RATE, min: 10, max: 100, enabled: true, type } });
  return state;
}

/** subscription.placed of subscription 3 for natgeo, 10..20 units, 2 posts, no expiry, at the service's rate. */
function placed(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { subscription: 3, service: 5, username: 'natgeo', min: 10, max: 20, posts: 2, oldPosts: 0, delayMinutes: 0, expiryMs: null, atMs: AT_MS, rate: RATE, ...fields };
}

/** The state after subscription 3 of account 1 was placed with `fields`. */
function withSubscription(fields: Record<string, unknown> = {}): { state: ReplayState; sub: ReplaySubscription } {
  const state = withService();
  subscriptionPlaced(state, 2, 1, placed(fields));
  return { state, sub: state.subscriptions.get(3)! };
}

const placedFinding = (state: ReplayState, e: Record<string, unknown>): string => findingOf(() => subscriptionPlaced(state, 2, 1, e)).sentence;
const PLACED_AT = 'Subscription check failed at seq 2 (account 1): ';

describe('subscription.placed', () => {
  it('keeps the subscription as placed, Active with no posts, and takes its number', () => {
    const { state, sub } = withSubscription({ expiryMs: EXPIRY_MS });
    expect(sub).toEqual({ service: 5, username: 'natgeo', min: 10, max: 20, posts: 2, oldPosts: 0, delayMinutes: 0, expiryMs: EXPIRY_MS, account: 1, rate: RATE, status: 'Active', postsDone: 0 });
    expect(state.lastNumber).toBe(3);
  });

  it('refuses a number not above the previous one, and one that is not a whole number', () => {
    const state = withService();
    state.lastNumber = 3;
    expect(placedFinding(state, placed())).toBe(`${PLACED_AT}subscription.placed carries id 3, not above the previous number 3; subscriptions take numbers of the orders' sequence.`);
    expect(placedFinding(state, placed({ subscription: '4' }))).toBe(`${PLACED_AT}subscription.placed carries id 4, not above the previous number 3; subscriptions take numbers of the orders' sequence.`);
    subscriptionPlaced(state, 2, 1, placed({ subscription: 4 }));
    expect(state.lastNumber).toBe(4);
  });

  it('refuses each term that is not a whole number, naming it', () => {
    for (const field of ['service', 'min', 'max', 'posts', 'oldPosts', 'delayMinutes']) {
      expect(placedFinding(withService(), placed({ [field]: '7' }))).toBe(`${PLACED_AT}subscription.placed carries an invalid ${field} (7).`);
    }
  });

  it('refuses a missing username, an expiry that is not an instant, and a missing time', () => {
    expect(placedFinding(withService(), placed({ username: 7 }))).toBe(`${PLACED_AT}subscription.placed carries no username.`);
    expect(placedFinding(withService(), placed({ expiryMs: 'soon' }))).toBe(`${PLACED_AT}subscription.placed carries an invalid expiry (soon).`);
    expect(placedFinding(withService(), placed({ atMs: undefined }))).toBe(`${PLACED_AT}subscription.placed carries no valid time.`);
  });

  it('refuses terms its service did not take, and a service that does not exist', () => {
    expect(placedFinding(withService('Default'), placed())).toBe(`${PLACED_AT}subscription 3's terms were not acceptable when placed: Service 5 is a Default service, not a Subscriptions one.`);
    expect(placedFinding(withService(), placed({ service: 9 }))).toBe(`${PLACED_AT}subscription 3's terms were not acceptable when placed: service 9 does not exist`);
  });

  it("refuses a rate that is not its service's", () => {
    expect(placedFinding(withService(), placed({ rate: 1 }))).toBe(`${PLACED_AT}subscription 3 fixed the rate 0.000001 credits, which is not its service's rate at that point of the log.`);
  });
});

const move = (state: ReplayState, from: unknown, to: unknown, fields: Record<string, unknown> = {}): void => subscriptionStatus(state, 4, 1, { subscription: 3, from, to, atMs: AT_MS, ...fields });
const moveFinding = (state: ReplayState, from: unknown, to: unknown, fields: Record<string, unknown> = {}): string => findingOf(() => move(state, from, to, fields)).sentence;
const MOVED_AT = 'Subscription check failed at seq 4 (account 1): ';

describe('subscription.status', () => {
  it('moves Active to Paused and back', () => {
    const { state, sub } = withSubscription();
    move(state, 'Active', 'Paused');
    expect(sub.status).toBe('Paused');
    move(state, 'Paused', 'Active');
    expect(sub.status).toBe('Active');
  });

  it('refuses a subscription the account did not place', () => {
    const { state } = withSubscription();
    const unknown = 'the event names subscription 9, which this account did not place earlier in the log.';
    expect(moveFinding(state, 'Active', 'Paused', { subscription: 9 })).toBe(`${MOVED_AT}${unknown}`);
    expect(findingOf(() => subscriptionStatus(state, 4, 2, { subscription: 3, from: 'Active', to: 'Paused' })).sentence).toBe(
      'Subscription check failed at seq 4 (account 2): the event names subscription 3, which this account did not place earlier in the log.',
    );
  });

  it('refuses a move from a status the log did not leave it in, and to an unknown status', () => {
    const { state } = withSubscription();
    expect(moveFinding(state, 'Paused', 'Canceled')).toBe(`${MOVED_AT}subscription 3 moves from Paused to Canceled, but the log leaves it Active.`);
    expect(moveFinding(state, 'Active', 'Gone')).toBe(`${MOVED_AT}subscription 3 moves from Active to Gone, but the log leaves it Active.`);
  });

  it('refuses a move out of a final status and a move to the status it has', () => {
    const { state } = withSubscription();
    expect(moveFinding(state, 'Active', 'Active')).toBe(`${MOVED_AT}subscription 3 is Active; it cannot move to Active.`);
    move(state, 'Active', 'Canceled');
    expect(moveFinding(state, 'Canceled', 'Active')).toBe(`${MOVED_AT}subscription 3 is Canceled; it cannot move to Active.`);
  });

  it('completes only once all its posts are taken, and never one without a limit', () => {
    const { state, sub } = withSubscription({ oldPosts: 1 });
    sub.postsDone = 2;
    expect(moveFinding(state, 'Active', 'Completed')).toBe(`${MOVED_AT}subscription 3 completes after 2 posts, not the 3 it takes.`);
    sub.postsDone = 3;
    move(state, 'Active', 'Completed');
    expect(sub.status).toBe('Completed');
    const unlimited = withSubscription({ posts: 0 });
    expect(moveFinding(unlimited.state, 'Active', 'Completed')).toBe(`${MOVED_AT}subscription 3 completes after 0 posts, not the unlimited it takes.`);
  });

  it('expires only once its expiry has come', () => {
    const expiring = withSubscription({ expiryMs: EXPIRY_MS });
    const early = `${MOVED_AT}subscription 3 expires before its expiry.`;
    expect(moveFinding(expiring.state, 'Active', 'Expired', { atMs: EXPIRY_MS - 1 })).toBe(early);
    expect(moveFinding(expiring.state, 'Active', 'Expired', { atMs: String(EXPIRY_MS) })).toBe(early);
    expect(moveFinding(withSubscription().state, 'Active', 'Expired', { atMs: EXPIRY_MS })).toBe(early);
    move(expiring.state, 'Active', 'Expired', { atMs: EXPIRY_MS });
    expect(expiring.sub.status).toBe('Expired');
  });
});

/** The post's order.placed: 15 units for natgeo's post p1 at the subscription's rate. */
function post(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { orderType: 'Subscriptions', subscription: 3, post: 'p1', atMs: AT_MS, service: 5, rate: RATE, quantity: 15, extras: { username: 'natgeo' }, ...fields };
}
const row = { subscription: 3, post: 'p1' };
const postFinding = (state: ReplayState, e: Record<string, unknown>, r: Record<string, unknown> = row): string => findingOf(() => subscriptionOrder(state, 5, 1, 'o7', e, r)).sentence;
const BREAKS = 'Subscription check failed at seq 5 (account 1, order o7): the post\'s order breaks subscription 3: ';

describe("a post's order", () => {
  it('counts a post within the terms, from min to max units', () => {
    const { state, sub } = withSubscription();
    subscriptionOrder(state, 5, 1, 'o7', post({ quantity: 10 }), row);
    subscriptionOrder(state, 5, 1, 'o8', post({ quantity: 20, post: 'p2' }), { subscription: 3, post: 'p2' });
    expect(sub.postsDone).toBe(2);
  });

  it('leaves an order of another type alone, and refuses a subscription named on the wrong type or missing from a Subscriptions order', () => {
    const { state, sub } = withSubscription();
    subscriptionOrder(state, 5, 1, 'o7', { orderType: 'Default' }, {});
    subscriptionOrder(state, 5, 1, 'o7', {}, {});
    expect(sub.postsDone).toBe(0);
    const both = 'Subscription check failed at seq 5 (account 1, order o7): an order of type Subscriptions must name its subscription, and only such an order may.';
    expect(postFinding(state, post({ subscription: undefined }))).toBe(both);
    expect(postFinding(state, post({ orderType: 'Default' }))).toBe(both);
    expect(postFinding(state, post({ orderType: undefined }))).toBe(both);
  });

  it('refuses a post of a subscription the account did not place', () => {
    const { state } = withSubscription();
    expect(findingOf(() => subscriptionOrder(state, 5, 2, 'o7', post(), row)).sentence).toBe(
      'Subscription check failed at seq 5 (account 2, order o7): the event names subscription 3, which this account did not place earlier in the log.',
    );
  });

  it('refuses a post while the subscription is not Active, or once its expiry has passed', () => {
    const paused = withSubscription();
    paused.sub.status = 'Paused';
    expect(postFinding(paused.state, post())).toBe(`${BREAKS}it is Paused.`);
    const expiring = withSubscription({ expiryMs: EXPIRY_MS });
    expect(postFinding(expiring.state, post({ atMs: EXPIRY_MS }))).toBe(`${BREAKS}its expiry had passed.`);
    expect(postFinding(expiring.state, post({ atMs: 'now' }))).toBe(`${BREAKS}its expiry had passed.`);
    subscriptionOrder(expiring.state, 5, 1, 'o7', post({ atMs: EXPIRY_MS - 1 }), row);
    expect(expiring.sub.postsDone).toBe(1);
  });

  it('refuses another service, another rate, a quantity outside min..max and another username', () => {
    const { state } = withSubscription();
    expect(postFinding(state, post({ service: 6 }))).toBe(`${BREAKS}the order is for service 6, not 5.`);
    expect(postFinding(state, post({ rate: 1 }))).toBe(`${BREAKS}the order's rate 0.000001 credits is not the fixed 0.5 credits.`);
    expect(postFinding(state, post({ quantity: 9 }))).toBe(`${BREAKS}quantity 9 is outside 10..20.`);
    expect(postFinding(state, post({ quantity: 21 }))).toBe(`${BREAKS}quantity 21 is outside 10..20.`);
    expect(postFinding(state, post({ quantity: '15' }))).toBe(`${BREAKS}quantity 15 is outside 10..20.`);
    expect(postFinding(state, post({ extras: { username: 'nasa' } }))).toBe(`${BREAKS}the order is for nasa, not natgeo.`);
  });

  it('refuses a post without a post id, and one beyond the posts it takes; a subscription without a limit takes any number', () => {
    const { state, sub } = withSubscription();
    expect(postFinding(state, post({ post: undefined }))).toBe(`${BREAKS}it names no post.`);
    expect(postFinding(state, post({ post: '' }))).toBe(`${BREAKS}it names no post.`);
    sub.postsDone = 1;
    subscriptionOrder(state, 5, 1, 'o7', post(), row);
    expect(postFinding(state, post())).toBe(`${BREAKS}it takes 2 posts and had them all.`);
    const unlimited = withSubscription({ posts: 0 });
    unlimited.sub.postsDone = 10_000;
    subscriptionOrder(unlimited.state, 5, 1, 'o7', post(), row);
    expect(unlimited.sub.postsDone).toBe(10_001);
  });

  it('refuses a row that names another subscription or post than its placement', () => {
    const { state } = withSubscription();
    const mismatch = "Subscription check failed at seq 5 (account 1, order o7): the orders row does not name the post's subscription and post as order.placed does.";
    expect(postFinding(state, post(), { subscription: 4, post: 'p1' })).toBe(mismatch);
    expect(postFinding(state, post(), { subscription: 3, post: 'p2' })).toBe(mismatch);
  });
});

/** The state with its source's subscriptions table replaced by `rows`, or by none. */
function withRows(state: ReplayState, rows: SourceRow[] | undefined): ReplayState {
  const source = { ...state.source, subscriptions: rows === undefined ? undefined : () => rows };
  return { ...state, source };
}
const rowOf = (sub: ReplaySubscription): Record<string, unknown> => ({ ...sub, id: 3 });
const rowsFinding = (state: ReplayState): string => findingOf(() => checkSubscriptionRows(state)).sentence;

describe('the subscriptions table', () => {
  it('holds when each replayed subscription has its row as the log leaves it, and is not read where a source keeps none', () => {
    const { state, sub } = withSubscription();
    checkSubscriptionRows(withRows(state, [{ key: 3, value: rowOf(sub) }]));
    checkSubscriptionRows(withRows(state, undefined));
  });

  it('names a row no placement made, by its account when it names one', () => {
    const { state, sub } = withSubscription();
    expect(rowsFinding(withRows(state, [{ key: 9, value: { ...rowOf(sub), account: 1 } }]))).toBe('Subscription check failed at account 1: the subscriptions row 9 has no subscription.placed in the log.');
    expect(rowsFinding(withRows(state, [{ key: '3', value: { account: 'one' } }]))).toBe('Subscription check failed at the tables: the subscriptions row 3 has no subscription.placed in the log.');
  });

  it('names the first field a row holds otherwise than the log leaves it', () => {
    const { state, sub } = withSubscription({ expiryMs: EXPIRY_MS });
    for (const [field, value] of [['account', 2], ['status', 'Paused'], ['postsDone', 1], ['rate', 1], ['min', 11], ['max', 19], ['posts', 3], ['expiryMs', null]] as const) {
      expect(rowsFinding(withRows(state, [{ key: 3, value: { ...rowOf(sub), [field]: value } }]))).toBe(
        `Subscription check failed at account 1: subscription 3's row has ${field} ${String(value)} but the log leaves ${String(sub[field])}.`,
      );
    }
  });

  it('names a subscription without its row', () => {
    const { state } = withSubscription();
    expect(rowsFinding(withRows(state, []))).toBe('Subscription check failed at the tables: the log places 1 subscriptions but the subscriptions table holds 0.');
  });
});
