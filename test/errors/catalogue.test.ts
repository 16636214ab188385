import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ERRORS, errorOutcome, renderError, type ErrorCode } from '../../src/errors/catalogue.js';
import { formatMicro } from '../../src/money/index.js';

const codes = Object.keys(ERRORS) as ErrorCode[];

describe('ERRORS catalogue', () => {
  it.each(codes)('%s has an HTTP error status and a one-line meaning', (code) => {
    const { status, meaning } = ERRORS[code];
    expect(Number.isInteger(status)).toBe(true);
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThanOrEqual(599);
    expect(typeof meaning).toBe('string');
    expect(meaning.trim().length).toBeGreaterThan(5);
    expect(meaning).not.toContain('\n');
    expect(code).toMatch(/^[A-Z_]+$/);
  });

  it('holds the statuses the HTTP contract promises (DESIGN.md §3)', () => {
    const contract: Partial<Record<ErrorCode, number>> = {
      AUTH: 401,
      BANNED: 403,
      RATE: 429,
      BALANCE: 402,
      SERVICE: 422,
      QTY: 422,
      FORCEJOIN: 403,
      VALIDATION: 400,
      NOT_FOUND: 404,
      IDEMPOTENCY: 422,
      INTERNAL: 500,
      UNAVAILABLE: 503,
    };
    for (const [code, status] of Object.entries(contract)) {
      expect(ERRORS, code).toHaveProperty(code);
      expect(ERRORS[code as ErrorCode].status, code).toBe(status);
    }
  });

  it('server faults are 5xx and client errors are 4xx', () => {
    for (const code of codes) {
      const server = code === 'INTERNAL' || code === 'UNAVAILABLE';
      expect(ERRORS[code].status >= 500, code).toBe(server);
    }
  });
});

describe('errorOutcome', () => {
  it('takes the status from the catalogue by default', () => {
    for (const code of codes) {
      expect(errorOutcome(code, 'Something.')).toEqual({ code, status: ERRORS[code].status, message: 'Something.' });
    }
  });

  it('keeps extra fields and allows the documented alternative statuses', () => {
    expect(errorOutcome('QTY', 'Quantity must be between 10 and 100.', { min: 10, max: 100 })).toEqual({
      code: 'QTY',
      status: 422,
      message: 'Quantity must be between 10 and 100.',
      extra: { min: 10, max: 100 },
    });
    expect(errorOutcome('VALIDATION', 'Body too large.', undefined, 413).status).toBe(413);
    expect(errorOutcome('VALIDATION', 'Use application/json.', undefined, 415).status).toBe(415);
    expect(errorOutcome('IDEMPOTENCY', 'In flight.', undefined, 409).status).toBe(409);
  });
});

describe('renderError', () => {
  it('renders the contract shape: ok:false, error, message, request_id', () => {
    const body = renderError(errorOutcome('AUTH', 'API key or secret missing or invalid.'), 'req-123');
    expect(JSON.parse(body)).toEqual({ ok: false, error: 'AUTH', message: 'API key or secret missing or invalid.', request_id: 'req-123' });
    expect(body.startsWith('{"ok":false,"error":"AUTH",')).toBe(true);
  });

  it('adds extra fields that help the client (retry_after on RATE, min/max on QTY)', () => {
    const rate = JSON.parse(renderError(errorOutcome('RATE', 'Slow down.', { retry_after: 7 }), 'r1'));
    expect(rate).toEqual({ ok: false, error: 'RATE', message: 'Slow down.', retry_after: 7, request_id: 'r1' });
    const qty = JSON.parse(renderError(errorOutcome('QTY', 'Out of range.', { min: 10, max: 5000 }), 'r2'));
    expect(qty).toMatchObject({ min: 10, max: 5000 });
    const fj = JSON.parse(renderError(errorOutcome('FORCEJOIN', 'Join first.', { join_link: 'https://t.me/x' }), 'r3'));
    expect(fj.join_link).toBe('https://t.me/x');
  });

  it('emits `raw:` money extras as exact JSON numbers, not strings', () => {
    const body = renderError(errorOutcome('BALANCE', 'Not enough.', { charge: 'raw:0.3', balance: 'raw:0.1' }), 'r');
    expect(body).toContain('"charge":0.3,');
    expect(body).toContain('"balance":0.1,');
    const parsed = JSON.parse(body);
    expect(parsed.charge).toBe(0.3);
    expect(typeof parsed.balance).toBe('number');
    // Exact beyond float precision: the digits are written as given.
    const big = renderError(errorOutcome('BALANCE', 'x', { balance: `raw:${formatMicro(9_007_199_254_740_991)}` }), 'r');
    expect(big).toContain('"balance":9007199254.740991,');
  });

  it('renders any raw money amount as a valid JSON number with exactly its digits (property)', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (micro) => {
        const text = formatMicro(micro);
        const body = renderError(errorOutcome('BALANCE', 'x', { charge: `raw:${text}` }), 'r');
        expect(body).toContain(`"charge":${text},`);
        expect(typeof JSON.parse(body).charge).toBe('number');
      }),
      { numRuns: 300 },
    );
  });

  it('is valid JSON for any message, request id and extra values (property)', () => {
    const extraKey = fc.stringMatching(/^[a-z][a-z_]{0,15}$/).filter((k) => !['ok', 'error', 'message', 'request_id'].includes(k));
    const extraValue = fc.oneof(
      fc.string(),
      fc.string({ unit: 'grapheme' }),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
    ).filter((v) => typeof v !== 'string' || !v.startsWith('raw:'));
    fc.assert(
      fc.property(
        fc.constantFrom(...codes),
        fc.string({ unit: 'grapheme', maxLength: 80 }),
        fc.string({ maxLength: 40 }),
        fc.dictionary(extraKey, extraValue, { maxKeys: 4 }),
        (code, message, requestId, extra) => {
          const outcome = Object.keys(extra).length === 0 ? errorOutcome(code, message) : errorOutcome(code, message, extra);
          const body = renderError(outcome, requestId);
          const parsed = JSON.parse(body) as Record<string, unknown>;
          // Compared through JSON so that -0 (which JSON cannot carry) reads back as 0.
          expect(parsed).toEqual(JSON.parse(JSON.stringify({ ok: false, error: code, message, ...extra, request_id: requestId })));
          expect(Object.keys(parsed)[0]).toBe('ok');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('escapes hostile text in the message and the request id', () => {
    const message = 'He said "stop"\\ now\n</script>\u0000\u2028';
    const body = renderError(errorOutcome('VALIDATION', message), 'id"},"ok":true,"x":"');
    const parsed = JSON.parse(body);
    expect(parsed.ok).toBe(false);
    expect(parsed.message).toBe(message);
    expect(parsed.request_id).toBe('id"},"ok":true,"x":"');
    expect(Object.keys(parsed)).toEqual(['ok', 'error', 'message', 'request_id']);
  });
});
