/**
 * The event loop's time in a V8 CPU profile, split by what the work is for
 * rather than by function: msgpack encoding and lmdb-js, uWS calls, promise
 * reactions, the access log, JSON, rate limiting, crypto, metrics, timers,
 * Buffers and strings, garbage collection, and the app's own code by part.
 * These are what the order path's CPU changes aim at, so the split says how
 * much each could save at most.
 *
 * Each sample goes to one concern. A library's concern (msgpackr, lmdb-js,
 * pino, prom-client, node's crypto, the token bucket) takes a sample
 * anywhere below its functions, the innermost first, so that msgpack
 * encoding inside an lmdb-js put counts as msgpack and Buffer copies inside
 * lmdb-js count as lmdb-js. The other concerns take only a sample's own
 * function (its self time): the uWS calls are native, and the profiler
 * charges a native call to the JavaScript function that made it, so the
 * self time of src/http/transport's functions is mostly their uWS calls
 * (cork runs the socket write itself).
 */
import { area, readSamples, type CallFrame } from './profile.js';

interface Concern {
  name: string;
  /** Whether the concern takes only a sample's own function, not its callers. */
  selfOnly: boolean;
  test(frame: CallFrame): boolean;
}

const inUrl = (frame: CallFrame, ...parts: string[]): boolean => parts.some((p) => frame.url.includes(p));
const nativeNamed = (frame: CallFrame, names: RegExp): boolean => frame.url === '' && names.test(frame.functionName);

export const CONCERNS: readonly Concern[] = [
  { name: 'garbage collection', selfOnly: true, test: (f) => f.functionName === '(garbage collector)' },
  { name: 'msgpack encoding and decoding (msgpackr, ordered-binary)', selfOnly: false, test: (f) => inUrl(f, '/node_modules/msgpackr/', '/node_modules/ordered-binary/') },
  { name: 'lmdb-js puts, reads and commit bookkeeping', selfOnly: false, test: (f) => inUrl(f, '/node_modules/lmdb/') },
  { name: 'access log (pino)', selfOnly: false, test: (f) => inUrl(f, '/node_modules/pino', 'transport/request-observer.js') },
  { name: 'metrics (prom-client)', selfOnly: false, test: (f) => inUrl(f, '/node_modules/prom-client/') },
  { name: 'crypto (API-key hash, order-id cipher)', selfOnly: false, test: (f) => f.url.startsWith('node:internal/crypto') },
  { name: 'rate limiting (token bucket, rate headers)', selfOnly: false, test: (f) => inUrl(f, 'ledger/token-bucket.js') || f.functionName === 'pushRateHeaders' },
  { name: 'JSON parse and stringify', selfOnly: true, test: (f) => nativeNamed(f, /^(parse|stringify)$/) || f.functionName === 'parseJson' },
  { name: 'uWS calls (status, headers, body, cork and its socket write) and src/http/transport', selfOnly: true, test: (f) => inUrl(f, '/http/transport/') },
  {
    name: 'promise reactions, microtasks, next ticks, async context',
    selfOnly: true,
    test: (f) => /^(runMicrotasks|processTicksAndRejections|runNextTicks|queueMicrotask)$/.test(f.functionName) || f.url === 'node:internal/async_hooks',
  },
  { name: 'timers and immediates', selfOnly: true, test: (f) => inUrl(f, 'node:internal/timers', 'node:timers') },
  {
    name: 'Buffers and strings (node:buffer, V8 string builtins)',
    selfOnly: true,
    test: (f) => inUrl(f, 'node:buffer', 'node:internal/buffer', 'node:internal/encoding') || nativeNamed(f, /Slice$|Write$|^decodeUTF8$|^writeUtf8String$|^createUnsafeArrayBuffer$/),
  },
];

/** The concern of one sample, from its own function up through its callers. */
function concernOf(id: number, byId: Map<number, { callFrame: CallFrame }>, parent: Map<number, number>): string {
  const leaf = byId.get(id)!.callFrame;
  for (const c of CONCERNS) if (c.test(leaf)) return c.name;
  for (let cur = parent.get(id); cur !== undefined; cur = parent.get(cur)) {
    const frame = byId.get(cur)!.callFrame;
    for (const c of CONCERNS) if (!c.selfOnly && c.test(frame)) return c.name;
  }
  const a = area(leaf);
  return a.startsWith('app ') ? `the app's own code, ${a.slice('app '.length)}` : a;
}

/** Busy (not idle) time by concern, percent of busy, largest first. */
export function concernShares(file: string, window: { fromUs: number; toUs: number } | null): { name: string; pct: number }[] {
  const { byId, parent, selfUs } = readSamples(file, window);
  const us = new Map<string, number>();
  let busyUs = 0;
  for (const [id, t] of selfUs) {
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    const name = concernOf(id, byId, parent);
    us.set(name, (us.get(name) ?? 0) + t);
    busyUs += t;
  }
  return [...us.entries()].map(([name, t]) => ({ name, pct: busyUs === 0 ? 0 : (100 * t) / busyUs })).sort((a, b) => b.pct - a.pct);
}

export function formatConcerns(shares: { name: string; pct: number }[]): string {
  return ['The main thread\'s busy time by concern (% of busy):', ...shares.map((s) => `  ${s.pct.toFixed(1).padStart(5)}%  ${s.name}`)].join('\n');
}
