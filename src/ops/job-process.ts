/**
 * The operator-job child process (see job-client.ts): receives one job,
 * runs it on the data directory opened read-only, sends the result and
 * exits. Synchronous work is fine here: nobody else runs on this loop.
 */
import { readFileSync } from 'node:fs';
import { BYTES_PER_KIB } from '../platform/index.js';
import { replayLedger } from '../ledger/index.js';
import { lastLogSeq, openStore, storeLedgerSource } from '../wal/index.js';
import { withProgress } from './verify.js';
import type { FromChild, JobMemory, JobRequest, ToChild } from './job-client.js';
import { takeSnapshot } from './snapshot.js';

/** Reports progress without waiting: the replay runs synchronously, and the message goes out as the channel takes it. */
function reportProgress(events: number, total: number): void {
  process.send!({ type: 'progress', events, total } satisfies FromChild);
}

function send(message: FromChild): Promise<void> {
  return new Promise((resolve, reject) => process.send!(message, undefined, {}, (error) => (error === null ? resolve() : reject(error))));
}

/** /proc/self/status figures in bytes; zeros where /proc is not there. */
function memory(): JobMemory {
  let text = '';
  try {
    text = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return { peakRssBytes: 0, rssAnonBytes: 0, rssFileBytes: 0 };
  }
  const kib = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * BYTES_PER_KIB;
  return { peakRssBytes: kib('VmHWM'), rssAnonBytes: kib('RssAnon'), rssFileBytes: kib('RssFile') };
}

let resume: (() => void) | null = null;

async function pauseIfAsked(pause: boolean): Promise<void> {
  if (!pause) return;
  const resumed = new Promise<void>((resolve) => (resume = resolve));
  await send({ type: 'paused' });
  await resumed;
}

async function run(request: JobRequest, pause: boolean): Promise<FromChild> {
  const store = openStore(request.dir, { readOnly: true });
  try {
    if (request.job === 'verify') {
      const txn = store.root.useReadTransaction();
      try {
        const total = lastLogSeq(store.log, txn);
        reportProgress(0, total);
        await pauseIfAsked(pause);
        const report = replayLedger(withProgress(storeLedgerSource(store, txn), total, reportProgress));
        return { type: 'done', result: { job: 'verify', report, memory: memory() } };
      } finally {
        txn.done();
      }
    }
    await pauseIfAsked(pause);
    const snapshot = await takeSnapshot(store, request.out, request.pace, reportProgress);
    return { type: 'done', result: { job: 'snapshot', snapshot, memory: memory() } };
  } finally {
    await store.close();
  }
}

process.on('message', (raw) => {
  const message = raw as ToChild;
  if (message.type === 'resume') {
    resume?.();
    return;
  }
  run(message.request, message.pause)
    .catch((error: unknown): FromChild => ({ type: 'failed', message: error instanceof Error ? error.message : String(error) }))
    .then(send)
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
});
// The server going away (its IPC channel closing) ends the job too.
process.on('disconnect', () => process.exit(1));
