import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { addressKey, siteKey } from '../../src/http/guards/address-key.js';
import { AuthFailureLimiter } from '../../src/http/guards/auth-failures.js';
import { SITE_FACTOR } from '../../src/http/limits.js';

describe('address key for per-address limits', () => {
  it('keys an IPv6 address by its /64, however it is spelled', () => {
    const spellings = [
      '2001:db8:85a3:42::1',
      '2001:0DB8:85A3:0042:0000:0000:0000:0001',
      '2001:db8:85a3:42:ffff:ffff:ffff:fffe',
      '2001:db8:85a3:42:1234::',
      '2001:db8:85a3:42::192.0.2.1',
      '2001:db8:85a3:42::9%eth0',
    ];
    expect(new Set(spellings.map(addressKey))).toEqual(new Set(['2001:db8:85a3:42::/64']));
    expect(addressKey('2001:db8:85a3:43::1')).toBe('2001:db8:85a3:43::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
  });

  it('keys an IPv4-mapped IPv6 address by its IPv4 address', () => {
    expect(addressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('0000:0000:0000:0000:0000:ffff:c000:0207')).toBe('192.0.2.7');
    expect(addressKey('::FFFF:C000:207')).toBe('192.0.2.7');
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
    // Only ::ffff:0:0/96 is mapped.
    expect(addressKey('::fffe:c000:207')).toBe('0:0:0:0::/64');
  });

  it('leaves text that is not an address alone', () => {
    for (const text of ['', 'localhost', '1::2::3', '1:2:3:4:5:6:7:8:9', '12345::', '1.2.3.4::', '::1.2.3.256', ':1:2:3:4:5:6:7']) {
      expect(addressKey(text)).toBe(text);
    }
  });
});

describe('failed-authentication limiter with address keys', () => {
  it('blocks a client that rotates addresses within its IPv6 /64', () => {
    const limiter = new AuthFailureLimiter(new ManualClock(), 3);
    for (let i = 1; i <= 3; i++) limiter.recordFailure(addressKey(`2001:db8:0:7::${i.toString(16)}`));
    expect(limiter.blockedForS(addressKey('2001:db8:0:7:dead:beef:0:1'))).toBeGreaterThan(0);
    expect(limiter.blockedForS(addressKey('2001:db8:0:8::1'))).toBe(0);
  });

  it('blocks a client that rotates /64s within its /48 once the /48 has used its allowance, and no other /48', () => {
    const limiter = new AuthFailureLimiter(new ManualClock(), 3);
    expect(siteKey(addressKey('2001:db8:7:1::1'))).toBe('2001:db8:7::/48');
    expect(siteKey('192.0.2.7')).toBeNull();
    // Two failures from each fresh /64: none of them is blocked on its own.
    const failures = 3 * SITE_FACTOR;
    for (let net = 1; net <= failures / 2; net++) {
      const key = addressKey(`2001:db8:7:${net.toString(16)}::1`);
      expect(limiter.blockedForS(key)).toBe(0);
      limiter.recordFailure(key);
      limiter.recordFailure(key);
    }
    expect(limiter.blockedForS(addressKey('2001:db8:7:ffff::9'))).toBeGreaterThan(0);
    expect(limiter.blockedForS(addressKey('2001:db8:8:1::1'))).toBe(0);
  });

  it('when full, forgets a less used bucket rather than a blocked one', () => {
    const clock = new ManualClock();
    const limiter = new AuthFailureLimiter(clock, 3, 3);
    for (let i = 0; i < 3; i++) limiter.recordFailure('198.51.100.1'); // blocked
    limiter.recordFailure('198.51.100.2');
    limiter.recordFailure('198.51.100.3');
    // A flood of fresh addresses: each one pushes out another fresh one, never the blocked address.
    for (let i = 10; i < 50; i++) limiter.recordFailure(`198.51.100.${i}`);
    expect(limiter.blockedForS('198.51.100.1')).toBeGreaterThan(0);
  });
});
