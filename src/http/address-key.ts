/**
 * The key every per-address limit counts under. An IPv4 client has one
 * address, but an IPv6 client is normally given a whole /64 and can pick a
 * fresh address from it for every request: keyed by the full address, it
 * would get a fresh allowance each time and could flood the limiter's table.
 * So an IPv6 address counts as its /64, and an IPv4-mapped IPv6 address
 * (`::ffff:a.b.c.d`, how a dual-stack socket reports an IPv4 client) as the
 * IPv4 address it stands for.
 */
import type { HttpResponse } from './uws.js';

/** The client's key for per-address limits (see addressKey). */
export function remoteAddressKey(res: HttpResponse): string {
  return addressKey(Buffer.from(res.getRemoteAddressAsText()).toString());
}

/**
 * `a.b.c.d` for IPv4 (mapped or not), `xxxx:xxxx:xxxx:xxxx::/64` for IPv6,
 * whatever the spelling (case, `::`, leading zeros, embedded IPv4, zone).
 * Text that is not an address is returned unchanged: it still counts, alone.
 */
export function addressKey(address: string): string {
  if (!address.includes(':')) return address;
  const groups = ipv6Groups(address.split('%')[0]!.toLowerCase());
  if (groups === null) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, or null when it is not one. */
function ipv6Groups(text: string): number[] | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parts = (half: string): string[] => (half === '' ? [] : half.split(':'));
  const head = parts(halves[0]!);
  const tail = halves.length === 2 ? parts(halves[1]!) : [];
  const all = [...head, ...tail];
  // An embedded IPv4 address may end the text (`::ffff:192.0.2.1`): two groups.
  const last = all[all.length - 1];
  const groups: number[] = [];
  for (const part of all.slice(0, -1)) groups.push(hexGroup(part));
  if (last !== undefined && last.includes('.')) {
    // Only at the very end: `1.2.3.4::` is not an address.
    if (halves.length === 2 && tail.length === 0) return null;
    const v4 = ipv4Bytes(last);
    if (v4 === null) return null;
    groups.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
  } else if (last !== undefined) {
    groups.push(hexGroup(last));
  }
  if (groups.some(Number.isNaN)) return null;
  const missing = 8 - groups.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  if (halves.length === 1) return groups;
  const headCount = head.length;
  return [...groups.slice(0, headCount), ...new Array<number>(missing).fill(0), ...groups.slice(headCount)];
}

function hexGroup(part: string): number {
  return /^[0-9a-f]{1,4}$/.test(part) ? parseInt(part, 16) : NaN;
}

function ipv4Bytes(text: string): number[] | null {
  const bytes = text.split('.').map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN));
  return bytes.length === 4 && bytes.every((b) => b <= 255) ? bytes : null;
}
