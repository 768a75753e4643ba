/**
 * Destination safety: classifies an IP address so the fetcher can refuse the ones an
 * embedding crawler must never be pointed at (DESIGN §9b) — its own host, its LAN, the
 * cloud metadata service on link-local, carrier NAT, multicast and the unroutable ranges.
 *
 * The check runs on the address the connection will actually use (after DNS), so a public
 * name that resolves to 10.0.0.5 — DNS rebinding — is caught just like a literal. Parsing is
 * strict and fails closed: anything that is not a canonical dotted quad or valid IPv6 text
 * classifies as `invalid`, which is not public.
 *
 * Ranges (IANA IPv4/IPv6 Special-Purpose Address Registries, RFC 6890 and successors):
 *
 *   IPv4  0.0.0.0/8 unspecified        10/8, 172.16/12, 192.168/16 private (RFC 1918)
 *         100.64/10 sharedCgnat (6598) 127/8 loopback          169.254/16 linkLocal
 *         192.0.0/24, 192.88.99/24, 240/4 reserved             224/4 multicast
 *         192.0.2/24, 198.51.100/24, 203.0.113/24 documentation
 *         198.18/15 benchmarking       255.255.255.255 broadcast
 *   IPv6  ::/128 unspecified  ::1 loopback  fc00::/7 private (ULA)  fec0::/10 private
 *         fe80::/10 linkLocal  ff00::/8 multicast  2001:db8::/32, 3fff::/20 documentation
 *         2001:2::/48 benchmarking  64:ff9b:1::/48 private (local NAT64)
 *         100::/64, 2001::/32 (Teredo), 2001:10::/28, 2001:20::/28, ::/96 reserved
 *         anything outside 2000::/3 reserved
 *   Embedded IPv4 is classified as IPv4: ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d
 *   (translated), 64:ff9b::a.b.c.d (NAT64) and 2002:AABB:CCDD::/48 (6to4), so
 *   ::ffff:127.0.0.1 is loopback however it is written.
 *
 * Pure and dependency-free (no node:net), so the same rules hold wherever it runs.
 */

/** What kind of destination an address is. Only `public` may be fetched by default. */
export type AddressClass =
  | 'public'
  | 'private'
  | 'loopback'
  | 'linkLocal'
  | 'sharedCgnat'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved'
  | 'invalid';

/** Parses a canonical dotted quad into a u32, or -1. Leading zeros are rejected (octal ambiguity). */
export function parseIPv4(text: string): number {
  const parts = text.split('.');
  if (parts.length !== 4) return -1;
  let value = 0;
  for (const p of parts) {
    if (p.length === 0 || p.length > 3 || (p.length > 1 && p.charCodeAt(0) === 48)) return -1;
    let n = 0;
    for (let i = 0; i < p.length; i++) {
      const c = p.charCodeAt(i) - 48;
      if (c < 0 || c > 9) return -1;
      n = n * 10 + c;
    }
    if (n > 255) return -1;
    value = value * 256 + n;
  }
  return value;
}

/**
 * Parses IPv6 text (optionally bracketed, optionally with a `%zone`, optionally with a
 * dotted-quad tail) into eight 16-bit groups, or null.
 */
export function parseIPv6(text: string): number[] | null {
  let s = text;
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0) {
    if (zone === s.length - 1) return null;
    s = s.slice(0, zone);
  }
  if (s.length < 2 || s.length > 45) return null;
  const lastColon = s.lastIndexOf(':');
  if (lastColon < 0) return null;
  if (s.indexOf('.', lastColon) > lastColon) {
    // A dotted-quad tail stands for the last two groups: rewrite it as hex and parse on.
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (v4 < 0) return null;
    s = `${s.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const parseGroups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (g.length === 0 || g.length > 4 || !/^[0-9a-fA-F]+$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = parseGroups(halves[0]!);
  if (head === null) return null;
  if (halves.length === 1) {
    return head.length === 8 ? head : null;
  }
  const rest = parseGroups(halves[1]!);
  if (rest === null) return null;
  const known = head.length + rest.length;
  if (known > 7) return null;
  return [...head, ...new Array<number>(8 - known).fill(0), ...rest];
}

/** Classifies an IPv4 address given as a u32. */
export function classifyIPv4(v: number): AddressClass {
  const a = v >>> 24;
  const b = (v >>> 16) & 0xff;
  const c = (v >>> 8) & 0xff;
  if (a === 0) return 'unspecified';
  if (a === 10) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'sharedCgnat';
  if (a === 127) return 'loopback';
  if (a === 169 && b === 254) return 'linkLocal';
  if (a === 172 && b >= 16 && b <= 31) return 'private';
  if (a === 192 && b === 0 && c === 0) return 'reserved';
  if (a === 192 && b === 0 && c === 2) return 'documentation';
  if (a === 192 && b === 88 && c === 99) return 'reserved';
  if (a === 192 && b === 168) return 'private';
  if (a === 198 && (b === 18 || b === 19)) return 'benchmarking';
  if (a === 198 && b === 51 && c === 100) return 'documentation';
  if (a === 203 && b === 0 && c === 113) return 'documentation';
  if (a >= 224 && a <= 239) return 'multicast';
  if (v === 0xffffffff) return 'broadcast';
  if (a >= 240) return 'reserved';
  return 'public';
}

/** Classifies an IPv6 address given as eight 16-bit groups. */
export function classifyIPv6(g: readonly number[]): AddressClass {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const v4 = ((g6 << 16) | g7) >>> 0;
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  if (zeroPrefix && g4 === 0) {
    if (g5 === 0xffff) return classifyIPv4(v4); // ::ffff:a.b.c.d, IPv4-mapped
    if (g5 === 0) {
      if (v4 === 0) return 'unspecified';
      if (v4 === 1) return 'loopback';
      return 'reserved'; // ::a.b.c.d, the deprecated IPv4-compatible form
    }
  }
  if (zeroPrefix && g4 === 0xffff && g5 === 0) return classifyIPv4(v4); // ::ffff:0:a.b.c.d, translated
  if (g0 === 0x64 && g1 === 0xff9b) {
    if (g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyIPv4(v4); // NAT64 well-known prefix
    if (g2 === 1) return 'private'; // 64:ff9b:1::/48, local-use NAT64
  }
  if (g0 === 0x2002) return classifyIPv4(((g1 << 16) | g2) >>> 0); // 6to4 carries the IPv4 address
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return 'reserved'; // discard-only
  if (g0 === 0x2001) {
    if (g1 === 0xdb8) return 'documentation';
    if (g1 === 0) return 'reserved'; // Teredo
    if (g1 === 2 && g2 === 0) return 'benchmarking';
    if (g1 >= 0x10 && g1 <= 0x2f) return 'reserved'; // ORCHID, ORCHIDv2
  }
  if (g0 === 0x3fff && g1 <= 0x0fff) return 'documentation'; // 3fff::/20
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // unique local
  if ((g0 & 0xffc0) === 0xfe80) return 'linkLocal';
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  if ((g0 & 0xe000) === 0x2000) return 'public';
  return 'reserved';
}

/** Which IP version `text` is written in: 4, 6, or 0 when it is not an IP literal. */
export function ipVersion(text: string): 0 | 4 | 6 {
  if (parseIPv4(text) >= 0) return 4;
  if (text.includes(':') && parseIPv6(text) !== null) return 6;
  return 0;
}

/**
 * Classifies an IP address (IPv4 dotted quad, or IPv6 text with optional brackets and zone).
 * Text that is not a valid address is `invalid`.
 */
export function classifyAddress(ip: string): AddressClass {
  if (typeof ip !== 'string') return 'invalid';
  const v4 = parseIPv4(ip);
  if (v4 >= 0) return classifyIPv4(v4);
  if (!ip.includes(':')) return 'invalid';
  const groups = parseIPv6(ip);
  return groups === null ? 'invalid' : classifyIPv6(groups);
}

/** Whether a crawler may connect to `ip` without `allowPrivate`: true only for `public`. */
export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === 'public';
}

/**
 * The address-policy verdict for one destination: `undefined` when `ip` may be used, or a
 * reason string (`"loopback address 127.0.0.1"`) when it must be refused. With
 * `allowPrivate`, every valid address passes; invalid text never does.
 */
export function refusalReason(ip: string, allowPrivate: boolean): string | undefined {
  const kind = classifyAddress(ip);
  if (kind === 'public') return undefined;
  if (kind === 'invalid') return `invalid address ${JSON.stringify(ip)}`;
  return allowPrivate ? undefined : `${kind} address ${ip}`;
}
