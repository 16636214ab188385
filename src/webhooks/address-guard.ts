/**
 * Where deliveries may go. A customer chooses the URL, so without a guard a
 * webhook is a way to make the server send requests into the operator's own
 * network (SSRF). Unless WEBHOOKS_ALLOW_PRIVATE is set, an address is
 * refused when it is loopback, private, link-local, shared (CGNAT),
 * multicast, reserved or unspecified. The check is made on the address the
 * connection actually uses (see `guardedLookup`), after DNS, so a name that
 * resolves to 127.0.0.1 — or changes to it later — is refused too.
 */
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';

const FORBIDDEN = new BlockList();
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
  FORBIDDEN.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  FORBIDDEN.addSubnet(net, prefix, 'ipv6');
}

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** True when a delivery must not go to this IP address (a literal, v4 or v6). */
export function isForbiddenAddress(address: string): boolean {
  const mapped = MAPPED_V4.exec(address);
  if (mapped !== null) return isForbiddenAddress(mapped[1]!);
  const family = isIP(address);
  if (family === 0) return true;
  return FORBIDDEN.check(address, family === 4 ? 'ipv4' : 'ipv6');
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
