/**
 * bench/http/variants.ts reads its variants from a JSON option: what an
 * engineer types must give the variants meant, or a sentence saying what is
 * wrong, before any server starts (a typo found after twenty minutes of
 * rounds costs twenty minutes). And the disk figure the benchmark reports
 * reads the right line of /proc/diskstats.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readVariants } from '../../bench/http/variants.js';
import { describeRatio, pairedRatio, roundOrder } from '../../bench/http/interleave.js';
import { SERVER_MAIN } from '../../bench/http/server-process.js';
import { parseDiskWrites } from '../../bench/http/procstat.js';

describe('the ratio of two variants', () => {
  it('counts each server once as well as every run: alike runs of one server make the per-run error too small', () => {
    // Two runs per server, alike within a server, servers far apart.
    const base = { orders: [10_000, 10_100, 14_000, 14_100, 9_000, 9_100, 13_000, 13_100], serverOrders: [10_050, 14_050, 9_050, 13_050] };
    const other = { orders: [9_000, 9_100, 12_600, 12_700, 8_100, 8_200, 11_700, 11_800], serverOrders: [9_050, 12_650, 8_150, 11_750] };
    const text = describeRatio('on ÷ off', other, base);
    const m = /^on ÷ off = (\d\.\d\d) ± (\d\.\d\d) counting every run; (\d\.\d{3}) ± (\d\.\d{3}) counting each server once \(4 and 4 servers\); (\d\.\d{3}) ± (\d\.\d{3}) \(4 rounds\) paired by round$/.exec(text);
    expect(m, text).not.toBeNull();
    expect(Number(m![1])).toBeCloseTo(0.9, 2);
    expect(Number(m![3])).toBeCloseTo(0.9, 2);
    // Four servers, not eight runs: the honest error is the larger one.
    expect(Number(m![4])).toBeGreaterThan(Number(m![2]));
    // Paired by round the drift between rounds (10,000 to 14,000) leaves the error.
    expect(Number(m![5])).toBeCloseTo(0.9, 2);
    expect(Number(m![6])).toBeLessThan(Number(m![4]) / 5);
  });

  it('pairs each round\'s two servers: drift between rounds cancels, a difference within rounds stays', () => {
    // The machine drifts from round to round; the variant costs 10% in every round, give or take 1%.
    const base = [10_000, 14_000, 9_000, 13_000, 11_000, 12_500];
    const other = [9_000, 12_740, 8_190, 11_570, 9_900, 11_250];
    const paired = pairedRatio(other, base)!;
    expect(paired.rounds).toBe(6);
    expect(paired.ratio).toBeGreaterThan(0.9 * 0.99);
    expect(paired.ratio).toBeLessThan(0.9 * 1.01);
    expect(paired.se).toBeLessThan(0.005);
    // Equal in every round: no difference, no error.
    expect(pairedRatio(base, base)).toEqual({ ratio: 1, se: 0, rounds: 6 });
    // A round that has not finished for both variants is left out; one round is no estimate.
    expect(pairedRatio([9_000, 12_600, 8_100], base.slice(0, 2))!.rounds).toBe(2);
    expect(pairedRatio([9_000], base)).toBeNull();
  });

  it('alternates the order of the variants by round, so that each takes every place in a round equally often', () => {
    const order = [1, 2, 3, 4].map((round) => roundOrder(['off', 'on', 'on 5%'], round).join(' '));
    expect(order).toEqual(['off on on 5%', 'on 5% on off', 'off on on 5%', 'on 5% on off']);
  });
});

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

describe('bench:http: disk writes from /proc/diskstats', () => {
  const DISKSTATS = [
    ' 254       0 vda 111391 13794 3461570 70742 72527246 130985 1032819040 17628987 0 4021612 20130675',
    ' 254       1 vda1 100 0 800 10 2000 0 77777 30 0 40 40',
    '   8      16 sdb 5 0 40 1 7 0 123 2 0 3 3',
  ].join('\n');

  it('reads the sectors written to the device a stat().dev names, partition or whole disk', () => {
    expect(parseDiskWrites(DISKSTATS, (254 << 8) | 0)).toEqual({ device: 'vda', sectors: 1032819040 });
    expect(parseDiskWrites(DISKSTATS, (254 << 8) | 1)).toEqual({ device: 'vda1', sectors: 77777 });
    expect(parseDiskWrites(DISKSTATS, (8 << 8) | 16)).toEqual({ device: 'sdb', sectors: 123 });
  });

  it('answers null for a file system without a block device (tmpfs: major 0)', () => {
    expect(parseDiskWrites(DISKSTATS, 0x2e)).toBeNull();
  });
});
