/**
 * Host grouping (DESIGN §5): which hosts share one politeness/budget unit and one HostKey.
 *
 *   registrable  public suffix + 1 label, from the whole Public Suffix List (ICANN and
 *                private sections, via tldts), so `alice.github.io` and `bob.github.io` are
 *                two groups while `www.bbc.co.uk` and `news.bbc.co.uk` are one. A host that
 *                is itself a public suffix, an IP literal, or a single label (`localhost`) is
 *                its own group. The default.
 *   host         the full canonical host name.
 *   origin       `scheme://host[:port]` exactly as in the canonical URL: lowercase scheme,
 *                canonical host (punycode, IPv6 in brackets), the port only when it is not
 *                the scheme's default. It is the WHATWG origin serialization, so
 *                `http://a.com`, `https://a.com` and `https://a.com:8443` are three groups.
 *
 * The group key strings are ASCII; their UTF-8 bytes are what the HostKey hashes
 * (src/url/keys.ts). The PSL snapshot is tldts's: upgrading tldts can move a host between
 * groups, which is why the group key, not just the hash, is stored with a host.
 */
import { getDomain, getPublicSuffix } from 'tldts';
import { InvalidArgumentError } from '../errors/index.js';
import type { HostGrouping } from '../model/index.js';

/** The grouping modes, in the order the options validator lists them. */
export const HOST_GROUPINGS: readonly HostGrouping[] = ['registrable', 'host', 'origin'];

const PSL_OPTIONS = {
  allowPrivateDomains: true,
  extractHostname: false,
  validateHostname: false,
  detectIp: false,
  mixedInputs: false,
} as const;

/** Whether a canonical host is an IP literal: IPv6 in brackets, or IPv4 (a numeric last label). */
function isIpLiteral(host: string): boolean {
  if (host.charCodeAt(0) === 0x5b) return true;
  const c = host.charCodeAt(host.lastIndexOf('.') + 1);
  return c >= 48 && c <= 57;
}

/**
 * The registrable domain (public suffix + 1) of a canonical host, using the ICANN and private
 * sections of the Public Suffix List. A host with no label above its public suffix (a suffix
 * itself such as `github.io`, or a single label such as `localhost`) and an IP literal are
 * returned unchanged. Expects a canonical host (lowercase, punycode, no trailing dot).
 */
export function registrableDomain(host: string): string {
  if (typeof host !== 'string' || host === '') {
    throw new InvalidArgumentError(`registrableDomain: expected a canonical host name, received ${JSON.stringify(host)}`);
  }
  if (isIpLiteral(host)) return host;
  return getDomain(host, PSL_OPTIONS) ?? host;
}

/**
 * Whether a canonical host is itself a public suffix (`co.uk`, `github.io`, a bare `com`): a
 * name under which unrelated parties register, so nothing may be scoped to it as a whole (a
 * cookie's Domain, RFC 6265 §5.3 step 5). An IP literal is not; a single unlisted label
 * (`localhost`) is, as the PSL's default rule makes it.
 */
export function isPublicSuffix(host: string): boolean {
  if (typeof host !== 'string' || host === '' || isIpLiteral(host)) return false;
  return getPublicSuffix(host, PSL_OPTIONS) === host;
}

const DEFAULT_PORT: Readonly<Record<string, string>> = { 'http:': '80', 'https:': '443' };

/**
 * Where the `scheme://authority` prefix of an http(s) URL ends (the first `/`, `?` or `#`
 * after the scheme, or the length), or −1 when `url` does not start with `http(s)://`.
 */
export function originEnd(url: string): number {
  const authStart = url.startsWith('https://') ? 8 : url.startsWith('http://') ? 7 : 0;
  if (authStart === 0) return -1;
  let end = authStart;
  const n = url.length;
  while (end < n) {
    const c = url.charCodeAt(end);
    if (c === 0x2f || c === 0x3f || c === 0x23) break;
    end++;
  }
  return end;
}

/** Whether two canonical http(s) URLs have the same `scheme://authority` prefix. */
export function sameOrigin(a: string, b: string): boolean {
  const end = originEnd(a);
  return end > 0 && originEnd(b) === end && a.slice(0, end) === b.slice(0, end);
}

/** A URL without its query and fragment: its origin and path (the learners' per-path scope). */
export function withoutQuery(url: string): string {
  const end = url.search(/[?#]/);
  return end < 0 ? url : url.slice(0, end);
}

/**
 * Splits an origin or canonical URL (`scheme://host[:port]…`) into its origin and host.
 * Returns undefined when the string does not start with an http(s) origin.
 */
export function splitOrigin(url: string): { origin: string; host: string } | undefined {
  const end = originEnd(url);
  if (end < 0) return undefined;
  const authStart = url.charCodeAt(4) === 0x73 ? 8 : 7;
  if (end === authStart) return undefined;
  let hostEnd = end;
  if (url.charCodeAt(authStart) === 0x5b) hostEnd = url.indexOf(']', authStart) + 1;
  else {
    const colon = url.indexOf(':', authStart);
    if (colon >= 0 && colon < end) hostEnd = colon;
  }
  if (hostEnd <= authStart) return undefined;
  return { origin: url.slice(0, end), host: url.slice(authStart, hostEnd) };
}

/**
 * The group key of a host under `grouping`: the bytes its HostKey hashes.
 *
 * `host` is a canonical host name (`news.example.co.uk`), or an origin or canonical URL
 * (`https://news.example.co.uk:8443/…`), whose host is used for `registrable` and `host`.
 * `origin` grouping needs the scheme, so it requires the origin or URL form and throws
 * `InvalidArgumentError` for a bare host; a default port given explicitly is dropped.
 */
export function hostGroupKey(host: string, grouping: HostGrouping = 'registrable'): string {
  if (typeof host !== 'string' || host === '') {
    throw new InvalidArgumentError(`hostGroupKey: expected a canonical host, origin or URL, received ${JSON.stringify(host)}`);
  }
  const parts = host.includes('://') ? splitOrigin(host) : undefined;
  if (host.includes('://') && parts === undefined) {
    throw new InvalidArgumentError(`hostGroupKey: expected an http(s) origin or URL, received ${JSON.stringify(host)}`);
  }
  const name = parts ? parts.host : host;
  switch (grouping) {
    case 'registrable':
      return registrableDomain(name);
    case 'host':
      return name;
    case 'origin': {
      if (parts === undefined) {
        throw new InvalidArgumentError(
          `hostGroupKey: origin grouping needs the scheme; pass the origin or canonical URL, not the bare host ${JSON.stringify(host)}`,
        );
      }
      const scheme = parts.origin.startsWith('https:') ? 'https:' : 'http:';
      const port = parts.origin.slice(scheme.length + 2 + name.length);
      return port === ':' + DEFAULT_PORT[scheme] ? parts.origin.slice(0, parts.origin.length - port.length) : parts.origin;
    }
    default:
      throw new InvalidArgumentError(
        `hostGroupKey: expected a grouping of ${HOST_GROUPINGS.map((g) => JSON.stringify(g)).join(', ')}, received ${JSON.stringify(grouping)}`,
      );
  }
}
