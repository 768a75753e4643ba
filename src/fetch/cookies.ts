/**
 * CookieJar: the cookies sites set, sent back to them for the rest of a run (RFC 6265, with
 * the tightenings of its revision draft, 6265bis, cited where they apply).
 *
 * Why a crawler keeps cookies: many sites answer a client that sends none with a redirect to
 * the very page it asked for, setting a cookie on the way (a cookie check: load balancers'
 * persistence cookies, bot screens, consent walls). Without a jar every such URL is a redirect
 * to itself and the crawl sees none of the site; wget and Scrapy keep cookies by default for
 * the same reason.
 *
 * Owns: parsing `Set-Cookie` (§5.2) and its dates (§5.1.1), the storage model (§5.3: host-only
 * and domain cookies, the public-suffix refusal, default paths, Max-Age over Expires, deletion
 * by a past expiry, Secure cookies left alone by http answers), choosing a request's cookies (§5.4: domain, path and Secure matching,
 * longest path first) and bounding memory — at most `maxPerSite` cookies per registrable
 * domain (RFC 6265 §6.1's minimum a user agent should hold, 50) and `maxCookies` in all, the
 * least recently used site evicted first.
 *
 * Never: persist anything (a resumed crawl starts with an empty jar, as a new browser session
 * does, and the site sets its cookies again), read the wall clock itself (`now` is an option),
 * or keep a cookie it could not send back verbatim (non-ASCII or control characters).
 */
import { domainToASCII } from 'node:url';
import { InvalidArgumentError } from '../errors/index.js';
import { isPublicSuffix, registrableDomain } from '../url/index.js';

/** One stored cookie (§5.3's fields that matter to a client that runs no script). */
export interface Cookie {
  readonly name: string;
  readonly value: string;
  /** The host (host-only) or the Domain attribute's domain, lowercase ASCII. */
  readonly domain: string;
  /** Sent to `domain` exactly, not to its subdomains (no Domain attribute). */
  readonly hostOnly: boolean;
  readonly path: string;
  /** Sent over https only. */
  readonly secure: boolean;
  /** Epoch ms at which it expires; `Infinity` for a session cookie (kept for the run). */
  readonly expiresMs: number;
}

/** Options of `CookieJar`. */
export interface CookieJarOptions {
  /** Wall clock, epoch ms (expiry, Max-Age). Default `Date.now`. */
  readonly now?: () => number;
  /** Cookies kept in all; past it the least recently used site's go. Default 10,000 (≈ 2 MB). */
  readonly maxCookies?: number;
  /** Cookies kept per registrable domain; past it the least recently sent go. Default 50. */
  readonly maxPerSite?: number;
}

interface Stored {
  name: string;
  value: string;
  domain: string;
  hostOnly: boolean;
  path: string;
  secure: boolean;
  expiresMs: number;
  /** Creation order (§5.4 step 2's tie-break: earlier created first). */
  created: number;
  lastUsedMs: number;
}

/** What one Set-Cookie line says, before the storage rules. */
interface Parsed {
  name: string;
  value: string;
  expiresMs?: number;
  maxAgeMs?: number;
  domain?: string;
  path?: string;
  secure: boolean;
}

/** RFC 6265bis §5.6 step 4: a name and value longer than this together are ignored. */
const MAX_PAIR = 4096;
/** RFC 6265bis §5.6 step 9: an attribute value longer than this is ignored. */
const MAX_ATTRIBUTE = 1024;
/** RFC 6265bis §5.6.1/§5.6.2: an expiry further out than 400 days is taken as 400 days. */
const MAX_AGE_MS = 400 * 24 * 3600 * 1000;
/** What can be sent back verbatim in a request header: visible ASCII, space and tab. */
const SENDABLE = /^[\t\x20-\x7e]*$/;
/** RFC 6265bis §5.6 step 2: a line with a control character other than tab is ignored whole. */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;
/** §5.1.1's delimiters between date tokens. */
const DATE_DELIMITERS = /[\x09\x20-\x2f\x3b-\x40\x5b-\x60\x7b-\x7e]+/;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const trimWs = (s: string): string => s.replace(/^[ \t]+|[ \t]+$/g, '');

/**
 * A cookie date (RFC 6265 §5.1.1) as epoch ms, or undefined when it is not one. The algorithm
 * is deliberately lenient (it reads `Wed, 21 Oct 2015 07:28:00 GMT`, RFC 850's
 * `Wednesday, 21-Oct-15 07:28:00 GMT` and asctime's `Wed Oct 21 07:28:00 2015` alike): tokens
 * are tried as a time, a day of month, a month and a year, in that order, each found once.
 */
export function parseCookieDate(text: string): number | undefined {
  let time: [number, number, number] | undefined;
  let day: number | undefined;
  let month: number | undefined;
  let year: number | undefined;
  for (const token of text.split(DATE_DELIMITERS)) {
    if (token === '') continue;
    if (time === undefined) {
      const m = /^(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\D|$)/.exec(token);
      if (m !== null) {
        time = [Number(m[1]), Number(m[2]), Number(m[3])];
        continue;
      }
    }
    if (day === undefined) {
      const m = /^(\d{1,2})(?:\D|$)/.exec(token);
      if (m !== null) {
        day = Number(m[1]);
        continue;
      }
    }
    if (month === undefined) {
      const i = MONTHS.indexOf(token.slice(0, 3).toLowerCase());
      if (i >= 0) {
        month = i;
        continue;
      }
    }
    if (year === undefined) {
      const m = /^(\d{2,4})(?:\D|$)/.exec(token);
      if (m !== null) year = Number(m[1]);
    }
  }
  if (time === undefined || day === undefined || month === undefined || year === undefined) return undefined;
  // Steps 3 and 4: two-digit years.
  if (year >= 70 && year <= 99) year += 1900;
  else if (year <= 69) year += 2000;
  const [h, mi, s] = time;
  if (day < 1 || day > 31 || year < 1601 || h > 23 || mi > 59 || s > 59) return undefined;
  const ms = Date.UTC(year, month, day, h, mi, s);
  // Step 5: 31 February is not a date.
  return new Date(ms).getUTCDate() === day ? ms : undefined;
}

/** One `Set-Cookie` value (§5.2), or undefined when the user agent must ignore it. */
function parseSetCookie(line: string, nowMs: number): Parsed | undefined {
  if (CONTROL.test(line)) return undefined;
  const semi = line.indexOf(';');
  const pair = semi < 0 ? line : line.slice(0, semi);
  const eq = pair.indexOf('=');
  // §5.2 step 2 (a pair without "=" is ignored) and step 5 (so is an empty name).
  if (eq < 0) return undefined;
  const name = trimWs(pair.slice(0, eq));
  const value = trimWs(pair.slice(eq + 1));
  if (name === '' || name.length + value.length > MAX_PAIR) return undefined;
  if (!SENDABLE.test(name) || !SENDABLE.test(value) || name.includes('\t')) return undefined;
  const out: Parsed = { name, value, secure: false };
  if (semi < 0) return out;
  // §5.2 steps 1–6 of the attribute loop: later attributes of one name override earlier ones.
  for (const part of line.slice(semi + 1).split(';')) {
    const at = part.indexOf('=');
    const key = trimWs(at < 0 ? part : part.slice(0, at)).toLowerCase();
    const val = at < 0 ? '' : trimWs(part.slice(at + 1));
    if (val.length > MAX_ATTRIBUTE) continue;
    switch (key) {
      case 'expires': {
        // §5.2.1: an unparseable date ignores the attribute.
        const t = parseCookieDate(val);
        if (t !== undefined) out.expiresMs = Math.min(t, nowMs + MAX_AGE_MS);
        break;
      }
      case 'max-age': {
        // §5.2.2: a leading "-" or digit, then digits only; zero or less expires at once.
        if (!/^-?\d+$/.test(val)) break;
        const seconds = Number(val);
        out.maxAgeMs = seconds <= 0 ? -Infinity : nowMs + Math.min(seconds * 1000, MAX_AGE_MS);
        break;
      }
      case 'domain': {
        // §5.2.3: an empty value ignores the attribute; a leading dot is dropped.
        if (val === '') break;
        out.domain = (val.startsWith('.') ? val.slice(1) : val).toLowerCase();
        break;
      }
      case 'path':
        // §5.2.4: a value not starting with "/" means the default path.
        if (val.startsWith('/')) out.path = val;
        else delete out.path;
        break;
      case 'secure':
        out.secure = true;
        break;
      default:
        // HttpOnly and SameSite rule what scripts and cross-site subrequests see; a crawler
        // runs no script and fetches every URL as a top-level navigation.
        break;
    }
  }
  return out;
}

/** §5.1.3: `host` is `domain` or a subdomain of it (never for an IP address). */
function domainMatch(host: string, domain: string): boolean {
  if (host === domain) return true;
  return host.endsWith(domain) && host.charCodeAt(host.length - domain.length - 1) === 0x2e && !isIp(host);
}

function isIp(host: string): boolean {
  if (host.startsWith('[')) return true;
  const c = host.charCodeAt(host.lastIndexOf('.') + 1);
  return c >= 48 && c <= 57;
}

/** §5.1.4: the directory of the request path (`/a/b` → `/a`, `/a` → `/`). */
function defaultPath(path: string): string {
  if (!path.startsWith('/')) return '/';
  const last = path.lastIndexOf('/');
  return last === 0 ? '/' : path.slice(0, last);
}

/** §5.1.4: `path` is `cookiePath` or below it. */
function pathMatch(path: string, cookiePath: string): boolean {
  if (path === cookiePath) return true;
  return path.startsWith(cookiePath) && (cookiePath.endsWith('/') || path.charCodeAt(cookiePath.length) === 0x2f);
}

function toUrl(url: string | URL, what: string): URL {
  if (url instanceof URL) return url;
  try {
    return new URL(url);
  } catch {
    throw new InvalidArgumentError(`CookieJar.${what}: expected an absolute URL, received ${JSON.stringify(String(url).slice(0, 200))}`);
  }
}

/** A run's cookies; see the module comment. */
export class CookieJar {
  /** Cookies by registrable domain; Map order is least recently used first. */
  readonly #sites = new Map<string, Stored[]>();
  readonly #now: () => number;
  readonly #maxCookies: number;
  readonly #maxPerSite: number;
  #count = 0;
  #created = 0;

  constructor(options: CookieJarOptions = {}) {
    const { now = Date.now, maxCookies = 10_000, maxPerSite = 50 } = options;
    if (typeof now !== 'function') throw new InvalidArgumentError('CookieJar: now must be a function returning epoch ms');
    for (const [name, v] of [
      ['maxCookies', maxCookies],
      ['maxPerSite', maxPerSite],
    ] as const) {
      if (!Number.isInteger(v) || v < 1) throw new InvalidArgumentError(`CookieJar: ${name} must be a positive integer, received ${String(v)}`);
    }
    this.#now = now;
    this.#maxCookies = maxCookies;
    this.#maxPerSite = maxPerSite;
  }

  /** Cookies held. */
  get size(): number {
    return this.#count;
  }

  /**
   * Takes the `Set-Cookie` values of a response to `url` (§5.3). Returns how many cookies were
   * stored, replaced or deleted — 0 when every line was ignored (malformed, for another site,
   * for a public suffix, Secure over http, a `__Secure-`/`__Host-` name breaking its rule).
   */
  store(url: string | URL, setCookie: string | readonly string[] | undefined): number {
    if (setCookie === undefined) return 0;
    const u = toUrl(url, 'store');
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return 0;
    const host = u.hostname;
    const https = u.protocol === 'https:';
    const nowMs = this.#now();
    let changed = 0;
    for (const line of typeof setCookie === 'string' ? [setCookie] : setCookie) {
      if (typeof line !== 'string') continue;
      const p = parseSetCookie(line, nowMs);
      // RFC 6265bis §5.7 step 8: only a secure origin may set a Secure cookie.
      if (p === undefined || (p.secure && !https)) continue;
      let domain = host;
      let hostOnly = true;
      if (p.domain !== undefined) {
        const d = domainToASCII(p.domain);
        if (d === '') continue;
        // §5.3 step 5: a public suffix is refused unless it is the host itself (then host-only).
        if (isPublicSuffix(d) && d !== host) continue;
        if (d !== host || !isPublicSuffix(d)) {
          // §5.3 step 6: the host must domain-match the attribute.
          if (!domainMatch(host, d)) continue;
          domain = d;
          hostOnly = false;
        }
      }
      const path = p.path ?? defaultPath(u.pathname);
      // RFC 6265bis §4.1.3: the name prefixes promise how the cookie was set.
      const lower = p.name.toLowerCase();
      if (lower.startsWith('__secure-') && !p.secure) continue;
      if (lower.startsWith('__host-') && (!p.secure || !hostOnly || path !== '/')) continue;
      // RFC 6265bis §5.7 step 16 ("leave Secure cookies alone"): an http answer may not shadow
      // or replace a Secure cookie of the same name over a matching domain and path.
      if (!https && this.#shadowsSecure(host, p.name, domain, path)) continue;
      const expiresMs = p.maxAgeMs ?? p.expiresMs ?? Infinity;
      if (this.#put(host, { name: p.name, value: p.value, domain, hostOnly, path, secure: p.secure, expiresMs, created: 0, lastUsedMs: nowMs }, nowMs)) changed++;
    }
    return changed;
  }

  /**
   * The `Cookie` header for a request to `url` (§5.4): the unexpired cookies whose domain,
   * path and Secure flag match it, longest path first, then oldest first — undefined when
   * none does. Marks them used (the per-site eviction order).
   */
  header(url: string | URL): string | undefined {
    const chosen = this.#sendable(toUrl(url, 'header'), true);
    if (chosen.length === 0) return undefined;
    const nowMs = this.#now();
    chosen.sort((a, b) => b.path.length - a.path.length || a.created - b.created);
    let out = '';
    for (const c of chosen) {
      c.lastUsedMs = nowMs;
      out += (out === '' ? '' : '; ') + `${c.name}=${c.value}`;
    }
    return out;
  }

  /**
   * Whether a request to `url` would carry a cookie — what `header` answers, without building
   * the header or counting the cookies as used (the engine asks it of a redirect's target).
   */
  has(url: string | URL): boolean {
    return this.#sendable(toUrl(url, 'has'), false).length > 0;
  }

  /** The unexpired cookies a request to `u` sends (RFC 6265 §5.4 steps 1–2), unsorted. */
  #sendable(u: URL, touch: boolean): Stored[] {
    const list = this.#site(u.hostname, touch);
    if (list === undefined) return [];
    const https = u.protocol === 'https:';
    const path = u.pathname;
    const host = u.hostname;
    const nowMs = this.#now();
    const chosen: Stored[] = [];
    for (const c of list) {
      if (c.expiresMs <= nowMs) continue;
      if (c.hostOnly ? host !== c.domain : !domainMatch(host, c.domain)) continue;
      if (!pathMatch(path, c.path) || (c.secure && !https)) continue;
      chosen.push(c);
    }
    if (touch) this.#dropExpired(list, nowMs);
    return chosen;
  }

  /** The unexpired cookies held for `url`'s site (registrable domain), in storage order. */
  cookies(url: string | URL): Cookie[] {
    const u = toUrl(url, 'cookies');
    const nowMs = this.#now();
    return (this.#site(u.hostname, false) ?? [])
      .filter((c) => c.expiresMs > nowMs)
      .map((c) => ({ name: c.name, value: c.value, domain: c.domain, hostOnly: c.hostOnly, path: c.path, secure: c.secure, expiresMs: c.expiresMs }));
  }

  /** Forgets every cookie. */
  clear(): void {
    this.#sites.clear();
    this.#count = 0;
  }

  #shadowsSecure(host: string, name: string, domain: string, path: string): boolean {
    const list = this.#site(host, false);
    if (list === undefined) return false;
    return list.some((c) => c.secure && c.name === name && (domainMatch(domain, c.domain) || domainMatch(c.domain, domain)) && pathMatch(path, c.path));
  }

  /** The list of `host`'s site; `touch` makes it the most recently used. */
  #site(host: string, touch: boolean): Stored[] | undefined {
    if (host === '') return undefined;
    const key = registrableDomain(host);
    const list = this.#sites.get(key);
    if (list !== undefined && touch) {
      this.#sites.delete(key);
      this.#sites.set(key, list);
    }
    return list;
  }

  /** §5.3 steps 11–12: replace (keeping the creation time), delete, or add; then the limits. */
  #put(host: string, c: Stored, nowMs: number): boolean {
    const key = registrableDomain(host);
    let list = this.#sites.get(key);
    const at = list === undefined ? -1 : list.findIndex((x) => x.name === c.name && x.domain === c.domain && x.path === c.path);
    if (c.expiresMs <= nowMs) {
      // A past expiry is how a site deletes a cookie; one it never set changes nothing.
      if (list === undefined || at < 0) return false;
      list.splice(at, 1);
      this.#count--;
      if (list.length === 0) this.#sites.delete(key);
      return true;
    }
    if (list === undefined) {
      list = [];
      this.#sites.set(key, list);
    } else {
      this.#sites.delete(key);
      this.#sites.set(key, list);
    }
    if (at >= 0) {
      c.created = list[at]!.created;
      list[at] = c;
      return true;
    }
    c.created = ++this.#created;
    list.push(c);
    this.#count++;
    if (list.length > this.#maxPerSite) {
      this.#dropExpired(list, nowMs);
      while (list.length > this.#maxPerSite) {
        // §5.3's eviction: the least recently used (ties: the oldest) goes.
        let worst = 0;
        for (let i = 1; i < list.length; i++) {
          const a = list[i]!;
          const w = list[worst]!;
          if (a.lastUsedMs < w.lastUsedMs || (a.lastUsedMs === w.lastUsedMs && a.created < w.created)) worst = i;
        }
        list.splice(worst, 1);
        this.#count--;
      }
    }
    while (this.#count > this.#maxCookies) {
      const [oldest, cookies] = this.#sites.entries().next().value as [string, Stored[]];
      if (oldest === key) {
        // Only this site is left over the cap: its first cookies go.
        list.shift();
        this.#count--;
        continue;
      }
      this.#sites.delete(oldest);
      this.#count -= cookies.length;
    }
    return true;
  }

  #dropExpired(list: Stored[], nowMs: number): void {
    let w = 0;
    for (const c of list) if (c.expiresMs > nowMs) list[w++] = c;
    this.#count -= list.length - w;
    list.length = w;
  }
}
