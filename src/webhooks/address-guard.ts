/**
 * Where deliveries may go. A customer chooses the URL, so without a guard a
 * webhook is a way to make the server send requests into the operator's own
 * network (SSRF). Unless WEBHOOKS_ALLOW_PRIVATE is set, an address is
 * refused when it is loopback, private, link-local, shared (CGNAT),
 * multicast, reserved or unspecified. The check is made on the address the
 * connection actually uses (see `guardedLookup`), after DNS, so a name that
 * resolves to 127.0.0.1 — or changes to it later — is refused too.
 *
 * An IPv6 address that carries an IPv4 address inside it reaches that IPv4
 * address (through the host's own stack, a 6to4 relay or a NAT64
 * translator), so it is judged as that IPv4 address: IPv4-compatible
 * (`::a.b.c.d`), IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated
 * (`::ffff:0:a.b.c.d`), 6to4 (`2002:AABB:CCDD::/48`), NAT64 (`64:ff9b::/96`
 * and the local-use `64:ff9b:1::/48`), Teredo (`2001::/32`, server and
 * client) and ISATAP (`…:0:5efe:a.b.c.d`, `…:200:5efe:a.b.c.d`). A host name
 * is judged without its trailing dots (`localhost.` is `localhost`).
 */
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';

const FORBIDDEN_V4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  FORBIDDEN_V4.addSubnet(net, prefix, 'ipv4');
}

/** IPv6 ranges refused in themselves; an address outside them is still refused for the IPv4 address it carries (`embeddedV4`). */
const FORBIDDEN_V6 = new BlockList();
for (const [net, prefix] of [
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  FORBIDDEN_V6.addSubnet(net, prefix, 'ipv6');
}

/**
 * The eight 16-bit groups of a valid IPv6 address, whatever its spelling
 * (`::`, leading zeros, an embedded dotted quad, upper case, a zone).
 */
function ipv6Groups(address: string): number[] {
  // The URL parser writes the address the canonical way (RFC 5952: embedded IPv4 as hex, one `::`).
  const canonical = new URL(`http://[${address.split('%')[0]}]/`).hostname.slice(1, -1);
  const [head, tail] = canonical.split('::') as [string, string | undefined];
  const part = (text: string | undefined): number[] => (text === undefined || text === '' ? [] : text.split(':').map((g) => parseInt(g, 16)));
  if (tail === undefined) return part(head);
  const [before, after] = [part(head), part(tail)];
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
}

/** The IPv6 prefixes and markers that carry an IPv4 address, as 16-bit groups. */
const ALL_ONES = 0xffff; // not a limit: a group of all ones (IPv4-mapped, IPv4-translated, Teredo's inverted client)
const SIX_TO_FOUR = 0x2002; // not a limit: the 6to4 prefix, 2002::/16
const NAT64 = [0x64, 0xff9b]; // not a limit: NAT64, 64:ff9b::/96 and 64:ff9b:1::/48
const TEREDO = 0x2001; // not a limit: the Teredo prefix, 2001::/32
const ISATAP = [0x200, 0x5efe]; // not a limit: ISATAP interface ids, 0:5efe or 200:5efe then the IPv4 address

function dotted(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * The IPv4 addresses an IPv6 address carries (none for most). Where the
 * position depends on the translator's prefix length (the local-use NAT64
 * range), every position RFC 6052 allows within it is returned.
 */
export function embeddedV4(address: string): string[] {
  const g = ipv6Groups(address);
  const zeros = (from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0);
  const last32 = [dotted(g[6]!, g[7]!)];
  if (zeros(0, 6)) return last32; // IPv4-compatible, and :: and ::1 as 0.0.0.0 and 0.0.0.1
  if (zeros(0, 5) && g[5] === ALL_ONES) return last32; // IPv4-mapped
  if (zeros(0, 4) && g[4] === ALL_ONES && g[5] === 0) return last32; // IPv4-translated
  if (g[0] === SIX_TO_FOUR) return [dotted(g[1]!, g[2]!)];
  if (g[0] === NAT64[0] && g[1] === NAT64[1] && zeros(2, 6)) return last32; // NAT64, well-known prefix
  if (g[0] === NAT64[0] && g[1] === NAT64[1] && g[2] === 1) return nat64LocalUse(g); // NAT64, local-use prefix
  if (g[0] === TEREDO && g[1] === 0) return [dotted(g[2]!, g[3]!), dotted(g[6]! ^ ALL_ONES, g[7]! ^ ALL_ONES)]; // server, client
  if ((g[4] === 0 || g[4] === ISATAP[0]) && g[5] === ISATAP[1]) return last32;
  return [];
}

/** The IPv4 address at each place RFC 6052 puts it under a prefix of 48, 56, 64 or 96 bits (bits 64–71 are always skipped). */
function nat64LocalUse(g: number[]): string[] {
  const bytes = g.flatMap((x) => [x >> 8, x & 0xff]);
  const at = (indexes: number[]): string => indexes.map((i) => bytes[i]).join('.');
  return [at([6, 7, 9, 10]), at([7, 9, 10, 11]), at([9, 10, 11, 12]), at([12, 13, 14, 15])];
}

/** True when a delivery must not go to this IP address (a literal, v4 or v6). */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address.split('%')[0]!);
  if (family === 0) return true;
  if (family === 4) return FORBIDDEN_V4.check(address, 'ipv4');
  const bare = address.split('%')[0]!;
  return FORBIDDEN_V6.check(bare, 'ipv6') || embeddedV4(bare).some((v4) => FORBIDDEN_V4.check(v4, 'ipv4'));
}

/**
 * A URL's host as the guard judges it: without IPv6 brackets and without
 * trailing dots (a fully qualified `localhost.` is `localhost`).
 */
export function guardedHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
}

/**
 * True when a URL's host is refused before any look-up: an IP literal that
 * is forbidden, or a `localhost` name (which resolvers answer locally).
 * Names that need DNS are judged by `guardedLookup` on what they resolve to.
 */
export function isForbiddenHost(hostname: string): boolean {
  const host = guardedHost(hostname);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && isForbiddenAddress(host);
}

export class ForbiddenAddressError extends Error {
  readonly code = 'FORBIDDEN_ADDRESS';
  constructor(readonly address: string) {
    super(`the endpoint resolves to ${address}, a loopback, private or link-local address; set WEBHOOKS_ALLOW_PRIVATE=true to allow it`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request: resolves as usual and fails the connection
 * when any resolved address is forbidden (all of them are checked, so a
 * name cannot hide a private address behind a public one).
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, '');
      const list = addresses as LookupAddress[];
      if (!allowPrivate) {
        const bad = list.find((a) => isForbiddenAddress(a.address));
        if (bad !== undefined) return callback(new ForbiddenAddressError(bad.address) as unknown as NodeJS.ErrnoException, '');
      }
      if (options.all === true) return callback(null, list);
      const first = list[0];
      if (first === undefined) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}
