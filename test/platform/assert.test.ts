/**
 * `assert`: what a broken invariant throws. The handlers tell it apart from
 * other faults by its class, replay and log readers by its `invariant:`
 * prefix, and the message names the rule and the value that broke it.
 */
import { describe, expect, it } from 'vitest';
import { assert, InvariantError } from '../../src/platform/index.js';

function thrown(run: () => void): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return null;
}

describe('assert', () => {
  it('returns when the condition holds, for every truthy value', () => {
    for (const value of [true, 1, 'x', {}, [], -1]) expect(() => assert(value, 'holds')).not.toThrow();
  });

  it('throws an InvariantError, an Error with its own name and a stack, when the condition fails', () => {
    for (const value of [false, 0, '', null, undefined, Number.NaN]) {
      const error = thrown(() => assert(value, 'a rule'));
      expect(error).toBeInstanceOf(InvariantError);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).name).toBe('InvariantError');
      expect((error as Error).message).toBe('invariant: a rule');
      expect((error as Error).stack).toContain('assert.test.ts');
    }
  });

  it('renders the detail into the message only on failure: strings and objects as JSON, BigInts as digits, other values as String()', () => {
    expect((thrown(() => assert(false, 'credits must not be negative', { id: 3, credits: -5 })) as Error).message).toBe(
      'invariant: credits must not be negative; got {"id":3,"credits":-5}',
    );
    expect((thrown(() => assert(false, 'a kind', 'refill-opened')) as Error).message).toBe('invariant: a kind; got "refill-opened"');
    expect((thrown(() => assert(false, 'an integer', 1.5)) as Error).message).toBe('invariant: an integer; got 1.5');
    expect((thrown(() => assert(false, 'a number', Number.NaN)) as Error).message).toBe('invariant: a number; got NaN');
    expect((thrown(() => assert(false, 'big', { n: 2n ** 64n })) as Error).message).toBe('invariant: big; got {"n":"18446744073709551616"}');
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    expect((thrown(() => assert(false, 'circular', circular)) as Error).message).toBe('invariant: circular; got [object Object]');
    let read = false;
    const watched = {
      toJSON: () => {
        read = true;
        return 'seen';
      },
    };
    assert(true, 'holds', watched);
    expect(read).toBe(false);
  });

  it('narrows the type after it, as a TypeScript assertion function', () => {
    const value: string | null = ['a', null][0]!;
    assert(value !== null, 'present');
    // Compiles only because assert narrowed `value` to string.
    expect(value.length).toBe(1);
  });
});
