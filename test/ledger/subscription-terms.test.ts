/**
 * A subscription's terms as API v2's `add` carries them, read and checked
 * in process: every field's refusal sentence exactly, each bound at its
 * value and one past it, the expiry date's calendar (UTC days, leap years,
 * DD/MM/YYYY both ways), and the check of terms against their service and
 * the date they are placed on, which the replay runs again on every stored
 * subscription. Expected instants are written with Date.UTC in the test.
 */
import { describe, expect, it } from 'vitest';
import { parseMicro } from '../../src/money/index.js';
import { withServiceDefaults, type ServiceRecord, type SubscriptionTerms } from '../../src/ledger/index.js';
import { expiryFromText, expiryText, isPostId, readSubscriptionTerms, SUBSCRIPTION_FIELDS, subscriptionTermsProblem } from '../../src/ledger/subscription-terms.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const USERNAME_REFUSAL = "Field 'username' is required: the account whose new posts are delivered to, one word of at most 64 characters.";
const MIN_REFUSAL = "Field 'min' is required: the fewest units delivered to each post, a whole number.";
const MAX_REFUSAL = "Field 'max' is required: the most units delivered to each post, a whole number.";
const POSTS_REFUSAL = "Field 'posts' must be a whole number from 0 to 10000 (0: no limit).";
const OLD_POSTS_REFUSAL = "Field 'old_posts' must be a whole number from 0 to 100.";
const DELAY_REFUSAL = "Field 'delay' must be one of 0, 5, 10, 15, 30, 60, 90, 120, 150, 180, 210, 240, 270, 300, 360, 420, 480, 540, 600 (minutes).";
const EXPIRY_REFUSAL = "Field 'expiry' must be a date as DD/MM/YYYY, or left out for no end.";

/** The three required fields, valid, with `over` on top. */
const fields = (over: Record<string, string> = {}): Record<string, string> => ({ username: 'natgeo', min: '10', max: '20', ...over });

/** The sentence a refusal carries, or 'accepted'. */
function refusal(over: Record<string, string>): string {
  const read = readSubscriptionTerms(fields(over));
  return read.ok ? 'accepted' : read.message;
}

function service(over: Partial<ServiceRecord> = {}): ServiceRecord {
  return withServiceDefaults({ id: 7, platform: 'instagram', name: 'Auto likes', rate: parseMicro('0.25')!, min: 10, max: 1000, enabled: true, type: 'Subscriptions', ...over });
}

function terms(over: Partial<SubscriptionTerms> = {}): SubscriptionTerms {
  return { service: 7, username: 'natgeo', min: 10, max: 20, posts: 0, oldPosts: 0, delayMinutes: 0, expiryMs: null, ...over };
}

describe('reading subscription terms', () => {
  it('names its fields in the order API pages list them', () => {
    expect(SUBSCRIPTION_FIELDS).toEqual(['username', 'min', 'max', 'posts', 'old_posts', 'delay', 'expiry']);
  });

  it('takes the three required fields alone, the rest defaulting to no limit, no delay and no end', () => {
    expect(readSubscriptionTerms(fields())).toEqual({ ok: true, terms: { username: 'natgeo', min: 10, max: 20, posts: 0, oldPosts: 0, delayMinutes: 0, expiryMs: null } });
  });

  it('reads every field when all are sent', () => {
    const read = readSubscriptionTerms({ username: ' natgeo ', min: '015', max: '40', posts: '5', old_posts: '3', delay: '30', expiry: '15/03/2030' });
    expect(read).toEqual({ ok: true, terms: { username: 'natgeo', min: 15, max: 40, posts: 5, oldPosts: 3, delayMinutes: 30, expiryMs: Date.UTC(2030, 2, 16) } });
  });

  it('treats empty optional fields as absent, and an expiry of 0 as no end', () => {
    expect(readSubscriptionTerms(fields({ posts: '', old_posts: '', delay: '', expiry: '' }))).toEqual(readSubscriptionTerms(fields()));
    expect(readSubscriptionTerms(fields({ expiry: '0' }))).toEqual(readSubscriptionTerms(fields()));
  });

  it('requires a username of one word of 1 to 64 characters without spaces or controls', () => {
    for (const username of ['', '   ', 'a b', 'a\tb', 'a\u00a0b', 'a\x00b', 'a\x1fb', 'a\x7fb', 'x'.repeat(65)]) {
      expect(refusal({ username }), JSON.stringify(username)).toBe(USERNAME_REFUSAL);
    }
    expect(readSubscriptionTerms({ min: '10', max: '20' })).toEqual({ ok: false, message: USERNAME_REFUSAL });
    for (const username of ['x', 'x'.repeat(64), 'a!b~c', 'nat.geo_1', 'ünïcödé']) expect(refusal({ username }), username).toBe('accepted');
  });

  it('requires min and max as whole numbers of at least 1, min not above max', () => {
    for (const min of ['', '0', '-1', '1.5', '1e3', ' 10', '10 ', 'ten', '0x10']) expect(refusal({ min }), min).toBe(MIN_REFUSAL);
    expect(readSubscriptionTerms({ username: 'natgeo', max: '20' })).toEqual({ ok: false, message: MIN_REFUSAL });
    for (const max of ['', '0', '-5', '2.0', '20x']) expect(refusal({ min: '1', max }), max).toBe(MAX_REFUSAL);
    expect(readSubscriptionTerms({ username: 'natgeo', min: '10' })).toEqual({ ok: false, message: MAX_REFUSAL });
    expect(readSubscriptionTerms(fields({ min: '1', max: '1' }))).toMatchObject({ ok: true, terms: { min: 1, max: 1 } });
    expect(refusal({ min: '21', max: '20' })).toBe("Field 'min' (21) must not be above 'max' (20).");
    expect(readSubscriptionTerms(fields({ min: '20', max: '20' }))).toMatchObject({ ok: true, terms: { min: 20, max: 20 } });
  });

  it('reads whole numbers up to the largest safe integer and refuses beyond it', () => {
    expect(readSubscriptionTerms(fields({ max: '9007199254740991' }))).toMatchObject({ ok: true, terms: { max: Number.MAX_SAFE_INTEGER } });
    expect(refusal({ max: '9007199254740992' })).toBe(MAX_REFUSAL);
    expect(refusal({ max: '99999999999999999' })).toBe(MAX_REFUSAL);
    expect(readSubscriptionTerms(fields({ max: '0000000000000020' }))).toMatchObject({ ok: true, terms: { max: 20 } });
    expect(refusal({ max: '00000000000000020' })).toBe(MAX_REFUSAL);
  });

  it('takes posts from 0 to 10000 and old_posts from 0 to 100, each refusal naming its own range', () => {
    expect(readSubscriptionTerms(fields({ posts: '10000', old_posts: '100' }))).toMatchObject({ ok: true, terms: { posts: 10_000, oldPosts: 100 } });
    expect(readSubscriptionTerms(fields({ posts: '0', old_posts: '0' }))).toMatchObject({ ok: true, terms: { posts: 0, oldPosts: 0 } });
    for (const posts of ['10001', '-1', 'x', '1.0']) expect(refusal({ posts }), posts).toBe(POSTS_REFUSAL);
    for (const old of ['101', '-1', 'many']) expect(refusal({ old_posts: old }), old).toBe(OLD_POSTS_REFUSAL);
    expect(refusal({ posts: '10001', old_posts: '101' })).toBe(POSTS_REFUSAL);
  });

  it('takes only the listed delays, in minutes', () => {
    for (const delay of ['0', '5', '30', '600']) expect(readSubscriptionTerms(fields({ delay }))).toMatchObject({ ok: true, terms: { delayMinutes: Number(delay) } });
    for (const delay of ['7', '601', '-5', 'x', '5.0', '1e1']) expect(refusal({ delay }), delay).toBe(DELAY_REFUSAL);
  });

  it('reads the expiry as the end of the UTC day it names, and refuses what is no such day', () => {
    expect(readSubscriptionTerms(fields({ expiry: '1/2/2030' }))).toMatchObject({ ok: true, terms: { expiryMs: Date.UTC(2030, 1, 2) } });
    expect(readSubscriptionTerms(fields({ expiry: '31/12/2030' }))).toMatchObject({ ok: true, terms: { expiryMs: Date.UTC(2031, 0, 1) } });
    for (const expiry of ['00', 'x', '31/02/2030', '15-03-2030', '15/03/30', '2030/03/15', '15/03/2030 ', ' 15/03/2030', '123/03/2030']) {
      expect(refusal({ expiry }), expiry).toBe(EXPIRY_REFUSAL);
    }
  });

  it('checks fields in the order they are listed, so the first bad one is named', () => {
    expect(readSubscriptionTerms({ min: '0', max: '0', posts: 'x', delay: '7', expiry: 'x' })).toEqual({ ok: false, message: USERNAME_REFUSAL });
    expect(refusal({ min: '0', max: '0' })).toBe(MIN_REFUSAL);
    expect(refusal({ max: '0', posts: 'x' })).toBe(MAX_REFUSAL);
    expect(refusal({ min: '30', posts: 'x' })).toBe("Field 'min' (30) must not be above 'max' (20).");
    expect(refusal({ old_posts: 'x', delay: '7' })).toBe(OLD_POSTS_REFUSAL);
    expect(refusal({ delay: '7', expiry: 'x' })).toBe(DELAY_REFUSAL);
  });
});

describe('expiry dates', () => {
  it('reads DD/MM/YYYY with one or two digits for the day and month, ending at the next UTC midnight', () => {
    expect(expiryFromText('15/03/2030')).toBe(Date.UTC(2030, 2, 16));
    expect(expiryFromText('5/3/2030')).toBe(Date.UTC(2030, 2, 6));
    expect(expiryFromText('01/01/1970')).toBe(DAY_MS);
    expect(expiryFromText('29/02/2028')).toBe(Date.UTC(2028, 2, 1));
  });

  it('refuses days and months that do not exist, rather than rolling them over', () => {
    for (const text of ['29/02/2030', '31/04/2030', '32/01/2030', '00/01/2030', '01/00/2030', '01/13/2030', '99/99/2030']) expect(expiryFromText(text), text).toBe(null);
  });

  it('refuses years before 100, which a Date would read as 19xx', () => {
    expect(expiryFromText('01/01/0050')).toBe(null);
    expect(expiryFromText('01/01/0100')).toBe(Date.UTC(100, 0, 2));
  });

  it('refuses other shapes whole, not a date found inside them', () => {
    for (const text of ['', '1/1/203', '1/1/20300', 'a1/1/2030', '1/1/2030a', '001/1/2030', '1/001/2030', '1.1.2030', '1/1\n/2030']) expect(expiryFromText(text), text).toBe(null);
  });

  it('writes the day an expiry runs through as DD/MM/YYYY, the inverse of reading it', () => {
    expect(expiryText(Date.UTC(2030, 2, 16))).toBe('15/03/2030');
    expect(expiryText(Date.UTC(2031, 0, 1))).toBe('31/12/2030');
    expect(expiryText(Date.UTC(2030, 10, 12))).toBe('11/11/2030');
    expect(expiryText(Date.UTC(2030, 0, 2, 12))).toBe('01/01/2030');
    for (const text of ['01/01/2030', '29/02/2028', '31/12/2099']) expect(expiryText(expiryFromText(text)!)).toBe(text);
  });
});

describe('terms against their service and the date', () => {
  const nowMs = Date.UTC(2030, 0, 10, 15, 30);

  it('accepts terms within the service range, with or without an expiry', () => {
    expect(subscriptionTermsProblem(terms(), service(), nowMs)).toBe(null);
    expect(subscriptionTermsProblem(terms({ min: 10, max: 1000, posts: 10_000, oldPosts: 100, delayMinutes: 600, expiryMs: Date.UTC(2030, 1, 1) }), service(), nowMs)).toBe(null);
  });

  it('refuses a service of another type, before anything else', () => {
    expect(subscriptionTermsProblem(terms({ min: 1 }), service({ type: 'Default' }), nowMs)).toEqual({ code: 'VALIDATION', message: 'Service 7 is a Default service, not a Subscriptions one.' });
    expect(subscriptionTermsProblem(terms(), service({ id: 9, type: 'Package' }), nowMs)).toEqual({ code: 'VALIDATION', message: 'Service 9 is a Package service, not a Subscriptions one.' });
  });

  it("refuses min below the service's min and max above its max as QTY, the bounds themselves allowed", () => {
    const qty = { code: 'QTY', message: "Fields 'min' and 'max' must lie between 10 and 1000 for service 7." };
    expect(subscriptionTermsProblem(terms({ min: 9 }), service(), nowMs)).toEqual(qty);
    expect(subscriptionTermsProblem(terms({ max: 1001 }), service(), nowMs)).toEqual(qty);
    expect(subscriptionTermsProblem(terms({ min: 10, max: 1000 }), service(), nowMs)).toBe(null);
    expect(subscriptionTermsProblem(terms({ min: 9, delayMinutes: 7 }), service(), nowMs)).toEqual(qty);
  });

  it('refuses stored terms that break a reading rule, with that rule\'s sentence', () => {
    const cases: [Partial<SubscriptionTerms>, string][] = [
      [{ username: 'a b' }, USERNAME_REFUSAL],
      [{ min: 30, max: 20 }, "Field 'min' (30) must not be above 'max' (20)."],
      [{ posts: 10_001 }, POSTS_REFUSAL],
      [{ oldPosts: 101 }, OLD_POSTS_REFUSAL],
      [{ delayMinutes: 7 }, DELAY_REFUSAL],
      [{ expiryMs: Date.UTC(10_000, 0, 2) }, EXPIRY_REFUSAL],
    ];
    for (const [over, message] of cases) expect(subscriptionTermsProblem(terms(over), service(), nowMs), JSON.stringify(over)).toEqual({ code: 'VALIDATION', message });
  });

  it('refuses a stored minimum of 0 that its service would allow, since the reading rule needs at least 1', () => {
    expect(subscriptionTermsProblem(terms({ min: 0, max: 20 }), service({ min: 0 }), nowMs)).toEqual({ code: 'VALIDATION', message: MIN_REFUSAL });
  });

  it('refuses an expiry that is not the end of a UTC day', () => {
    const notEnd = { code: 'VALIDATION', message: "Field 'expiry' is not the end of a day (UTC)." };
    expect(subscriptionTermsProblem(terms({ expiryMs: Date.UTC(2030, 1, 1) + 1 }), service(), nowMs)).toEqual(notEnd);
    expect(subscriptionTermsProblem(terms({ expiryMs: Date.UTC(2030, 1, 1) - 1 }), service(), nowMs)).toEqual(notEnd);
  });

  it('refuses an expiry at or before the moment of placing, and takes one a millisecond after', () => {
    const past = { code: 'VALIDATION', message: "Field 'expiry' is a day already past; send a later date, or none." };
    const expiryMs = Date.UTC(2030, 0, 11);
    expect(subscriptionTermsProblem(terms({ expiryMs }), service(), expiryMs)).toEqual(past);
    expect(subscriptionTermsProblem(terms({ expiryMs }), service(), expiryMs + DAY_MS)).toEqual(past);
    expect(subscriptionTermsProblem(terms({ expiryMs }), service(), expiryMs - 1)).toBe(null);
  });

  it('refuses an expiry more than 3660 days ahead, and takes one exactly that far', () => {
    const expiryMs = Date.UTC(2040, 0, 1);
    const far = { code: 'VALIDATION', message: "Field 'expiry' lies more than 3660 days ahead." };
    expect(subscriptionTermsProblem(terms({ expiryMs }), service(), expiryMs - 3660 * DAY_MS)).toBe(null);
    expect(subscriptionTermsProblem(terms({ expiryMs }), service(), expiryMs - 3660 * DAY_MS - 1)).toEqual(far);
  });
});

describe('post ids', () => {
  it('are 1 to 128 printable ASCII characters without spaces', () => {
    for (const id of ['a', 'C1abc-_.', '!~', 'x'.repeat(128)]) expect(isPostId(id), id).toBe(true);
    for (const id of ['', 'x'.repeat(129), 'a b', ' ab', 'ab ', 'a\x7f', 'é', 'a\tb', 'a\nb']) expect(isPostId(id), JSON.stringify(id)).toBe(false);
  });

  it('are strings only', () => {
    for (const id of [1, null, undefined, ['a'], { length: 1 }]) expect(isPostId(id)).toBe(false);
  });
});
