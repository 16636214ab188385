import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import {
  ForceJoinVerifier,
  TelegramUnavailable,
  type ForceJoinAccount,
  type ForceJoinConfig,
  type ForceJoinVerifierOptions,
} from '../../src/forcejoin/index.js';
import type { FakeBotApi } from './fake-bot-api.js';
import { configFor, useFakeBot } from './helpers.js';
import { waitFor } from '../helpers/wait-for.js';

const UNAVAILABLE_MESSAGE = 'Could not verify your Telegram channel membership right now; try again shortly. Join: https://t.me/fakechannel';

const fakeBot = useFakeBot();
let bot: FakeBotApi;
beforeAll(() => {
  bot = fakeBot();
});

function account(id: number, telegramUserId: number | null = id + 1000, marks: Partial<ForceJoinAccount> = {}): ForceJoinAccount {
  return { id, telegramUserId, verified: false, exempt: false, ...marks };
}

function setup(config: Partial<ForceJoinConfig> = {}, options: ForceJoinVerifierOptions = {}) {
  const clock = new ManualClock();
  const reported: TelegramUnavailable[] = [];
  const verifier = new ForceJoinVerifier(configFor(bot, config), clock, globalThis.fetch, {
    onUnavailable: (error) => reported.push(error),
    ...options,
  });
  return { clock, verifier, reported };
}

describe('ForceJoinVerifier', () => {
  it('answers joined for a member and not-joined, with the link, for a non-member', async () => {
    const { verifier } = setup();
    bot.setMember(1001, 'member');
    bot.setMember(1002, 'left');
    expect(await verifier.status(account(1))).toEqual({ kind: 'joined' });
    const no = await verifier.status(account(2));
    expect(no).toEqual({ kind: 'not-joined', message: expect.stringContaining('https://t.me/fakechannel'), joinLink: 'https://t.me/fakechannel' });
    expect(bot.calls.count).toBe(2);
  });

  it.each([
    ['creator', undefined, 'joined'],
    ['administrator', undefined, 'joined'],
    ['member', undefined, 'joined'],
    ['restricted', true, 'joined'],
    ['restricted', false, 'not-joined'],
    ['restricted', undefined, 'not-joined'],
    ['left', undefined, 'not-joined'],
    ['kicked', undefined, 'not-joined'],
    ['user-not-found', undefined, 'not-joined'],
  ] as const)('maps %s (is_member %s) to %s', async (status, isMember, kind) => {
    const { verifier } = setup();
    bot.setMember(1003, status, isMember);
    expect((await verifier.status(account(3))).kind).toBe(kind);
  });

  it('never calls Telegram for exempt or operator-verified accounts', async () => {
    let fetched = 0;
    const counting = ((...args: Parameters<typeof fetch>) => {
      fetched += 1;
      return fetch(...args);
    }) as typeof fetch;
    const verifier = new ForceJoinVerifier(configFor(bot), new ManualClock(), counting);
    bot.setMember(1004, 'left');
    expect(await verifier.status(account(4, 1004, { exempt: true }))).toEqual({ kind: 'joined' });
    expect(await verifier.status(account(4, 1004, { verified: true }))).toEqual({ kind: 'joined' });
    expect(await verifier.status(account(5, null, { verified: true }))).toEqual({ kind: 'joined' });
    expect(fetched).toBe(0);
    expect(bot.calls.count).toBe(0);
    // The injected fetch is the one used.
    await verifier.status(account(4, 1004));
    expect(fetched).toBe(1);
  });

  it('tells an account without a Telegram id to get linked and join, without calling Telegram', async () => {
    const { verifier } = setup();
    const status = await verifier.status(account(6, null));
    expect(status.kind).toBe('not-joined');
    if (status.kind === 'joined') throw new Error('unreachable');
    expect(status.message).toMatch(/not linked to a Telegram account/);
    expect(status.message).toMatch(/operator/);
    expect(status.message).toContain('https://t.me/fakechannel');
    expect(status.joinLink).toBe('https://t.me/fakechannel');
    expect(bot.calls.count).toBe(0);
  });

  it('answers a repeated check from the cache', async () => {
    const { verifier } = setup();
    bot.setMember(1007, 'member');
    await verifier.status(account(7));
    bot.setMember(1007, 'left');
    expect(await verifier.status(account(7))).toEqual({ kind: 'joined' });
    expect(bot.calls.count).toBe(1);
  });

  it('asks again once a joined answer is older than joinedCacheMs', async () => {
    const { verifier, clock } = setup({ joinedCacheMs: 600_000 });
    bot.setMember(1008, 'member');
    await verifier.status(account(8));
    clock.advance(599_999);
    await verifier.status(account(8));
    expect(bot.calls.count).toBe(1);
    clock.advance(1);
    bot.setMember(1008, 'left');
    expect((await verifier.status(account(8))).kind).toBe('not-joined');
    expect(bot.calls.count).toBe(2);
  });

  it('keeps a not-joined answer for less time than a joined one', async () => {
    const { verifier, clock } = setup({ joinedCacheMs: 600_000, notJoinedCacheMs: 30_000 });
    bot.setMember(1009, 'member');
    bot.setMember(1010, 'left');
    await verifier.status(account(9));
    await verifier.status(account(10));
    expect(bot.calls.count).toBe(2);
    clock.advance(29_999);
    await verifier.status(account(9));
    await verifier.status(account(10));
    expect(bot.calls.count).toBe(2);
    clock.advance(1);
    // The customer has just joined: the next check sees it, the member is still cached.
    bot.setMember(1010, 'member');
    expect(await verifier.status(account(10))).toEqual({ kind: 'joined' });
    expect(await verifier.status(account(9))).toEqual({ kind: 'joined' });
    expect(bot.calls.count).toBe(3);
    expect(bot.calls.last?.userId).toBe('1010');
  });

  it('does not cache when the cache time is 0', async () => {
    const { verifier } = setup({ joinedCacheMs: 0, notJoinedCacheMs: 0 });
    bot.setMember(1011, 'member');
    await verifier.status(account(11));
    await verifier.status(account(11));
    expect(bot.calls.count).toBe(2);
  });

  it('never caches unavailability', async () => {
    const { verifier, reported } = setup();
    bot.setMember(1012, 'member');
    bot.failWith(500);
    expect(await verifier.status(account(12))).toEqual({ kind: 'unavailable', message: UNAVAILABLE_MESSAGE, joinLink: 'https://t.me/fakechannel' });
    expect(reported.map((e) => e.reason)).toEqual(['rejected']);
    bot.failWith(null);
    expect(await verifier.status(account(12))).toEqual({ kind: 'joined' });
    expect(bot.calls.count).toBe(2);
  });

  it('fails closed when the bot token is refused (401)', async () => {
    const { verifier, reported } = setup({ botToken: '111:refused-token-xxxxxxxxxxxxxxxxxxxx' });
    bot.setMember(1013, 'member');
    const status = await verifier.status(account(13));
    expect(status).toEqual({ kind: 'unavailable', message: UNAVAILABLE_MESSAGE, joinLink: 'https://t.me/fakechannel' });
    expect(reported[0]?.reason).toBe('bad-token');
    expect(reported[0]?.message).not.toContain('refused-token');
  });

  it('fails closed on 500 and 429', async () => {
    const { verifier } = setup();
    bot.setMember(1014, 'member');
    bot.failWith(500);
    expect((await verifier.status(account(14))).kind).toBe('unavailable');
    bot.failWith(429);
    expect((await verifier.status(account(14))).kind).toBe('unavailable');
  });

  it("obeys a 429's retry_after: no request until it has passed, every check meanwhile unavailable at once, cached answers still served", async () => {
    const { verifier, clock, reported } = setup();
    bot.resetCalls();
    for (const id of [30, 31, 32]) bot.setMember(id + 1000, 'member');
    expect((await verifier.status(account(30))).kind).toBe('joined');
    bot.failWith(429); // retry_after 5
    expect((await verifier.status(account(31))).kind).toBe('unavailable');
    bot.failWith(null);
    expect(bot.calls.count).toBe(2);
    clock.advance(4_999);
    expect(await verifier.status(account(32))).toEqual({ kind: 'unavailable', message: UNAVAILABLE_MESSAGE, joinLink: 'https://t.me/fakechannel' });
    expect((await verifier.status(account(30))).kind).toBe('joined');
    expect(bot.calls.count).toBe(2);
    expect(reported.map((e) => e.reason)).toEqual(['rate-limited']);
    clock.advance(1);
    expect((await verifier.status(account(32))).kind).toBe('joined');
    expect(bot.calls.count).toBe(3);
  });

  it('fails closed when Telegram is slower than timeoutMs (real timer)', async () => {
    const { verifier, reported } = setup({ timeoutMs: 100 });
    bot.setMember(1015, 'member');
    // Telegram never answers: only the timeout can end the check.
    bot.hold();
    const status = await verifier.status(account(15));
    expect(status.kind).toBe('unavailable');
    if (status.kind === 'joined') throw new Error('unreachable');
    expect(status.message).toBe(UNAVAILABLE_MESSAGE);
    expect(reported[0]?.reason).toBe('timeout');
  });

  it('shares one request among concurrent checks of one account (single-flight)', async () => {
    const { verifier } = setup();
    bot.setMember(1016, 'member');
    bot.setDelayMs(100);
    const answers = await Promise.all(Array.from({ length: 10 }, () => verifier.status(account(16))));
    expect(answers).toEqual(Array.from({ length: 10 }, () => ({ kind: 'joined' })));
    expect(bot.calls.count).toBe(1);
    expect(verifier.stats()).toEqual({ cached: 1, inFlight: 0 });
  });

  it('reports a shared failure once, and every waiter gets unavailable', async () => {
    const { verifier, reported } = setup();
    bot.setDelayMs(50);
    bot.failWith(503);
    const answers = await Promise.all(Array.from({ length: 5 }, () => verifier.status(account(17))));
    expect(answers.every((a) => a.kind === 'unavailable')).toBe(true);
    expect(bot.calls.count).toBe(1);
    expect(reported).toHaveLength(1);
  });

  it('does not let a slow account delay another', async () => {
    const { verifier } = setup({ timeoutMs: 2_000 });
    bot.setMember(1018, 'member');
    bot.setMember(1019, 'member');
    // Telegram does not answer about 1018 until released: were the fast
    // check queued behind it, it would never finish.
    bot.hold(1018);
    const finished: number[] = [];
    const slow = verifier.status(account(18)).then((s) => (finished.push(18), s));
    const fast = await verifier.status(account(19)).then((s) => (finished.push(19), s));
    expect(fast).toEqual({ kind: 'joined' });
    expect(finished).toEqual([19]);
    bot.release();
    expect(await slow).toEqual({ kind: 'joined' });
    expect(finished).toEqual([19, 18]);
  });

  it('answers unavailable at once beyond concurrentMax requests in flight, without queueing', async () => {
    const { verifier, reported } = setup({}, { concurrentMax: 2 });
    for (const user of [1020, 1021, 1022]) bot.setMember(user, 'member');
    bot.hold();
    const first = verifier.status(account(20));
    const second = verifier.status(account(21));
    // Joining an existing flight does not count against the limit.
    const firstAgain = verifier.status(account(20));
    expect(verifier.stats().inFlight).toBe(2);
    // Answered while Telegram holds the other two: it did not queue behind them.
    const third = await verifier.status(account(22));
    expect(third.kind).toBe('unavailable');
    expect(reported.map((e) => e.reason)).toEqual(['overloaded']);
    bot.release();
    expect(await Promise.all([first, second, firstAgain])).toEqual([{ kind: 'joined' }, { kind: 'joined' }, { kind: 'joined' }]);
    expect(verifier.stats().inFlight).toBe(0);
    expect(await verifier.status(account(22))).toEqual({ kind: 'joined' });
  });

  it('reports refusals at the concurrency limit at most once a second, not once per order', async () => {
    const { verifier, reported, clock } = setup({}, { concurrentMax: 1 });
    for (const user of [1030, 1031]) bot.setMember(user, 'member');
    bot.hold();
    const first = verifier.status(account(30));
    for (let i = 0; i < 5; i++) expect((await verifier.status(account(31))).kind).toBe('unavailable');
    expect(reported.map((e) => e.reason)).toEqual(['overloaded']);
    clock.advance(999);
    await verifier.status(account(31));
    expect(reported).toHaveLength(1);
    clock.advance(1);
    await verifier.status(account(31));
    expect(reported.map((e) => e.reason)).toEqual(['overloaded', 'overloaded']);
    bot.release();
    expect(await first).toEqual({ kind: 'joined' });
  });

  it('bounds the cache, dropping the oldest entry', async () => {
    const { verifier } = setup({}, { cacheMax: 2 });
    for (const user of [1023, 1024, 1025]) bot.setMember(user, 'member');
    await verifier.status(account(23));
    await verifier.status(account(24));
    await verifier.status(account(25));
    expect(verifier.stats().cached).toBe(2);
    expect(bot.calls.count).toBe(3);
    await verifier.status(account(25));
    await verifier.status(account(24));
    expect(bot.calls.count).toBe(3);
    await verifier.status(account(23));
    expect(bot.calls.count).toBe(4);
  });

  it('invalidate drops the cached answer', async () => {
    const { verifier } = setup();
    bot.setMember(1026, 'member');
    await verifier.status(account(26));
    bot.setMember(1026, 'kicked');
    expect((await verifier.status(account(26))).kind).toBe('joined');
    verifier.invalidate(26);
    expect((await verifier.status(account(26))).kind).toBe('not-joined');
    expect(bot.calls.count).toBe(2);
  });

  it('does not cache or share an answer whose request started before an invalidate', async () => {
    const { verifier } = setup();
    bot.setMember(1027, 'left');
    bot.setDelayMs(200);
    const before = verifier.status(account(27));
    await waitFor('the request to reach the Telegram fake', () => bot.calls.count >= 1);
    expect(bot.calls.count).toBe(1);
    // The operator relinks or re-marks: the customer has joined meanwhile.
    verifier.invalidate(27);
    bot.setMember(1027, 'member');
    bot.setDelayMs(0);
    // Started after the invalidation: a new request, not the old one, and it answers first.
    expect(await verifier.status(account(27))).toEqual({ kind: 'joined' });
    // The old request's stale answer reaches its own caller but does not overwrite the cache.
    expect((await before).kind).toBe('not-joined');
    expect(await verifier.status(account(27))).toEqual({ kind: 'joined' });
    expect(bot.calls.count).toBe(2);
  });

  it('does not reuse a cached answer after the Telegram id changes, even without invalidate', async () => {
    const { verifier } = setup();
    bot.setMember(1028, 'member');
    bot.setMember(2028, 'left');
    await verifier.status(account(28, 1028));
    expect((await verifier.status(account(28, 2028))).kind).toBe('not-joined');
    expect(bot.calls.last?.userId).toBe('2028');
  });

  it('survives an onUnavailable hook that throws', async () => {
    const { verifier } = setup({}, { onUnavailable: () => { throw new Error('logger broke'); } });
    bot.failWith(500);
    expect((await verifier.status(account(29))).kind).toBe('unavailable');
  });

  it('never puts the bot token in what it reports', async () => {
    const secret = '555:SECRET-verifier_token_0123456789';
    const { verifier, reported } = setup({ botToken: secret });
    bot.failWith(500, JSON.stringify({ ok: false, error_code: 500, description: `boom ${secret}` }));
    const status = await verifier.status(account(30));
    expect(JSON.stringify(status)).not.toContain('SECRET');
    expect(reported[0]?.message).not.toContain('SECRET');
  });
});
