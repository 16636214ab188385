/**
 * Many requests fast: raw keep-alive connections, each sending its next
 * request as soon as the previous answer is read (fetch's per-request
 * overhead made a test of 52,000 orders take minutes on a busy machine).
 * `window` > 1 pipelines, which this server does not allow for bodies: uWS
 * closes a connection that sends a POST before its previous POST's answer.
 */
import { connect } from 'node:net';

const HEAD_END = Buffer.from('\r\n\r\n');

/** Sends every request and returns the status codes, in request order. */
export async function keepAlive(port: number, requests: readonly string[], connections = 32, window = 1): Promise<number[]> {
  const statuses: number[] = new Array(requests.length);
  const share = Math.ceil(requests.length / connections);
  const lanes = Array.from({ length: connections }, (_, lane) => lane * share).filter((from) => from < requests.length);
  await Promise.all(lanes.map((from) => lane(port, requests, from, Math.min(requests.length, from + share), window, statuses)));
  return statuses;
}

function lane(port: number, requests: readonly string[], from: number, to: number, window: number, statuses: number[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let sent = from;
    let answered = from;
    let buffered: Buffer = Buffer.alloc(0);
    const send = (): void => {
      const until = Math.min(to, answered + window);
      if (sent >= until) return;
      socket.write(requests.slice(sent, until).join(''), 'latin1');
      sent = until;
    };
    socket.on('connect', send);
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf(HEAD_END);
        if (end < 0) break;
        const head = buffered.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) break;
        statuses[answered++] = Number(head.slice(9, 12));
        buffered = buffered.subarray(end + 4 + length);
      }
      if (answered === to) {
        socket.destroy();
        resolve();
      } else {
        send();
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      if (answered < to) reject(new Error(`connection closed after ${answered - from} of ${to - from} answers`));
    });
  });
}
