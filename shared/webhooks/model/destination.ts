/**
 * Where a webhook may go: nowhere in the private network (issue 46, SSRF). The address ranges are
 * ipaddr.js's (a maintained list of the IANA special-purpose registries), not ours: an address
 * passes only when ipaddr.js names its range `unicast`, so loopback, RFC 1918, link-local
 * (169.254.169.254 included), CGNAT, multicast, unspecified, reserved, IPv6 unique-local and
 * link-local, and the IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4, Teredo, and
 * compatible by a rule of ours) are all refused, and a range ipaddr.js learns later is refused until
 * it says otherwise. The same rule runs at registration (a literal address) and on every resolved
 * address at connect time (shared/webhooks/delivery/http-delivery.ts), so DNS rebinding gains
 * nothing.
 */
import ipaddr from 'ipaddr.js';
import { ENDPOINT_LIMITS } from './endpoint.ts';

/**
 * `deployed`: only `https`, only public unicast addresses. `local` (`npm start`): the same, and
 * besides `http` or `https` to loopback, so that a developer receives on the same machine.
 */
export type DestinationMode = 'deployed' | 'local';

/** Why a URL or an address is refused: shown in the 422 and counted in the delivery log. */
export type DestinationRefusal =
  | 'not-a-url'
  | 'scheme'
  | 'credentials'
  | 'fragment'
  | 'too-long'
  | 'forbidden-address'
  | 'forbidden-host';

export class DestinationRefusedError extends Error {
  readonly reason: DestinationRefusal;
  constructor(reason: DestinationRefusal, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * The range ipaddr.js gives an address, IPv4-mapped IPv6 judged as the IPv4 address it carries.
 * One range is ours: IPv4-compatible IPv6 (`::a.b.c.d`, ::/96, RFC 4291 §2.5.5.1, deprecated)
 * carries an IPv4 address too, yet ipaddr.js 2.x has no range for it and calls it `unicast`
 * (`https://[::169.254.169.254]/` passed); `::` and `::1` keep theirs.
 */
export function rangeOf(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return undefined;
  // ipaddr.js reads the dotted tail of `::a.b.c.d` as IPv4-mapped (`::ffff:a.b.c.d`); the URL
  // standard's parser writes any IPv6 text in hex, as it writes an endpoint's host.
  const parsed = ipaddr.parse(address.includes(':') && address.includes('.') ? hexIpv6(address) : address);
  if (
    parsed.kind() === 'ipv6' &&
    parsed
      .toByteArray()
      .slice(0, 12)
      .every((byte) => byte === 0)
  ) {
    const range = parsed.range();
    return range === 'unspecified' || range === 'loopback' ? range : 'ipv4Compatible';
  }
  return ipaddr.process(parsed.toString()).range();
}

/** An IPv6 address as the URL standard writes it (in hex, the shortest form); what it refuses, as is. */
function hexIpv6(address: string): string {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address;
  }
}

/** Whether a request may connect to `address` (an IP literal) in `mode`. */
export function isAllowedAddress(address: string, mode: DestinationMode): boolean {
  const range = rangeOf(address);
  return range === 'unicast' || (mode === 'local' && range === 'loopback');
}

/** The host of a URL without the brackets of an IPv6 literal. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Names that always resolve to this machine (RFC 6761 §6.3): refused before any lookup, deployed. */
function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * The URL of an endpoint, checked as far as it can be without resolving it: an absolute `https`
 * URL (or `http` to loopback, locally), no credentials, no fragment, at most 2,048 characters, and
 * a literal address only when allowed. The WHATWG parser has already turned the odd IPv4 spellings
 * (`2130706433`, `0x7f.1`, `127.1`) into dotted quads, so they are judged as what they are.
 */
export function checkEndpointUrl(raw: string, mode: DestinationMode): URL {
  // In characters (code points), as the schema's maxLength and the OpenAPI document count them.
  if (raw.length > ENDPOINT_LIMITS.urlLength && [...raw].length > ENDPOINT_LIMITS.urlLength) {
    throw new DestinationRefusedError('too-long', `must be at most ${ENDPOINT_LIMITS.urlLength} characters`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationRefusedError('not-a-url', 'must be an absolute URL');
  }
  if (url.username !== '' || url.password !== '') {
    throw new DestinationRefusedError('credentials', 'must not carry credentials');
  }
  if (url.hash !== '' || raw.includes('#')) {
    throw new DestinationRefusedError('fragment', 'must not have a fragment');
  }
  const host = hostOf(url);
  const literal = ipaddr.isValid(host) ? host : undefined;
  const loopback = literal !== undefined ? rangeOf(literal) === 'loopback' : isLocalhostName(host);
  if (url.protocol !== 'https:' && !(mode === 'local' && url.protocol === 'http:' && loopback)) {
    throw new DestinationRefusedError(
      'scheme',
      mode === 'local' ? 'must be https, or http to a loopback address' : 'must be https',
    );
  }
  if (literal !== undefined && !isAllowedAddress(literal, mode)) {
    throw new DestinationRefusedError(
      'forbidden-address',
      `must not be a ${rangeOf(literal)} address: only public addresses receive webhooks`,
    );
  }
  if (literal === undefined && loopback && mode === 'deployed') {
    throw new DestinationRefusedError('forbidden-host', 'must not name this machine (localhost)');
  }
  return url;
}
