/**
 * Hostile fuzzing of API v2's `add` (real server, real LMDB), the order
 * path resellers' panels drive. Every generated request starts from a valid
 * example of a service's type and carries one change that makes it wrong:
 * a field of another type, a field of no type, a quantity that is not a
 * whole number or disagrees with the order, a malformed link, a list of
 * blank lines, or (in JSON) an array where the dialect has no list. Sent
 * form-encoded, as multipart, as JSON or in the query string, each must get
 * HTTP 200 `{"error": "<sentence>"}` in the dialect's names, and afterwards
 * nothing may have changed: credits, orders and the log length.
 *
 * fast-check runs with a fixed seed, so every run sends the same requests.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foreignField, ORDER_INPUT_FIELDS, LIST_INPUT_FIELDS, type OrderType } from '../../src/ledger/index.js';
import { useServer, type Creds } from '../helpers/server.js';
import { TYPE_EXAMPLES, type ExampleFields } from '../http/order-type-examples.js';

const LINK = 'https://instagram.com/p/abc';
const ODD = ['\u0000', '\u202e', '\ufeff', '\ud800', '\u2028', '😀', 'é', '%', '&', '=', '+', '"', '\\', ' '];

type Encoding = 'form' | 'multipart' | 'json' | 'query';
interface Case {
  type: OrderType;
  fields: Record<string, unknown>;
  encoding: Encoding;
  change: string;
}

const oddText = fc.array(fc.oneof(fc.constantFrom(...ODD), fc.string({ minLength: 1, maxLength: 6 })), { minLength: 1, maxLength: 6 }).map((p) => p.join(''));
const nonEmpty = oddText.filter((v) => v.trim() !== '');

/** One change that makes a valid order of `type` wrong, whatever the type. */
function change(type: OrderType): fc.Arbitrary<{ name: string; apply: (f: Record<string, unknown>) => Record<string, unknown>; jsonOnly?: boolean }> {
  const foreign = fc
    .tuple(fc.constantFrom(...ORDER_INPUT_FIELDS), fc.oneof(nonEmpty, fc.integer({ min: 1, max: 50 })))
    .filter(([field]) => foreignField(type, { [field]: 1 }) !== null)
    .map(([field, value]) => ({ name: `foreign ${field}`, apply: (f: Record<string, unknown>) => ({ ...f, [field]: value }) }));
  const unknown = fc
    .tuple(fc.stringMatching(/^[a-z_]{1,12}$/), nonEmpty)
    .filter(([field]) => !['key', 'action', 'service', 'link', ...ORDER_INPUT_FIELDS].includes(field))
    .map(([field, value]) => ({ name: `unknown ${field}`, apply: (f: Record<string, unknown>) => ({ ...f, [field]: value }) }));
  const notWhole = fc
    .oneof(fc.constantFrom('1.5', '1e3', '0x10', ' 5', '5 ', '+5', '--1', 'ten', '١٠', '99999999999999999'), nonEmpty.filter((v) => !/^-?[0-9]{1,16}$/.test(v)))
    .map((q) => ({ name: `quantity ${JSON.stringify(q)}`, apply: (f: Record<string, unknown>) => ({ ...f, quantity: q }) }));
  // Outside the services' 2..1000 for a type that takes the quantity sent; not the lines (2) nor 1 for one that derives it.
  const sent = 'quantity' in TYPE_EXAMPLES.find((e) => e.type === type)!.fields;
  const wrongCount = fc
    .constantFrom(0, -1, 1001, 1_000_000_000_000, ...(sent ? [] : [3]))
    .map((q) => ({ name: `quantity ${q}`, apply: (f: Record<string, unknown>) => ({ ...f, quantity: q }) }));
  const badLink = fc
    .oneof(fc.constantFrom('instagram.com/p/abc', 'ftp://x.test/a', 'https://x.test/a b', 'https://x.test/\u0000', `https://x.test/${'a'.repeat(2100)}`), oddText.filter((v) => !/^https?:\/\//i.test(v)))
    .map((link) => ({ name: `link ${JSON.stringify(link.slice(0, 40))}`, apply: (f: Record<string, unknown>) => ({ ...f, link }) }));
  const blankList = fc
    .tuple(fc.constantFrom(...LIST_INPUT_FIELDS), fc.constantFrom('\n', ' \n \n', '\r\n\r\n', '\t'))
    .map(([field, blank]) => ({ name: `blank ${field}`, apply: (f: Record<string, unknown>) => ({ ...f, [field]: blank }) }));
  const array = fc
    .constantFrom('link', 'quantity', 'service', 'username', 'hashtag', 'media', 'answer_number')
    .map((field) => ({ name: `array ${field}`, apply: (f: Record<string, unknown>) => ({ ...f, [field]: [f[field] ?? 'x', 'y'] }), jsonOnly: true }));
  return fc.oneof(foreign, unknown, notWhole, wrongCount, badLink, blankList, array);
}

const cases: fc.Arbitrary<Case> = fc.constantFrom(...TYPE_EXAMPLES).chain((example) =>
  fc.tuple(change(example.type as OrderType), fc.constantFrom<Encoding>('form', 'multipart', 'json', 'query')).map(([c, encoding]) => ({
    type: example.type as OrderType,
    fields: c.apply({ link: LINK, ...(example.fields as ExampleFields) }),
    encoding: c.jsonOnly === true ? 'json' : encoding,
    change: c.name,
  })),
);

describe('fuzz: API v2 add refuses every wrong order in the dialect and changes nothing', () => {
  let creds: Creds;
  let key: string;
  const services: Record<string, number> = {};

  const t = useServer({ config: { defaultRateLimitPerMinute: 100_000_000 } }, async (t) => {
    creds = await t.createAccount('v2-fuzz', '1000');
    key = await t.issueV2Key(creds.id);
    for (const { type } of TYPE_EXAMPLES) services[type] = await t.createService({ name: type, rate: '0.1', min: 2, max: 1000, type });
  });

  async function send(c: Case): Promise<{ status: number; text: string }> {
    const fields: Record<string, unknown> = { key, action: 'add', service: services[c.type], ...c.fields };
    const asText = (v: unknown): string => String(v);
    let res: Response;
    if (c.encoding === 'json') {
      res = await fetch(`${t.url}/api/v2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fields) });
    } else if (c.encoding === 'multipart') {
      const data = new FormData();
      for (const [k, v] of Object.entries(fields)) data.append(k, asText(v));
      res = await fetch(`${t.url}/api/v2`, { method: 'POST', body: data });
    } else {
      const encoded = new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, asText(v)])).toString();
      res = c.encoding === 'query' ? await fetch(`${t.url}/api/v2?${encoded}`) : await fetch(`${t.url}/api/v2`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: encoded });
    }
    return { status: res.status, text: await res.text() };
  }

  it('generated wrong orders of every type, in every encoding, get {"error": sentence} and place nothing', async () => {
    const before = { credits: (await t.api('GET', '/api/v1/balance', creds)).body.credits, log: t.server.context.store.nextSeq };
    const problems: string[] = [];
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        sent++;
        const r = await send(c);
        let body: unknown;
        try {
          body = JSON.parse(r.text);
        } catch {
          body = undefined;
        }
        const error = (body as { error?: unknown } | undefined)?.error;
        const ok = r.status === 200 && typeof error === 'string' && error.length > 0 && Object.keys(body as object).length === 1 && !error.includes("'target'");
        if (!ok) problems.push(`${c.type} / ${c.change} / ${c.encoding} → ${r.status} ${r.text.slice(0, 200)}`);
      }),
      { seed: 20261127, numRuns: 400 },
    );
    expect(problems).toEqual([]);
    expect(sent).toBe(400);
    expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(before.credits);
    expect((await t.admin('GET', `/admin/v1/orders?account=${creds.id}`)).body.orders ?? []).toEqual([]);
    expect(t.server.context.store.nextSeq).toBe(before.log);
  });

  it('after the barrage, every example is still placed', async () => {
    for (const example of TYPE_EXAMPLES) {
      const fields = Object.fromEntries(Object.entries(example.fields).map(([k, v]) => [k, String(v)]));
      const r = await t.v2({ key, action: 'add', service: services[example.type]!, link: LINK, ...fields });
      expect({ type: example.type, body: r.body }).toEqual({ type: example.type, body: { order: expect.any(Number) } });
    }
  });
});
