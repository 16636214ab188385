/**
 * The key every per-address limit counts under. An IPv4 client has one
 * address, but an IPv6 client is normally given a whole /64 and can pick a
 * fresh address from it for every request: keyed by the full address, it
 * would get a fresh allowance each time and could flood the limiter's table.
 * So an IPv6 address counts as its /64, and an IPv4-mapped IPv6 address
 * (`::ffff:a.b.c.d`, how a dual-stack socket reports an IPv4 client) as the
 * IPv4 address it stands for.
 */
import { isIPv6 } from 'node:net';
import type { HttpResponse } from '../transport/uws.js';

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
  const bare = address.split('%')[0]!;
  if (!isIPv6(bare)) return address;
  const groups = ipv6Groups(bare);
  if (groups.slice(0, 5).every((g) => g === '0') && groups[5] === 'ffff') {
    const [high, low] = [parseInt(groups[6]!, 16), parseInt(groups[7]!, 16)];
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/**
 * The eight groups of a valid IPv6 address, lower-case hex without leading
 * zeros. The URL parser writes it the canonical way (RFC 5952: embedded IPv4
 * as hex, the longest run of zero groups as `::`), so only that `::` is left
 * to expand.
 */
function ipv6Groups(address: string): string[] {
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head, tail] = canonical.split('::') as [string, string | undefined];
  const part = (text: string | undefined): string[] => (text === undefined || text === '' ? [] : text.split(':'));
  if (tail === undefined) return part(head);
  const [before, after] = [part(head), part(tail)];
  return [...before, ...new Array<string>(8 - before.length - after.length).fill('0'), ...after];
}

/** The /48 an IPv6 address key (`a:b:c:d::/64`, from addressKey) lies in, as `a:b:c::/48`; null for any other key. */
export function siteKey(key: string): string | null {
  if (!key.endsWith('::/64')) return null;
  return `${key.split(':', 3).join(':')}::/48`;
}
