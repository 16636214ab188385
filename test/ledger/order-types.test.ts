import { describe, expect, it } from 'vitest';
import {
  foreignField,
  foreignFieldRefusal,
  isOrderInputField,
  isOrderType,
  isRanged,
  orderShapeProblem,
  readOrderInputs,
  type OrderType,
} from '../../src/ledger/order-types.js';

/**
 * The order types' terms, read in process: which fields each type takes,
 * the limits of its lists and names, its units, and drip-feed. The limits
 * are written out here as numbers (the contract's), not imported, so that a
 * changed limit shows as a failure.
 */

const URL_MAX = 2048;
const COMMENT_LINES = 1_000;
const COMMENT_CHARS = 500;
const USERNAME_CHARS = 64;
const HASHTAG_CHARS = 100;
const ANSWER_MAX = 100;
const RUNS_MAX = 1_000;
const INTERVAL_MAX = 30 * 24 * 60;

function refusal(type: OrderType, body: Record<string, unknown>, dripfeed = false): string {
  const read = readOrderInputs(type, dripfeed, body);
  if (read.ok) throw new Error(`expected a refusal, got ${JSON.stringify(read)}`);
  return read.message;
}

function accepted(type: OrderType, body: Record<string, unknown>, dripfeed = false): { quantity: number; extras: unknown } {
  const read = readOrderInputs(type, dripfeed, body);
  if (!read.ok) throw new Error(`expected the inputs to be accepted, got: ${read.message}`);
  return { quantity: read.quantity, extras: read.extras };
}

describe('type and field names', () => {
  it('isOrderType knows the catalogue names and nothing else', () => {
    expect(isOrderType('Default')).toBe(true);
    expect(isOrderType('Invites from Groups')).toBe(true);
    expect(isOrderType('default')).toBe(false);
    expect(isOrderType(7)).toBe(false);
  });

  it('isOrderInputField knows the input fields, not service or target', () => {
    expect(isOrderInputField('quantity')).toBe(true);
    expect(isOrderInputField('groups')).toBe(true);
    expect(isOrderInputField('service')).toBe(false);
    expect(isOrderInputField('target')).toBe(false);
  });

  it('only package types lie outside the service min..max', () => {
    expect(isRanged('Package')).toBe(false);
    expect(isRanged('Custom Comments Package')).toBe(false);
    expect(isRanged('Default')).toBe(true);
    expect(isRanged('Custom Comments')).toBe(true);
  });
});

describe('foreign fields', () => {
  it('names the field and every field the type takes', () => {
    expect(foreignFieldRefusal('Package', 'comments')).toBe("Field 'comments' is not taken by Package orders; they take 'target', 'quantity'.");
    expect(foreignFieldRefusal('Default', 'answer_number')).toBe("Field 'answer_number' is not taken by Default orders; they take 'target', 'quantity', 'runs', 'interval'.");
    expect(foreignFieldRefusal('Mentions with Hashtags', 'runs')).toBe(
      "Field 'runs' is not taken by Mentions with Hashtags orders; they take 'target', 'quantity', 'usernames', 'hashtags'.",
    );
  });

  it('finds the first field the type does not take; absent fields are not sent', () => {
    expect(foreignField('Poll', { quantity: 5, answer_number: 2, comments: 'a', usernames: 'b' })).toBe('comments');
    expect(foreignField('Poll', { quantity: 5, answer_number: 2, comments: undefined })).toBeNull();
  });

  it('a foreign field is refused before the type reads anything', () => {
    expect(refusal('Package', { comments: 'a' })).toBe("Field 'comments' is not taken by Package orders; they take 'target', 'quantity'.");
  });
});

describe('lists, one item per line', () => {
  it('a missing list is required, a blank one needs a non-empty line', () => {
    expect(refusal('Custom Comments', {})).toBe("Field 'comments' is required: one item per line.");
    expect(refusal('Custom Comments', { comments: 5 })).toBe("Field 'comments' is required: one item per line.");
    expect(refusal('Custom Comments', { comments: ' \n\r\n ' })).toBe("Field 'comments' must hold at least one non-empty line.");
  });

  it('lines are split at any line end, trimmed, and blank ones dropped; the quantity is what is left', () => {
    expect(accepted('Custom Comments', { comments: '  great! \r\nlove it\n\n\rwow\n' })).toEqual({ quantity: 3, extras: { comments: 'great!\nlove it\nwow' } });
  });

  it('exactly the line limit is accepted, one more is refused', () => {
    const at = Array.from({ length: COMMENT_LINES }, (_, i) => `c${i}`);
    expect(accepted('Custom Comments', { comments: at.join('\n') }).quantity).toBe(COMMENT_LINES);
    expect(refusal('Custom Comments', { comments: [...at, 'one more'].join('\n') })).toBe(
      `Field 'comments' has ${COMMENT_LINES + 1} lines; the limit is ${COMMENT_LINES} lines.`,
    );
  });

  it('a line of exactly the character limit is accepted, one more is refused and named by its 1-based number', () => {
    const at = 'x'.repeat(COMMENT_CHARS);
    expect(accepted('Custom Comments', { comments: `${at}\nb` }).quantity).toBe(2);
    expect(refusal('Custom Comments', { comments: `${at}x\nb` })).toBe(`Line 1 of 'comments' is longer than the limit of ${COMMENT_CHARS} characters.`);
    expect(refusal('Custom Comments', { comments: `a\n\n${at}x` })).toBe(`Line 2 of 'comments' is longer than the limit of ${COMMENT_CHARS} characters.`);
  });

  it('a quantity sent with a list must equal its line count', () => {
    expect(accepted('Mentions Custom List', { usernames: 'a\nb', quantity: 2 }).quantity).toBe(2);
    expect(refusal('Mentions Custom List', { usernames: 'a\nb', quantity: 3 })).toBe("Field 'quantity' is 3 but 'usernames' holds 2 lines; send 2 or leave quantity out.");
  });
});

describe('names (username, hashtag)', () => {
  it('trimmed and kept as sent, @ included', () => {
    expect(accepted('Comment Likes', { username: ' @alice ', quantity: 10 })).toEqual({ quantity: 10, extras: { username: '@alice' } });
  });

  it('exactly the character limit is accepted, one more is refused', () => {
    expect(accepted('Mentions Hashtag', { hashtag: '#'.padEnd(HASHTAG_CHARS, 'h'), quantity: 1 }).extras).toEqual({ hashtag: '#'.padEnd(HASHTAG_CHARS, 'h') });
    expect(refusal('Mentions Hashtag', { hashtag: '#'.padEnd(HASHTAG_CHARS + 1, 'h'), quantity: 1 })).toBe(
      `Field 'hashtag' is required: the hashtag whose posters are mentioned, one word of at most ${HASHTAG_CHARS} characters.`,
    );
  });

  it('missing, blank or with a space inside is refused', () => {
    const sentence = `Field 'username' is required: the comment owner's username, one word of at most ${USERNAME_CHARS} characters.`;
    expect(refusal('Comment Likes', { quantity: 10 })).toBe(sentence);
    expect(refusal('Comment Likes', { username: '  ', quantity: 10 })).toBe(sentence);
    expect(refusal('Comment Likes', { username: 'al ice', quantity: 10 })).toBe(sentence);
  });
});

describe('media URL', () => {
  const sentence = `Field 'media' is required: the post whose likers are mentioned, an http or https URL of at most ${URL_MAX} characters.`;

  it('http and https URLs are accepted, trimmed', () => {
    expect(accepted('Mentions Media Likers', { media: ' http://x.test/p ', quantity: 5 }).extras).toEqual({ media: 'http://x.test/p' });
    expect(accepted('Mentions Media Likers', { media: 'HTTPS://x.test/p', quantity: 5 }).extras).toEqual({ media: 'HTTPS://x.test/p' });
  });

  it('missing, another scheme, text before the scheme, or a space inside is refused', () => {
    expect(refusal('Mentions Media Likers', { quantity: 5 })).toBe(sentence);
    expect(refusal('Mentions Media Likers', { media: 'ftp://x.test/p', quantity: 5 })).toBe(sentence);
    expect(refusal('Mentions Media Likers', { media: 'see https://x.test/p', quantity: 5 })).toBe(sentence);
    expect(refusal('Mentions Media Likers', { media: 'https://x.test/p q', quantity: 5 })).toBe(sentence);
  });

  it('exactly the URL limit is accepted, one more is refused', () => {
    const prefix = 'https://x.test/';
    const at = prefix + 'p'.repeat(URL_MAX - prefix.length);
    expect(accepted('Mentions Media Likers', { media: at, quantity: 5 }).extras).toEqual({ media: at });
    expect(refusal('Mentions Media Likers', { media: `${at}p`, quantity: 5 })).toBe(sentence);
  });
});

describe('poll answer', () => {
  const sentence = `Field 'answer_number' is required: an integer from 1 to ${ANSWER_MAX}.`;

  it('1 and the maximum are accepted', () => {
    expect(accepted('Poll', { answer_number: 1, quantity: 10 }).extras).toEqual({ answerNumber: 1 });
    expect(accepted('Poll', { answer_number: ANSWER_MAX, quantity: 10 }).extras).toEqual({ answerNumber: ANSWER_MAX });
  });

  it.each([[undefined], [0], [ANSWER_MAX + 1], [1.5], ['2']])('answer_number %j is refused', (answer) => {
    expect(refusal('Poll', { answer_number: answer, quantity: 10 })).toBe(sentence);
  });
});

describe('units', () => {
  it('a type that counts sent units needs quantity', () => {
    expect(refusal('Default', {})).toBe("Field 'quantity' is required.");
    expect(accepted('Default', { quantity: 250 })).toEqual({ quantity: 250, extras: {} });
  });

  it('a package is one unit: quantity 1 or none, anything else refused', () => {
    expect(accepted('Package', {})).toEqual({ quantity: 1, extras: {} });
    expect(accepted('Package', { quantity: 1 })).toEqual({ quantity: 1, extras: {} });
    expect(refusal('Package', { quantity: 2 })).toBe("A Package order is one unit: send 'quantity' 1 or leave it out (it was 2).");
    expect(accepted('Custom Comments Package', { comments: 'a\nb\nc' })).toEqual({ quantity: 1, extras: { comments: 'a\nb\nc' } });
  });
});

describe('drip-feed', () => {
  it('runs and interval are kept on a service that offers drip-feed', () => {
    expect(accepted('Default', { quantity: 100, runs: 3, interval: 15 }, true)).toEqual({ quantity: 100, extras: { runs: 3, interval: 15 } });
  });

  it('a service without drip-feed refuses runs or interval', () => {
    const sentence = 'This service does not offer drip-feed; send no runs or interval.';
    expect(refusal('Default', { quantity: 100, runs: 3, interval: 15 })).toBe(sentence);
    expect(refusal('Default', { quantity: 100, interval: 15 })).toBe(sentence);
  });

  it('runs from 2 to the maximum', () => {
    const sentence = `Field 'runs' must be an integer from 2 to ${RUNS_MAX} for a drip-feed order.`;
    expect(accepted('Default', { quantity: 100, runs: 2, interval: 1 }, true).extras).toEqual({ runs: 2, interval: 1 });
    expect(accepted('Default', { quantity: 100, runs: RUNS_MAX, interval: 1 }, true).extras).toEqual({ runs: RUNS_MAX, interval: 1 });
    for (const runs of [undefined, 1, RUNS_MAX + 1, 2.5]) expect(refusal('Default', { quantity: 100, runs, interval: 1 }, true)).toBe(sentence);
  });

  it('interval from 1 to the maximum', () => {
    const sentence = `Field 'interval' must be an integer from 1 to ${INTERVAL_MAX} (minutes between runs) for a drip-feed order.`;
    expect(accepted('Default', { quantity: 100, runs: 2, interval: INTERVAL_MAX }, true).extras).toEqual({ runs: 2, interval: INTERVAL_MAX });
    for (const interval of [undefined, 0, INTERVAL_MAX + 1, 1.5]) expect(refusal('Default', { quantity: 100, runs: 2, interval }, true)).toBe(sentence);
  });
});

describe('orderShapeProblem: a stored order read again by its type', () => {
  it('an order kept as its type reads it has no problem', () => {
    expect(orderShapeProblem('Default', 100, undefined)).toBeNull();
    expect(orderShapeProblem('Poll', 10, { answerNumber: 3 })).toBeNull();
    expect(orderShapeProblem('Default', 100, { runs: 4, interval: 60 })).toBeNull();
    expect(orderShapeProblem('Custom Comments', 2, { comments: 'a\nb' })).toBeNull();
  });

  it('inputs the type refuses are named with the refusal', () => {
    expect(orderShapeProblem('Poll', 10, {})).toBe(`its inputs break the Poll type's rules: Field 'answer_number' is required: an integer from 1 to ${ANSWER_MAX}.`);
  });

  it('a quantity other than the inputs give is named, in units', () => {
    expect(orderShapeProblem('Custom Comments', 3, { comments: 'a\nb' })).toBe('a Custom Comments order of these inputs is 2 units, not 3.');
    expect(orderShapeProblem('Package', 2, undefined)).toBe('a Package order of these inputs is 1 unit, not 2.');
  });

  it('inputs not kept as the type reads them are named', () => {
    expect(orderShapeProblem('Custom Comments', 2, { comments: ' a\n\nb' })).toBe('its inputs are not kept as the Custom Comments type reads them.');
  });
});
