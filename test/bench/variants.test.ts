/**
 * bench/http/variants.ts reads its variants from a JSON option: what an
 * engineer types must give the variants meant, or a sentence saying what is
 * wrong, before any server starts (a typo found after twenty minutes of
 * rounds costs twenty minutes).
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readVariants } from '../../bench/http/variants.js';
import { SERVER_MAIN } from '../../bench/http/server-process.js';

describe('bench:variants: reading --variants', () => {
  it('gives each variant its server, environment and options; the default server is the build', () => {
    const [off, on] = readVariants('[{"name":"off","args":["--webhooks","--webhooks-disabled"]},{"name":"on 5%","entry":"copy/dist/src/main.js","env":{"WEBHOOKS_BUSY_PERCENT":"5"},"args":["--webhooks"]}]');
    expect(off).toMatchObject({ name: 'off', entry: SERVER_MAIN, env: {}, args: ['--webhooks', '--webhooks-disabled'], orders: [] });
    expect(on).toMatchObject({ name: 'on 5%', entry: resolve('copy/dist/src/main.js'), env: { WEBHOOKS_BUSY_PERCENT: '5' }, args: ['--webhooks'] });
  });

  it('refuses what it cannot run with a sentence naming the variant', () => {
    expect(() => readVariants('[{"name":"off"}')).toThrow(/not JSON/);
    expect(() => readVariants('[{"name":"off"}]')).toThrow(/at least two/);
    expect(() => readVariants('[{"name":"a"},{"name":"a"}]')).toThrow(/two variants are named "a"/);
    expect(() => readVariants('[{"name":"a"},{"name":"b","arg":["--webhooks"]}]')).toThrow(/variant 2 has unknown field "arg"/);
    expect(() => readVariants('[{"name":"a"},{"name":"b","env":{"N":5}}]')).toThrow(/b: "env" is an object of strings/);
    expect(() => readVariants('[{"name":"a/b"},{"name":"c"}]')).toThrow(/variant 1 needs a "name" without slashes/);
  });
});
