import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { AbuseLog } from '../../src/http/guards/abuse-log.js';
import { createLogger } from '../../src/platform/log.js';

describe('abuse log: once per key per window, with a count', () => {
  it('logs the first refusal of a window, counts the rest, and reports the count when the next window starts', () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger('info', new Writable({ write: (c, _e, done) => (lines.push(JSON.parse(String(c))), done()) }) as never);
    const clock = new ManualClock();
    const abuse = new AbuseLog(log, clock);
    for (let i = 0; i < 1000; i++) abuse.refused(7, 60);
    abuse.refused(8, 60);
    expect(lines.map((l) => l['account'])).toEqual([7, 8]);
    clock.advance(60_000);
    abuse.refused(7, 60);
    expect(lines).toHaveLength(4);
    expect(lines[2]).toMatchObject({ account: 7, refused: 1000, msg: 'rate limit abuse in the last window' });
    expect(lines[3]).toMatchObject({ account: 7, msg: expect.stringContaining('rate limit exceeded') });
  });
});

describe('failed-authentication limiter per IP', () => {
  it('blocks an IP after its failures, recovers, and forgets it once its bucket is full again', async () => {
    const { AuthFailureLimiter } = await import('../../src/http/guards/auth-failures.js');
    const clock = new ManualClock();
    const limiter = new AuthFailureLimiter(clock, 3);
    expect(limiter.tracking).toBe(false);
    for (let i = 0; i < 3; i++) limiter.recordFailure('10.0.0.1');
    expect(limiter.tracking).toBe(true);
    expect(limiter.blockedForS('10.0.0.1')).toBe(20);
    expect(limiter.blockedForS('10.0.0.2')).toBe(0);
    clock.advance(20_000);
    expect(limiter.blockedForS('10.0.0.1')).toBe(0);
    expect(limiter.tracking).toBe(true);
    clock.advance(40_000);
    expect(limiter.blockedForS('10.0.0.1')).toBe(0);
    expect(limiter.tracking).toBe(false);
  });
});
