/**
 * Time is injected everywhere: the wallet logic never reads a clock, so
 * tests and replay drive it with any time they choose.
 *
 * `monotonicMs` is for rate limiting (never goes back); `wallMs` is for
 * timestamps and plan windows that users see (Unix milliseconds).
 */
export interface Clock {
  monotonicMs(): number;
  wallMs(): number;
}

export const systemClock: Clock = {
  monotonicMs: () => Math.floor(performance.now()),
  wallMs: () => Date.now(),
};

/** A clock that moves only when a test moves it. */
export class ManualClock implements Clock {
  constructor(
    private mono = 1_000_000, // not a limit: a test clock's arbitrary start, far from zero
    private wall = Date.UTC(2026, 0, 1), // not a limit: a test clock's arbitrary start date
  ) {}
  monotonicMs(): number {
    return this.mono;
  }
  wallMs(): number {
    return this.wall;
  }
  advance(ms: number): void {
    this.mono += ms;
    this.wall += ms;
  }
  setWall(ms: number): void {
    this.wall = ms;
  }
}
