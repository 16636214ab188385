/**
 * Delivery attempts on a real store and endpoint directory, with an
 * injected clock and a poster that answers as told: what is sent and when,
 * the delivery log, the backoff, and when an endpoint is marked failing.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { LogEvent } from '../../src/ledger/index.js';
import type { WalEntry } from '../../src/wal/index.js';
import { Attempts, type AttemptSettings, type Outcome } from '../../src/webhooks/attempts.js';
import { WebhookDirectory } from '../../src/webhooks/directory.js';
import type { AttemptResult, OutboxMessage, Poster, WebhookEndpoint } from '../../src/webhooks/index.js';
import { HeldWal } from '../helpers/held-wal.js';
import { tempLogs } from '../helpers/webhook-log.js';

const { open, cleanup } = tempLogs('credit-order-api-attempts');
afterEach(cleanup);

const settings: AttemptSettings = { perEndpointMax: 2, retryMs: 3 * 3_600_000, logKeep: 2, random: () => 0, onError: () => {} };
const ok: AttemptResult = { outcome: 'delivered', status: 204, error: null };
const refused: AttemptResult = { outcome: 'failed', status: 500, error: 'the receiver answered 500' };

/** Answers every post with `answer` (or leaves it pending until `settle`), and remembers what was posted. */
class TestPoster implements Poster {
  readonly posts: { url: string; headers: Record<string, string>; body: string }[] = [];
  answer: AttemptResult | 'pending' = ok;
  private readonly pending: ((result: AttemptResult) => void)[] = [];

  post(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    this.posts.push({ url, headers, body });
    const answer = this.answer;
    return answer === 'pending' ? new Promise((resolve) => this.pending.push(resolve)) : Promise.resolve(answer);
  }

  settle(result: AttemptResult): void {
    for (const resolve of this.pending.splice(0)) resolve(result);
  }
}

function message(subject: string): OutboxMessage {
  return { id: `msg_${subject.padEnd(32, '0')}`, type: 'order.updated', atMs: 1_000, subject, data: `{"order":"${subject}"}` };
}

async function setUp(options: { settings?: Partial<AttemptSettings>; wal?: (wal: ReturnType<typeof open>['wal']) => HeldWal } = {}) {
  const { store, wal: lmdb } = open();
  const wal = options.wal?.(lmdb) ?? lmdb;
  const clock = new ManualClock();
  const key = randomBytes(32);
  const directory = new WebhookDirectory(store, wal, clock, key, 10);
  const { endpoint } = await directory.create(1, 'https://receiver.test/hook', ['order.updated'], true);
  const poster = new TestPoster();
  const tracked: Promise<unknown>[] = [];
  const attempts = new Attempts(store, wal, clock, directory, poster, { ...settings, ...options.settings }, (work) => tracked.push(work));
  return { store, wal, clock, directory, endpoint, poster, attempts, tracked };
}

const entry = (): WalEntry => ({ events: [], puts: [], removes: [] });

describe('delivery attempts', () => {
  it('posts the signed body to the endpoint; a retry keeps the webhook-id and counts the attempt', async () => {
    const { endpoint, poster, attempts } = await setUp();
    const state = attempts.load(endpoint.id);
    poster.answer = refused;
    const first = await attempts.send(endpoint, state, 5, message('o1'));
    expect(first).toMatchObject({ endpoint: endpoint.id, seq: 5, attempt: 1, round: 0, result: refused });
    attempts.failed(state, first);
    poster.answer = ok;
    const second = await attempts.send(endpoint, state, 5, message('o1'));
    expect(second).toMatchObject({ attempt: 2, round: 1, result: ok });
    expect(poster.posts.map((p) => p.url)).toEqual([endpoint.url, endpoint.url]);
    expect(poster.posts.map((p) => p.headers['webhook-id'])).toEqual([message('o1').id, message('o1').id]);
    expect(poster.posts[0]!.headers['webhook-signature']).toMatch(/^v1,/);
    expect(JSON.parse(poster.posts[0]!.body)).toEqual({ type: 'order.updated', timestamp: new Date(1_000).toISOString(), data: { order: 'o1' } });
  });

  it('posts nothing about a change until it is on disk', async () => {
    const { endpoint, poster, attempts, wal } = await setUp({ wal: (lmdb) => new HeldWal(lmdb) });
    const held = wal as HeldWal;
    held.holding = true;
    const change = held.append({ events: [], puts: [{ table: 'meta', key: 'x', value: 1 }] });
    for (let i = 0; i < 100 && held.heldCount === 0; i++) await held.flushed();
    const sent = attempts.send(endpoint, attempts.load(endpoint.id), 1, message('o1'));
    await held.flushed();
    expect(poster.posts).toHaveLength(0);
    held.release();
    await change;
    expect((await sent).result).toEqual(ok);
    expect(poster.posts).toHaveLength(1);
  });

  it('allows perEndpointMax attempts in flight per endpoint', async () => {
    const { endpoint, poster, attempts } = await setUp();
    const state = attempts.load(endpoint.id);
    poster.answer = 'pending';
    const sent = [attempts.send(endpoint, state, 1, message('o1')), attempts.send(endpoint, state, 2, message('o2'))];
    expect(attempts.hasRoom(state)).toBe(false);
    expect([...state.inFlight]).toEqual([
      [1, 'o1'],
      [2, 'o2'],
    ]);
    poster.settle(ok);
    await Promise.all(sent);
    // The dispatcher frees the slots once the results are durable.
    state.inFlight.clear();
    expect(attempts.hasRoom(state)).toBe(true);
  });

  it('records every attempt in the endpoint’s delivery log, keeping the last logKeep; a restart numbers on', async () => {
    const { endpoint, poster, attempts, wal, clock } = await setUp();
    const state = attempts.load(endpoint.id);
    for (const answer of [refused, refused, ok]) {
      poster.answer = answer;
      const outcome = await attempts.send(endpoint, state, 1, message('o1'));
      clock.advance(1_000);
      const commit = entry();
      attempts.record(state, outcome, commit);
      await wal.append(commit);
      if (answer === refused) attempts.failed(state, outcome);
    }
    const log = attempts.log(endpoint.id, 10);
    expect(log.map((row) => [row.attempt, row.outcome, row.status])).toEqual([
      [3, 'delivered', 204],
      [2, 'failed', 500],
    ]);
    expect(log[0]).toMatchObject({ message: message('o1').id, type: 'order.updated', subject: 'o1', atMs: clock.wallMs(), error: null });
    expect(attempts.load(endpoint.id).nextLogSeq).toBe(4);
  });

  it('backs off: attempts that fail together are one step, the next step doubles, a delivery resets it', async () => {
    const { endpoint, poster, attempts, clock } = await setUp();
    const state = attempts.load(endpoint.id);
    poster.answer = refused;
    const together = await Promise.all([attempts.send(endpoint, state, 1, message('o1')), attempts.send(endpoint, state, 2, message('o2'))]);
    for (const outcome of together) attempts.failed(state, outcome);
    // One step: random 0 waits half of 1 s.
    expect(state.failures).toBe(1);
    expect(attempts.backingOff(state, clock.wallMs() + 499)).toBe(true);
    expect(attempts.backingOff(state, clock.wallMs() + 500)).toBe(false);
    clock.advance(500);
    attempts.failed(state, await attempts.send(endpoint, state, 1, message('o1')));
    expect(state.failures).toBe(2);
    expect(state.nextAttemptAtMs).toBe(clock.wallMs() + 1_000);
    poster.answer = ok;
    attempts.delivered(state, (await attempts.send(endpoint, state, 1, message('o1'))).message);
    expect(state).toMatchObject({ failures: 0, nextAttemptAtMs: 0 });
    expect(state.tries.has(message('o1').id)).toBe(false);
  });

  it('says the endpoint is failing once a message has failed for retryMs from its own first failure; a wake gives it the whole window again', async () => {
    const { endpoint, poster, attempts, clock } = await setUp();
    const state = attempts.load(endpoint.id);
    poster.answer = refused;
    const fail = async (subject: string): Promise<string | null> => attempts.failed(state, await attempts.send(endpoint, state, 1, message(subject)));
    expect(await fail('o1')).toBeNull();
    clock.advance(2 * 3_600_000);
    // Another message's first failure starts its own window.
    expect(await fail('o2')).toBeNull();
    clock.advance(3_600_000);
    expect(await fail('o1')).toBe(`message ${message('o1').id} has failed for 3 hours (last: the receiver answered 500)`);
    attempts.wake(state);
    expect(await fail('o1')).toBeNull();
    clock.advance(3 * 3_600_000 - 1);
    expect(await fail('o1')).toBeNull();
  });

  it('an endpoint whose secret this server cannot open: a failed attempt that says to rotate it, and nothing posted', async () => {
    const { store, wal, clock, endpoint, poster } = await setUp();
    const otherKey = new WebhookDirectory(store, wal, clock, randomBytes(32), 10);
    const attempts = new Attempts(store, wal, clock, otherKey, poster, settings, () => {});
    const outcome = await attempts.send(otherKey.get(endpoint.id)!, attempts.load(endpoint.id), 1, message('o1'));
    expect(outcome.result).toMatchObject({ outcome: 'failed', status: null, error: expect.stringMatching(/^the endpoint's secret cannot be opened with this server's sealing key .*; rotate its secret/) });
    expect(poster.posts).toHaveLength(0);
  });

  it('a poster that throws is a failed attempt', async () => {
    const { endpoint, attempts, directory, store, wal, clock } = await setUp();
    const broken: Poster = { post: () => Promise.reject(new Error('socket hang up')) };
    const withBroken = new Attempts(store, wal, clock, directory, broken, settings, () => {});
    const outcome: Outcome = await withBroken.send(endpoint, attempts.load(endpoint.id), 1, message('o1'));
    expect(outcome).toMatchObject({ result: { outcome: 'failed', status: null, error: 'Error: socket hang up' }, durationMs: 0 });
  });

  it('marks an endpoint failing once however often asked, and never a deleted one', async () => {
    const { endpoint, attempts, directory, store, tracked } = await setUp();
    attempts.markFailing(endpoint.id, 'first reason');
    attempts.markFailing(endpoint.id, 'second reason');
    await Promise.all(tracked);
    expect(directory.get(endpoint.id)!.failingSinceMs).not.toBeNull();
    attempts.markFailing(endpoint.id, 'once failing, not again');
    const gone: WebhookEndpoint = (await directory.create(1, 'https://receiver.test/gone', ['order.updated'], true)).endpoint;
    await directory.remove(gone);
    attempts.markFailing(gone.id, 'deleted');
    await Promise.all(tracked);
    const marks = [...store.log.getRange()].map(({ value }) => value as LogEvent).filter((e) => e.type === 'webhook.failing');
    expect(marks.map((e) => (e.type === 'webhook.failing' ? [e.webhook, e.reason] : null))).toEqual([[endpoint.id, 'first reason']]);
  });
});
