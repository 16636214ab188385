/**
 * A fault in the dispatcher's own work is not swallowed: an attempt whose
 * settling breaks an invariant reaches `onError` as an `InvariantError`,
 * which the server turns into a stop (src/app/parts.ts), like a failed
 * commit. A receiver's failure is an outcome, never such a fault.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { InvariantError, ManualClock } from '../../src/platform/index.js';
import { Dispatcher, type DispatcherOptions } from '../../src/webhooks/dispatcher.js';
import { WebhookDirectory } from '../../src/webhooks/directory.js';
import type { AttemptResult, Poster } from '../../src/webhooks/index.js';
import { placed, tempLogs } from '../helpers/webhook-log.js';
import { waitFor } from '../helpers/wait-for.js';

const { open, cleanup } = tempLogs('credit-order-api-dispatcher-faults');
afterEach(cleanup);

async function dispatcherAnswering(answer: AttemptResult): Promise<{ errors: { error: unknown; what: string }[]; posts: () => number; stop: () => Promise<void> }> {
  const { store, wal } = open();
  const clock = new ManualClock();
  const directory = new WebhookDirectory(store, wal, clock, randomBytes(32), 10);
  const { endpoint } = await directory.create(1, 'https://receiver.test/hook', ['order.updated'], true);
  let posts = 0;
  const poster: Poster = {
    post: () => {
      posts++;
      return Promise.resolve(answer);
    },
  };
  const errors: { error: unknown; what: string }[] = [];
  const options: DispatcherOptions = {
    concurrency: 4,
    busyShare: 0,
    busyMinPerSecond: 10,
    perEndpointMax: 2,
    retryMs: 3_600_000,
    logKeep: 10,
    random: () => 0,
    onError: (error, what) => errors.push({ error, what }),
    pageSize: 10,
    windowMax: 10,
    heldMax: 10,
    yieldWhenBusy: false,
  };
  const dispatcher = new Dispatcher(store, wal, clock, directory, poster, options);
  await wal.append({ events: [placed('o1', [endpoint.id])], puts: [] });
  dispatcher.written(1);
  dispatcher.start(10);
  return { errors, posts: () => posts, stop: () => dispatcher.stop() };
}

describe('faults in the dispatcher', () => {
  it('hands a broken invariant while settling an attempt to onError, as an InvariantError', async () => {
    const d = await dispatcherAnswering({ outcome: 'unheard-of' as AttemptResult['outcome'], status: 204, error: null });
    await waitFor('the fault to reach onError', () => d.errors.length > 0);
    expect(d.errors[0]!.error).toBeInstanceOf(InvariantError);
    expect(String((d.errors[0]!.error as Error).message)).toContain('a delivery attempt ends in one of the known outcomes');
    await d.stop();
  });

  it('reports nothing when the receiver fails: that is an outcome, retried later', async () => {
    const d = await dispatcherAnswering({ outcome: 'failed', status: 500, error: 'the receiver answered 500' });
    await waitFor('the attempt', () => d.posts() > 0);
    await d.stop();
    expect(d.errors).toEqual([]);
  });
});
