/**
 * wrk, the load generator written in C, driven from the benchmarks: the Lua
 * script that posts one order per request, cycling through the accounts,
 * and one run of wrk whose `done` hook prints its summary as one JSON line.
 * Used by bench:wrk (wrk.ts) and bench:cpu (cpu.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import type { LatencySummary } from './protocol.js';
import type { SeededAccount } from './seed.js';

/** What the Lua `done` hook prints (latencies in ms, as bench:http reports them). */
export interface WrkSummary {
  durationUs: number;
  requests: number;
  non2xx: number;
  connectErrors: number;
  readErrors: number;
  writeErrors: number;
  timeouts: number;
  latency: LatencySummary;
}

/** The accounts a script posts orders for: a seeded data set, or fakes shaped like them (a server that checks nothing). */
export interface ScriptAccounts {
  serviceId: number;
  count: number;
  account(i: number): Pick<SeededAccount, 'key' | 'secret'>;
}

export interface WrkLoad {
  connections: number;
  threads: number;
}

const SUMMARY_TAG = 'WRK-SUMMARY ';

/** wrk's version line ("wrk 4.1.0"), or null when wrk is not installed. */
export function wrkVersion(): string | null {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined) return null;
  return /wrk \S+/.exec(`${probe.stdout}${probe.stderr}`)?.[0] ?? 'wrk';
}

/** A Lua string literal (the values are ASCII keys, secrets and JSON). */
function lua(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * The wrk script: every request is made once per thread at start-up, one per
 * account; each thread starts at its own offset and cycles through them.
 */
export function wrkScript(accounts: ScriptAccounts, quantity: number): string {
  const rows: string[] = [];
  for (let i = 0; i < accounts.count; i++) {
    const a = accounts.account(i);
    const body = `{"service":${accounts.serviceId},"target":"https://example.com/p/${i}","quantity":${quantity}}`;
    rows.push(`{${lua(a.key)},${lua(a.secret)},${lua(body)}}`);
  }
  return `
local accounts = {
${rows.join(',\n')}
}
local nextThread = 0
function setup(thread)
  thread:set("offset", nextThread)
  nextThread = nextThread + 1
end
local requests = {}
local at = 0
function init(args)
  for i, a in ipairs(accounts) do
    requests[i] = wrk.format("POST", "/api/v1/order", {
      ["Content-Type"] = "application/json", ["X-API-Key"] = a[1], ["X-API-Secret"] = a[2] }, a[3])
  end
  at = (offset * 997) % #requests
end
function request()
  at = at % #requests + 1
  return requests[at]
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('${SUMMARY_TAG}{"durationUs":%d,"requests":%d,"non2xx":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"timeouts":%d,' ..
    '"latency":{"p50":%f,"p90":%f,"p99":%f,"p999":%f,"max":%f,"mean":%f,"count":%d}}\\n',
    summary.duration, summary.requests, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency:percentile(99.9) / 1000,
    latency.max / 1000, latency.mean / 1000, summary.requests))
end
`;
}

/** One run of wrk against `baseUrl` for `durationS` seconds; resolves once wrk has exited (and been reaped). */
export function runWrk(load: WrkLoad, baseUrl: string, script: string, durationS: number): Promise<WrkSummary> {
  return new Promise((resolve, reject) => {
    const args = [`-t${load.threads}`, `-c${load.connections}`, `-d${durationS}s`, '--timeout', '10s', '-s', script, baseUrl];
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith(SUMMARY_TAG));
      if (code !== 0 || line === undefined) return reject(new Error(`wrk exited with ${code}; its output:\n${out}`));
      resolve(JSON.parse(line.slice(SUMMARY_TAG.length)) as WrkSummary);
    });
  });
}
