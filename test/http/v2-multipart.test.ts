/**
 * API v2's multipart/form-data reader refuses, with its sentence, what a
 * general-purpose reader would skip or alter without a word: a part with no
 * form-data Content-Disposition, a part with no name, a file, and a value
 * that is not UTF-8. Nothing is charged for any of them.
 */
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/server.js';

const BOUNDARY = 'coa-boundary-7f3a';

function part(headers: string, value: string | Buffer): Buffer {
  return Buffer.concat([Buffer.from(`--${BOUNDARY}\r\n${headers}\r\n\r\n`), Buffer.from(value), Buffer.from('\r\n')]);
}

const field = (name: string, value: string | Buffer) => part(`Content-Disposition: form-data; name="${name}"`, value);

describe('API v2 multipart bodies', () => {
  const t = useServer({ services: { main: { rate: '0.1' } }, accounts: { alice: '10' } });

  async function post(key: string, ...parts: Buffer[]): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${t.url}/api/v2`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      body: Buffer.concat([field('key', key), ...parts, Buffer.from(`--${BOUNDARY}--\r\n`)]),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function balance(key: string): Promise<unknown> {
    return (await post(key, field('action', 'balance'))).body['balance'];
  }

  it('places an order from plain fields, and refuses every part it cannot read as a named text field', async () => {
    const key = await t.issueV2Key(t.accounts.alice.id);
    const add = (...extra: Buffer[]) => post(key, field('action', 'add'), field('service', String(t.services.main)), field('link', 'https://x.test/m'), field('quantity', '10'), ...extra);
    expect((await add()).body).toEqual({ order: expect.any(Number) });
    expect(await balance(key)).toBe('9');
    const refused: [Buffer, string][] = [
      [part('Content-Type: text/plain', 'no disposition'), 'Every multipart part needs Content-Disposition: form-data with a name.'],
      [part('Content-Disposition: attachment; name="runs"', '5'), 'Every multipart part needs Content-Disposition: form-data with a name.'],
      [part('Content-Disposition: form-data', 'nameless'), 'Every multipart part needs Content-Disposition: form-data with a name.'],
      [part('Content-Disposition: form-data; name="comments"; filename="c.txt"', 'a\nb'), 'File uploads are not accepted; send the fields as text.'],
      [field('comments', Buffer.from([0x61, 0xff, 0x62])), 'The request body is not valid UTF-8.'],
    ];
    for (const [extra, sentence] of refused) {
      expect(await add(extra)).toEqual({ status: 200, body: { error: sentence } });
    }
    expect(await balance(key)).toBe('9');
  });
});
