/**
 * HttpFetcher: the engine's `Fetcher` on undici. One GET per call, never a redirect followed
 * (the Location is resolved and returned; the state machine records the hop), every failure
 * an `Outcome` with status 0 and an `errorKind` rather than a rejection.
 *
 * What a call does, in order:
 *  1. URL checks: parseable, http(s), at most `maxUrlLength` characters.
 *  2. Address: an IP literal as is; else the frontier's resolved `ip`; else the DnsCache.
 *     The address is then checked (`address.ts`) — private, loopback, link-local, CGNAT,
 *     multicast… are refused unless `allowPrivate` — *before* any connection, on the very
 *     address the socket will use, so DNS rebinding cannot slip past the check.
 *  3. Connection: a keep-alive undici Pool per (origin, address), whose connector dials the
 *     pinned address while TLS SNI, certificate checks and the Host header keep the
 *     hostname. Idle pools beyond `maxOrigins` are closed, least recently used first.
 *  4. Request: User-Agent (required), Accept, Accept-Encoding, If-None-Match and
 *     If-Modified-Since from the stored validators, Cookie from the `cookies` jar (which takes
 *     every response's Set-Cookie), Authorization for an origin given `credentials`; connect,
 *     headers, body-idle and total timeouts; response headers capped at `maxHeaderBytes`.
 *  5. Response: Retry-After, ETag, Last-Modified, Content-Type, Location, X-Robots-Tag are
 *     kept; a CDN's bot challenge is named in `error`; a `Link` header's `rel=canonical`
 *     (link-header.ts) is read as the body's canonical, its `rel=next`/`prev` and hreflang
 *     alternates and a `Refresh` header's URL as links. A 2xx body is read up to
 *     `maxBodyBytes` on the wire and `maxDecodedBytes` after
 *     gzip/deflate/br decoding (bombs stopped mid-inflate; `truncated` marks a cut), then
 *     analyzed once — on a worker thread from 32 KiB up (`PageAnalyzer`, page-work.ts), so
 *     no page holds the event loop that paces the other hosts: `contentFp` (src/dedup: xxHash64 of the whitespace-normalized
 *     bytes), `simhash` (src/core: of the visible text for HTML, of the text for other
 *     textual types, none for binary) and `churnFp` (src/dedup: of the main text with
 *     clocks, counters and tokens masked; what tells an edit from boilerplate churn). HTML is scanned in the same pass for links (through
 *     src/url's `canonicalize` under `canonPolicy`), canonical and meta robots. A body that
 *     fails to decode is still read to its end (within the cap): the recording holds it whole,
 *     and the connection can be reused. Other statuses' bodies are drained so the connection
 *     can be reused: 64 KiB at most, or — when recording, since an error page or a redirect's
 *     body is part of the archive — up to `maxBodyBytes`, a cut marked `truncated`.
 *  6. Timing: `latencyMs` (start to headers) and `fetchMs` (start to end of body) on the
 *     injected monotonic clock.
 *
 * Length: one file because a fetch is one sequence best read top to bottom; what can stand
 * alone already does — wire recording (record.ts), proxy tunnels (proxy.ts), bodies
 * (body.ts), links (links.ts), sitemaps (src/sitemap).
 *
 * Redirect counts are capped by whoever follows them — the engine for pages (its
 * `maxRedirects`, 10 hops; the frontier's state machine records each hop), RobotsCache for
 * robots.txt (5 hops) — since a fetcher that does not follow cannot count; it does refuse a
 * Location longer than `maxUrlLength`.
 */
import { isUtf8 } from 'node:buffer';
import { Pool, buildConnector } from 'undici';
import { InvalidArgumentError } from '../errors/index.js';
import type { FetchErrorKind, FetchRequest, HttpExchange, Link, Outcome } from '../model/index.js';
import { type FieldSpec, booleanField, customField, defineOptions, functionField, numberField, stringField } from '../options/index.js';
import { ipVersion, refusalReason } from './address.js';
import { isCoreLoaded } from '../core/instance.js';
import { loadCoreSync } from '../core/node.js';
import { type CanonPolicy, canonicalize } from '../url/index.js';
import { DEFAULT_MAX_LINKS, REDIRECT_REFRESH_MAX_DELAY_S, parseRefresh } from './links.js';
import { parseLinkHeader } from './link-header.js';
import { ACCEPT_ENCODING, type BodyCaps, decodeText, drainBody, parseContentEncoding, readBody } from './body.js';
import { ProxyTunnel } from './proxy.js';
import { guardPausedParserEnd } from './undici-guard.js';
import { type Capture, beginCapture, finishCapture, releaseRecorder, retainRecorder } from './record.js';
import { DnsCache } from './dns.js';
import { CookieJar } from './cookies.js';
import { lruSet, lruTouch } from '../lru/index.js';
import { type PageAnalysis, isSitemapDocument } from './analyze.js';
import { SITEMAP_MAX_BYTES } from '../sitemap/index.js';
import { PageAnalyzer, type PageAnalyzerStats, defaultAnalyzeThreads } from './page-work.js';
import type { RobotsFetch } from './robots-cache.js';
import { ROBOTS_PARSE_LIMIT_BYTES, productToken, userAgentProblem } from './robots.js';

/** Fetches one URL. Implementations resolve every failure to an Outcome (status 0), never reject. */
export interface Fetcher {
  fetch(req: FetchRequest, signal: AbortSignal): Promise<Outcome>;
}

/** Options of `HttpFetcher`. */
export interface HttpFetcherOptions {
  /** User-Agent header, required: product token first (`MyBot/1.0 (+https://example.com/bot)`). */
  agent: string;
  /** Allow private, loopback, link-local, CGNAT… destinations (intranets, tests). Default false. */
  allowPrivate: boolean;
  /** Resolver cache for requests that carry no `ip` (default: a new DnsCache on c-ares). */
  dns: DnsCache | undefined;
  /**
   * How long a connection may take to be made, TLS handshake included; default 10 s. Running
   * out is a failure to connect (`errorKind` 'connect'), not a timeout of the page — when it
   * is below `totalTimeoutMs` (at or above it, the total timeout fires first: 'timeout').
   */
  connectTimeoutMs: number;
  /** Time to the response headers; default 30 s. */
  headersTimeoutMs: number;
  /** Longest silence between body chunks; default 30 s. */
  bodyTimeoutMs: number;
  /** Whole fetch, connect to last byte; default 120 s. */
  totalTimeoutMs: number;
  /** Body bytes read off the wire; default 10 MiB. */
  maxBodyBytes: number;
  /** Body bytes after decoding (decompression-bomb cap); default 10 MiB. */
  maxDecodedBytes: number;
  /**
   * Body bytes, on the wire and decoded, read of a sitemap or sitemap index (a body whose
   * first element is `<urlset>` or `<sitemapindex>`) when this is more than `maxBodyBytes` /
   * `maxDecodedBytes`; default 50 MiB (52,428,800 bytes), the sitemap protocol's limit. A full
   * sitemap of 50,000 URLs is often more than 10 MiB: cut at a page's cap, a 13 MB one lost
   * the 10,183 URLs past the cut. 0 (or a value below the page caps) reads sitemaps as pages;
   * at most 52,428,800 (the parser reads no more). At most two such reads run at once (a third
   * sitemap meanwhile keeps the page cap); a fetch given its own `maxBodyBytes` keeps it.
   */
  maxSitemapBytes: number;
  /** Longest URL (and Location) accepted; default 8000, RFC 9110 §4.1's recommended minimum. */
  maxUrlLength: number;
  /** Largest response header block; default 64 KiB. */
  maxHeaderBytes: number;
  /** Keep-alive connections per (origin, address); default 1 (the frontier has one fetch in flight per host). */
  connectionsPerOrigin: number;
  /** Idle keep-alive time; default 30 s. */
  keepAliveTimeoutMs: number;
  /** Connection pools kept open; default 1024. */
  maxOrigins: number;
  /** Accept header. */
  accept: string;
  /** Extra request headers (may not replace User-Agent or the validators). */
  headers: Readonly<Record<string, string>>;
  /** Extract links, canonical and meta robots from HTML; default true. */
  parseLinks: boolean;
  /** The crawl's pinned canonicalization policy for extracted links (default src/url's). */
  canonPolicy: CanonPolicy | undefined;
  /** Links kept per page; default 10 000. */
  maxLinks: number;
  /** Keep the decoded body on the outcome (`Outcome.body`); default true. */
  keepBody: boolean;
  /**
   * Worker threads for the per-page CPU work (fingerprint, simhash, links) of bodies of at
   * least `analyzeInlineBelowBytes`; 0 keeps it all on the event loop. Default: cores − 1,
   * between 1 and 4.
   */
  analyzeThreads: number;
  /** Bodies shorter than this are analyzed on the event loop; default 32 KiB (see src/fetch/page-work.ts). */
  analyzeInlineBelowBytes: number;
  /** TLS trust for intranets and tests: CA certificates (PEM, replacing Node's roots), or `rejectUnauthorized: false`. */
  tls: TlsOptions | undefined;
  /**
   * Record each exchange as it crossed the wire (`Outcome.exchange`: the request head as sent,
   * the response bytes as received) for WARC writers; see record.ts. Default false.
   */
  record: boolean;
  /**
   * Fetch through this HTTP(S) proxy (`http://user:pass@proxy:3128`), by CONNECT tunnels to the
   * address the fetcher resolved and checked — the proxy never resolves target names (proxy.ts).
   */
  proxy: string | undefined;
  /** Also return page requisites (images, scripts, stylesheets) as links marked `requisite`; default false. */
  requisites: boolean;
  /**
   * Follow the feeds a seed's page (depth 0) names for autodiscovery (`<link rel=alternate
   * type=application/rss+xml|atom+xml|rdf+xml>`; links marked `feed`): read as sitemaps, their
   * items are links (a post beyond the home page's latest few is often listed only there).
   * Only a seed's: every post of a blog names its own comment feed. Default true.
   */
  seedFeeds: boolean;
  /** Offer HTTP/2 (ALPN) on TLS connections; default false. */
  allowH2: boolean;
  /**
   * Keep the cookies responses set and send them back (`CookieJar`, RFC 6265): on requests for
   * pages and robots.txt alike, after any `cookie` given in `headers`. Default none: no Cookie
   * header is sent and Set-Cookie is ignored. The engine gives one by default (`cookies`).
   */
  cookies: CookieJar | undefined;
  /**
   * HTTP Basic credentials by origin (`{ 'https://staging.example.com': 'user:password' }`): sent
   * as `Authorization` to that origin only (robots.txt included) and to its https:// form on the
   * default port (a site moved to https), never to another origin a redirect or link leads to.
   */
  credentials: Readonly<Record<string, string>>;
  /** Monotonic clock in ms for timing (default `performance.now`). */
  now: () => number;
}

/** TLS settings of `HttpFetcher`. */
export interface TlsOptions {
  /** CA certificates (PEM) to trust instead of Node's bundled roots, as `tls.connect` takes them. */
  readonly ca?: string | readonly string[] | undefined;
  /** Verify server certificates (default true). */
  readonly rejectUnauthorized?: boolean | undefined;
}

/** Per-call overrides of `fetchUrl`. */
export interface FetchUrlOptions {
  /** Pin to this address instead of resolving. */
  ip?: string | undefined;
  etag?: string | undefined;
  /** Stored Last-Modified, epoch seconds. */
  lastModified?: number | undefined;
  /** Wire cap for this call (e.g. robots.txt's 500 KiB). */
  maxBodyBytes?: number | undefined;
  /** Skip link extraction for this call. */
  parseLinks?: boolean | undefined;
  /** Skip the fingerprint, simhash and link extraction altogether (robots.txt). */
  analyze?: boolean | undefined;
}

/** What one call reads and computes. */
interface Mode {
  readonly maxBodyBytes: number;
  readonly parseLinks: boolean;
  readonly analyze: boolean;
  /** The body cap is the fetcher's own (not a caller's for this one fetch): a sitemap may raise it. */
  readonly ownCap: boolean;
}

/**
 * Sitemap reads past a page's cap at once per fetcher (`maxSitemapBytes`); a sitemap met while
 * this many are being read keeps the page cap. Each costs up to ~5× the sitemap in memory (the
 * body, the WARC capture, the worker's copy, the parse: +181 MB for a 45 MB sitemap), so two
 * bound it near 500 MB where 64 concurrent fetches could otherwise have reached gigabytes.
 */
const MAX_SITEMAP_READS = 2;

/** A fetch's claim on raising its caps for a sitemap: `done` gives its share back (once). */
interface SitemapRead {
  readonly caps: BodyCaps;
  /** The failure a read past the page cap was kept through was the body's idle timeout. */
  stalled(): boolean;
  done(): void;
}

const MiB = 1024 * 1024;
/** Body bytes a fetch keeps unless `maxBodyBytes` says otherwise (and decoded, `maxDecodedBytes`). */
export const DEFAULT_MAX_BODY_BYTES = 10 * MiB;

/** Default `connectTimeoutMs`. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Default `headersTimeoutMs` and `bodyTimeoutMs`: how long the fetcher waits for a stalled answer. */
export const DEFAULT_STALL_TIMEOUT_MS = 30_000;

/** An extra header `HttpFetcher` may send: an RFC 9110 §5.1 field name (a token) and, like the agent, a value of visible ASCII. */
export function isHeaderField(name: string, value: unknown): boolean {
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) && typeof value === 'string' && /^[\t\x20-\x7e]*$/.test(value);
}

const isHeaderRecord = (v: unknown): v is Readonly<Record<string, string>> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.entries(v).every(([k, x]) => isHeaderField(k, x));

/**
 * The User-Agent option of every entry point that sends requests (HttpFetcher, Engine): a
 * product token first and header-safe text throughout (`userAgentProblem` says why not).
 */
export const userAgentField: FieldSpec<string> = {
  expects: 'a User-Agent of visible ASCII starting with a product token, e.g. "MyBot/1.0 (+https://example.com/bot)"',
  check: (value, fail) => {
    const problem = userAgentProblem(value);
    return problem === undefined ? (value as string) : fail(problem);
  },
};

const resolveOptions = defineOptions<HttpFetcherOptions>(
  'HttpFetcher',
  {
    agent: userAgentField,
    allowPrivate: booleanField(false),
    dns: customField<DnsCache | undefined>('a DnsCache', (v): v is DnsCache => v instanceof DnsCache),
    connectTimeoutMs: numberField({ above: 0, default: DEFAULT_CONNECT_TIMEOUT_MS }),
    headersTimeoutMs: numberField({ above: 0, default: DEFAULT_STALL_TIMEOUT_MS }),
    bodyTimeoutMs: numberField({ above: 0, default: DEFAULT_STALL_TIMEOUT_MS }),
    totalTimeoutMs: numberField({ above: 0, default: 120_000 }),
    maxBodyBytes: numberField({ min: 0, integer: true, default: DEFAULT_MAX_BODY_BYTES }),
    maxDecodedBytes: numberField({ min: 0, integer: true, default: DEFAULT_MAX_BODY_BYTES }),
    maxSitemapBytes: numberField({ min: 0, max: SITEMAP_MAX_BYTES, integer: true, default: SITEMAP_MAX_BYTES }),
    maxUrlLength: numberField({ min: 16, integer: true, default: 8000 }),
    maxHeaderBytes: numberField({ min: 1024, integer: true, default: 64 * 1024 }),
    connectionsPerOrigin: numberField({ min: 1, integer: true, default: 1 }),
    keepAliveTimeoutMs: numberField({ above: 0, default: 30_000 }),
    maxOrigins: numberField({ min: 1, integer: true, default: 1024 }),
    accept: stringField({ default: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8' }),
    headers: customField('an object of header names (tokens) to values of visible ASCII', isHeaderRecord, () => ({})),
    parseLinks: booleanField(true),
    canonPolicy: customField<CanonPolicy | undefined>('a CanonPolicy (see canonPolicy())', (v): v is CanonPolicy => typeof v === 'object' && v !== null),
    maxLinks: numberField({ min: 0, integer: true, default: DEFAULT_MAX_LINKS }),
    keepBody: booleanField(true),
    analyzeThreads: numberField({ min: 0, max: 64, integer: true, default: defaultAnalyzeThreads() }),
    analyzeInlineBelowBytes: numberField({ min: 0, integer: true, default: 32 * 1024 }),
    tls: customField<TlsOptions | undefined>('an object { ca?, rejectUnauthorized? }', isTlsOptions),
    record: booleanField(false),
    proxy: stringField({ nonEmpty: true }),
    allowH2: booleanField(false),
    requisites: booleanField(false),
    seedFeeds: booleanField(true),
    cookies: customField<CookieJar | undefined>('a CookieJar', (v): v is CookieJar => v instanceof CookieJar),
    credentials: customField('an object of origins ("https://host[:port]") to "user:password"', isCredentials, () => ({})),
    now: functionField<() => number>(() => performance.now()),
  },
  (o) => (typeof o.agent !== 'string' ? 'agent is required: the User-Agent to send, e.g. "MyBot/1.0 (+https://example.com/bot)"' : undefined),
);

/** Request headers the fetcher owns; `headers` may not set them. */
const OWN_HEADERS = new Set(['user-agent', 'if-none-match', 'if-modified-since', 'host', 'accept-encoding']);

/** Whether the fetcher sets header `name` itself (so `headers` may not). */
export function isOwnHeader(name: string): boolean {
  return OWN_HEADERS.has(name.toLowerCase());
}

const NEVER = new AbortController().signal;

/**
 * The credentials a request to `u` carries: its origin's own, or those of its http:// form on
 * the default port (a site that moved to https: the upgrade keeps them secret; the reverse
 * never happens). Exported for its test only.
 */
export function credentialFor(credentials: Readonly<Record<string, string>>, u: URL): string | undefined {
  return credentials[u.origin] ?? (u.protocol === 'https:' && u.port === '' ? credentials[`http://${u.host}`] : undefined);
}

/** Origins as `URL#origin` writes them, to `user:password` (the password may be empty). */
function isCredentials(v: unknown): v is Readonly<Record<string, string>> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  return Object.entries(v).every(([origin, cred]) => {
    if (typeof cred !== 'string' || !cred.includes(':') || !/^[^\x00-\x1f\x7f]*$/.test(cred)) return false;
    try {
      const u = new URL(origin);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === origin;
    } catch {
      return false;
    }
  });
}

function isTlsOptions(v: unknown): v is TlsOptions {
  if (typeof v !== 'object' || v === null) return false;
  const { ca, rejectUnauthorized, ...rest } = v as Record<string, unknown>;
  const caOk = ca === undefined || typeof ca === 'string' || (Array.isArray(ca) && ca.every((c) => typeof c === 'string'));
  return caOk && (rejectUnauthorized === undefined || typeof rejectUnauthorized === 'boolean') && Object.keys(rest).length === 0;
}

/** A raw [name, value, …] list as undici's lower-cased header object (repeats become arrays). */
function headerMap(raw: readonly string[]): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const prev = out[name];
    // Pushed, not copied: a head may repeat a field tens of thousands of times within maxHeaderBytes.
    if (Array.isArray(prev)) prev.push(value);
    else out[name] = prev === undefined ? value : [prev, value];
  }
  return out;
}

/** Passes the body through, keeping a copy of the entity bytes for the HTTP/2 recording fallback. */
async function* teeEntity(body: AsyncIterable<Uint8Array>, capture: Capture): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    // Kept only when the socket's tap saw nothing (HTTP/2): HTTP/1 bytes are recorded from the wire.
    capture.addEntity(chunk);
    yield chunk;
  }
}

/**
 * A sitemap's (or feed's) entries as links, with their lastmod. An index is followed only near
 * the seeds (depth ≤ 1: an index, and one nested index below it), so a chain of indexes cannot
 * lead the crawl on.
 */
function sitemapLinks(sm: NonNullable<PageAnalysis['sitemap']>, depth: number, nofollow: boolean): Link[] {
  if (sm.kind === 'sitemapindex' && depth > 1) return [];
  return sm.entries.map((e): Link => ({ url: e.url, ...(e.lastmod !== undefined ? { lastmod: e.lastmod } : {}), ...(nofollow ? { nofollow: true } : {}) }));
}

function firstHeader(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * A header value that names a URL (Location, Link, Refresh), read as its sender meant it.
 * undici hands header bytes over one character per byte (Latin-1), but a server that puts raw
 * non-ASCII bytes in such a header sends UTF-8 — `Location: /café` from a CMS writing its
 * slugs unencoded — and browsers follow it as UTF-8; read as Latin-1 the redirect went to
 * `/caf%C3%83%C2%A9`, a page that does not exist. Bytes that are not valid UTF-8 stay as they
 * came (each a Latin-1 character).
 */
export function urlHeaderValue(value: string): string {
  if (!/[\x80-\xff]/.test(value) || /[^\x00-\xff]/.test(value)) return value;
  const bytes = Buffer.from(value, 'latin1');
  return isUtf8(bytes) ? bytes.toString('utf8') : value;
}

/** HTTP-date → epoch seconds, or undefined. */
function httpDateSeconds(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && ms >= 0 ? Math.floor(ms / 1000) : undefined;
}

/** Visible ASCII, space, tab and obs-text: what RFC 9110 §5.5 allows in a field value. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]+$/;

/** X-Robots-Tag directives for `token` (or for every agent): noindex / nofollow. */
function xRobots(values: string | string[] | undefined, token: string): { noindex: boolean; nofollow: boolean } {
  const result = { noindex: false, nofollow: false };
  for (const value of Array.isArray(values) ? values : values ? [values] : []) {
    let text = value.trim();
    // An agent's name may hold digits and dots (MJ12bot, 360Spider): its lines are for it alone.
    const m = /^([A-Za-z0-9_.-]+)\s*:(.*)$/.exec(text);
    if (m && !['noindex', 'nofollow', 'none', 'all', 'noarchive', 'nosnippet', 'unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview', 'notranslate', 'noimageindex', 'indexifembedded'].includes(m[1]!.toLowerCase())) {
      if (m[1]!.toLowerCase() !== token) continue;
      text = m[2]!;
    }
    for (const t of text.toLowerCase().split(/[\s,]+/)) {
      if (t === 'noindex' || t === 'none') result.noindex = true;
      if (t === 'nofollow' || t === 'none') result.nofollow = true;
    }
  }
  return result;
}

/** Headers a CDN marks its bot challenge page with (see `challengeOf`). */
const CHALLENGE_HEADERS = ['cf-mitigated', 'x-vercel-mitigated'] as const;

/**
 * The header by which a CDN marks an answer as its bot challenge page instead of the resource
 * (Cloudflare's `cf-mitigated: challenge` on a 403 or 503, Vercel's `x-vercel-mitigated:
 * challenge` on a 429): only a browser running the page's script gets past it, so the outcome
 * says so rather than leaving a bare 403 to puzzle over.
 */
function challengeOf(h: Record<string, string | string[] | undefined>): string | undefined {
  for (const name of CHALLENGE_HEADERS) if (firstHeader(h, name)?.trim().toLowerCase() === 'challenge') return name;
  return undefined;
}

/** Relations of a `Link` header taken as links of the page, as the HTML `<link>` elements are (links.ts). */
const LINKED_RELS = new Set(['next', 'prev', 'previous']);

/**
 * What a response's headers link (RFC 8288 `Link`, the way a PDF names its HTML page or an API
 * its next page; the `Refresh` header, the header form of a meta refresh): `rel=canonical` is
 * the canonical when the body named none; `rel=next`/`prev`, `rel=alternate` with a `hreflang`
 * and the refresh target are more links of the page (unless X-Robots-Tag says nofollow, as for
 * its other links: then marked so), as their HTML forms are.
 */
function headerLinks(base: { links?: readonly Link[]; canonical?: string }, h: Record<string, string | string[] | undefined>, url: string, policy: CanonPolicy | undefined, nofollow: boolean): void {
  const found: string[] = [];
  const values = h['link'];
  for (const value of Array.isArray(values) ? values : values ? [values] : []) {
    for (const l of parseLinkHeader(urlHeaderValue(value))) {
      const canonical = l.rel.includes('canonical');
      const linked = l.rel.some((r) => LINKED_RELS.has(r)) || (l.rel.includes('alternate') && l.params['hreflang'] !== undefined);
      if (!canonical && !linked) continue;
      const c = canonicalize(l.target, url, policy);
      if (c === null) continue;
      if (canonical && base.canonical === undefined) base.canonical = c;
      if (linked) found.push(c);
    }
  }
  const refresh = firstHeader(h, 'refresh');
  const parsed = refresh === undefined ? undefined : parseRefresh(urlHeaderValue(refresh));
  const target = parsed?.url === undefined ? null : canonicalize(parsed.url, url, policy);
  if (target !== null) found.push(target);
  const given = base.links;
  let links = given ?? [];
  // A refresh header is read before the body's: the browser acts on it, not on a meta refresh.
  // Prompt and naming a URL, it is the page's redirect (`Link.refresh`, given to a body link to
  // the same URL too); any other (a slow timer, a reload) leaves the page none.
  const refreshUrl = parsed !== undefined && parsed.delaySeconds <= REDIRECT_REFRESH_MAX_DELAY_S ? target : null;
  if (parsed !== undefined && links.some((l) => (l.url === refreshUrl) !== (l.refresh === true))) {
    links = links.map((l) => (l.url === refreshUrl ? { ...l, refresh: true } : l.refresh === true ? { ...l, refresh: undefined } : l));
  }
  const have = new Set(links.map((l) => l.url));
  const more: Link[] = [];
  for (const u of found) {
    if (have.has(u)) continue;
    have.add(u);
    const link: { url: string; nofollow?: true; refresh?: true } = { url: u };
    if (nofollow) link.nofollow = true;
    if (u === refreshUrl) link.refresh = true;
    more.push(link);
  }
  if (more.length > 0 || (given !== undefined && links !== given)) base.links = [...links, ...more];
}

function errorCode(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') return err.code;
  return '';
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/**
 * Error codes of a request the client refused before sending anything: undici's argument
 * and capability checks, Node's header-token and character checks.
 */
const LOCAL_CODES = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED', 'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_VALUE', 'ERR_INVALID_CHAR', 'ERR_INVALID_HTTP_TOKEN']);

/**
 * Classifies a thrown transport error. Exported for its test only (not re-exported): a
 * local refusal cannot be provoked through the validated options.
 */
export function classify(err: unknown, callerAborted: boolean, totalTimedOut: boolean, o: Readonly<Pick<HttpFetcherOptions, 'connectTimeoutMs' | 'headersTimeoutMs' | 'bodyTimeoutMs' | 'totalTimeoutMs' | 'maxHeaderBytes'>>): [FetchErrorKind, string] {
  if (callerAborted) return ['aborted', 'aborted by the caller'];
  if (totalTimedOut) return ['timeout', `total timeout after ${o.totalTimeoutMs} ms`];
  const code = errorCode(err);
  const cause = err instanceof Error && err.cause !== undefined ? errorCode(err.cause) : '';
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      // No connection in time (a network that drops packets, a firewall that drops SYNs, a full
      // accept queue, a TLS handshake that stalls): the server never saw this request, so it is
      // no fault of the page. Read as a page's timeout, each try during a silent network drop
      // was charged to its URL and pages were given up while nothing was wrong with them; as
      // 'connect' it is the host's outage (src/frontier `OUTAGE_GRACE_MS`), and the crawl's own
      // network being down when nothing answers (src/engine `Connectivity`).
      // Through a proxy, the tunnel's own words name the proxy (it is the proxy that did not answer).
      return ['connect', /^proxy /.test(errorMessage(err)) ? `${errorMessage(err)} (connect timeout after ${o.connectTimeoutMs} ms)` : `connect timeout after ${o.connectTimeoutMs} ms (the request was never sent)`];
    case 'UND_ERR_HEADERS_TIMEOUT':
      return ['timeout', `headers timeout after ${o.headersTimeoutMs} ms`];
    case 'UND_ERR_BODY_TIMEOUT':
      return ['timeout', `body timeout: no data for ${o.bodyTimeoutMs} ms`];
    case 'UND_ERR_HEADERS_OVERFLOW':
      return ['protocol', `response headers exceed ${o.maxHeaderBytes} bytes`];
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
      // Conflicting Content-Length headers, or a body longer or shorter than the one given
      // (RFC 9112 §6.3: an unrecoverable framing error).
      return ['protocol', `${code}: ${errorMessage(err)}`];
    case 'MEGURI_PROXY_UPSTREAM':
      // The proxy could not reach the server, or opened no tunnel in time (src/fetch/proxy.ts):
      // a connection not made.
      return ['connect', errorMessage(err)];
    case 'ECONNREFUSED':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EADDRNOTAVAIL':
      return ['connect', `${code}: ${errorMessage(err)}`];
    case 'ECONNRESET':
      // The connection was made, then reset before an answer: the server is there (a WAF
      // refusing this request, a worker crashing on it, a kept-alive socket closed under it),
      // so it is no outage. Read as one, a page reset every time held a one-shot crawl's tail
      // for the outage grace's hour (src/frontier `OUTAGE_GRACE_MS`).
      return ['network', `${code}: ${errorMessage(err)} (the connection was reset before an answer)`];
  }
  if (LOCAL_CODES.has(code)) {
    return ['local', `request not sent: the HTTP client refused it locally (${code}: ${errorMessage(err)}); check the crawler's agent and headers`];
  }
  // undici's HTTPParserError carries an HPE_ code only for some parser errors (a bad chunk size has none).
  if (code.startsWith('HPE_') || cause.startsWith('HPE_') || (err instanceof Error && err.name === 'HTTPParserError')) return ['protocol', `invalid HTTP response: ${errorMessage(err)}`];
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') {
    // OpenSSL's words for a TLS handshake answered in plain text: an http:// port asked for https://.
    return ['tls', `${code}: the server did not answer in TLS — a plain-HTTP port? (try the http:// URL)`];
  }
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) {
    // A certificate the client does not trust is the operator's to settle, not a network fault.
    const untrusted = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code) && code !== 'ERR_TLS_CERT_ALTNAME_FORMAT';
    return ['tls', `${code}: ${errorMessage(err)}${untrusted ? ' (to trust it: tls.ca or --ca FILE names its issuer; tls.rejectUnauthorized false or --insecure skips the check)' : ''}`];
  }
  return ['network', code ? `${code}: ${errorMessage(err)}` : errorMessage(err)];
}

interface Validators {
  etag?: string | undefined;
  lastModified?: number | undefined;
}

/** The undici-based fetcher; see the module comment. Close it with `close()` when done. */
export class HttpFetcher implements Fetcher {
  readonly #o: Readonly<HttpFetcherOptions>;
  readonly #dns: DnsCache;
  readonly #token: string;
  readonly #extraHeaders: Record<string, string>;
  readonly #pools = new Map<string, Pool>();
  readonly #defaultMode: Mode;
  /** Sitemap bodies being read past a page's cap now (`MAX_SITEMAP_READS`). */
  #sitemapReads = 0;
  readonly #analyzer: PageAnalyzer;
  readonly #proxy: ProxyTunnel | undefined;
  /** `credentials`, and those added since (`addCredentials`). */
  readonly #credentials: Record<string, string>;
  #closed = false;

  constructor(options: Partial<HttpFetcherOptions> & Pick<HttpFetcherOptions, 'agent'>) {
    this.#o = resolveOptions(options);
    // A server closing a connection while a slow body read has undici's parser paused must not
    // end the process (src/fetch/undici-guard.ts).
    guardPausedParserEnd();
    this.#token = productToken(this.#o.agent).toLowerCase();
    this.#dns = this.#o.dns ?? new DnsCache();
    const extra: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.#o.headers)) {
      const name = k.toLowerCase();
      if (isOwnHeader(name)) throw new InvalidArgumentError(`HttpFetcher.headers: ${JSON.stringify(k)} is set by the fetcher itself`);
      extra[name] = v;
    }
    this.#extraHeaders = extra;
    this.#credentials = { ...this.#o.credentials };
    this.#defaultMode = { maxBodyBytes: this.#o.maxBodyBytes, parseLinks: this.#o.parseLinks, analyze: true, ownCap: true };
    // Node-only class: the packaged wasm (fingerprint, simhash) loads synchronously, once.
    if (!isCoreLoaded()) loadCoreSync();
    this.#analyzer = new PageAnalyzer({ threads: this.#o.analyzeThreads, inlineBelowBytes: this.#o.analyzeInlineBelowBytes });
    this.#proxy = this.#o.proxy === undefined ? undefined : new ProxyTunnel(this.#o.proxy, this.#o.connectTimeoutMs);
    if (this.#o.record) retainRecorder();
  }

  /** Where page bodies were analyzed so far: inline, on a worker thread, or inline after a thread failed. */
  get analysisStats(): PageAnalyzerStats {
    return this.#analyzer.stats;
  }

  /** The DnsCache this fetcher resolves through. */
  get dns(): DnsCache {
    return this.#dns;
  }

  /** Connection pools currently open. */
  get poolCount(): number {
    return this.#pools.size;
  }

  /** Fetches `req.url` (see the module comment). Never rejects for network or HTTP trouble. */
  fetch(req: FetchRequest, signal: AbortSignal = NEVER): Promise<Outcome> {
    if (typeof req !== 'object' || req === null || typeof req.url !== 'string') {
      throw new InvalidArgumentError(`HttpFetcher.fetch: expected a FetchRequest with a url string, received ${req === null ? 'null' : typeof req}`);
    }
    return this.#run(req.row, req.url, req.ip, { etag: req.etag, lastModified: req.lastModified }, signal, this.#defaultMode, req.depth);
  }

  /**
   * Fetches a bare URL (row -1) with optional validators, pinned address and caps. For
   * robots.txt use `robotsFetch()`.
   */
  fetchUrl(url: string, signal: AbortSignal = NEVER, options: FetchUrlOptions = {}): Promise<Outcome> {
    if (typeof url !== 'string') throw new InvalidArgumentError(`HttpFetcher.fetchUrl: expected a URL string, received ${typeof url}`);
    return this.#run(
      -1,
      url,
      options.ip,
      { etag: options.etag, lastModified: options.lastModified },
      signal,
      {
        maxBodyBytes: options.maxBodyBytes ?? this.#o.maxBodyBytes,
        parseLinks: options.parseLinks ?? this.#o.parseLinks,
        analyze: options.analyze ?? true,
        ownCap: options.maxBodyBytes === undefined,
      },
      0,
    );
  }

  /**
   * Adds HTTP Basic credentials by origin (as the `credentials` option; an origin given again
   * takes the new ones): for seeds with a user:password given while the crawl runs (`Engine.add`).
   */
  addCredentials(credentials: Readonly<Record<string, string>>): void {
    if (!isCredentials(credentials)) throw new InvalidArgumentError(`HttpFetcher.addCredentials: expected an object of origins ("https://host[:port]") to "user:password", with no control characters (the values are not shown: they hold passwords)`);
    Object.assign(this.#credentials, credentials);
  }

  /**
   * The function RobotsCache's `fetch` option wants: a bare GET whose wire bytes are capped
   * at the robots parse limit, without link extraction. A cut marks the outcome `truncated`,
   * and RobotsCache then drops the partial last line.
   */
  robotsFetch(): RobotsFetch {
    return (url, signal) => this.fetchUrl(url, signal, { maxBodyBytes: ROBOTS_PARSE_LIMIT_BYTES, analyze: false });
  }

  /** Closes every pool, waiting for requests in flight. The fetcher cannot be used afterwards. */
  async close(): Promise<void> {
    if (!this.#closed && this.#o.record) releaseRecorder();
    this.#closed = true;
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all([...pools.map((p) => p.close().catch(() => undefined)), this.#analyzer.close()]);
    await this.#proxy?.close().catch(() => undefined);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** A fetch in `mode` may have its body caps raised for a sitemap (`#sitemapCaps`). */
  #mayRaise(mode: Mode): boolean {
    const o = this.#o;
    return mode.parseLinks && mode.analyze && mode.ownCap && (o.maxSitemapBytes > mode.maxBodyBytes || o.maxSitemapBytes > o.maxDecodedBytes);
  }

  /**
   * The body caps a sitemap may raise (`maxSitemapBytes`): only for a fetch that reads links
   * and analyzes its body under the fetcher's own cap (robots.txt does neither; a caller's cap
   * for one fetch stands), only when they are above the page caps, and for at most
   * `MAX_SITEMAP_READS` bodies at once. The WARC capture grows with them, so the archived
   * sitemap is whole too. A sitemap that fails past the page caps (a total timeout on a slow
   * server, a reset) keeps what was read — more than the page cap ever kept — unless the
   * caller aborted.
   */
  #sitemapCaps(url: URL, mode: Mode, contentType: string | undefined, capture: Capture | undefined, signal: AbortSignal): SitemapRead | undefined {
    const o = this.#o;
    const limit = o.maxSitemapBytes;
    if (!this.#mayRaise(mode)) return undefined;
    let holding = false;
    let finished = false;
    let stalled = false;
    const caps: BodyCaps = {
      raise: (head) => {
        if (finished || !isSitemapDocument(contentType, url.pathname, head)) {
          capture?.decide();
          return undefined;
        }
        capture?.raise(limit);
        return { maxWireBytes: limit, maxDecodedBytes: limit };
      },
      // The budget is spent only by a sitemap larger than the page cap, as it passes it.
      claim: () => {
        if (finished || this.#sitemapReads >= MAX_SITEMAP_READS) {
          // Held to the page cap: so is the recording (the record is cut, as the read is).
          capture?.decide(mode.maxBodyBytes);
          return false;
        }
        this.#sitemapReads++;
        holding = true;
        return true;
      },
      keepOnFailure: (err) => {
        if (signal.aborted) return false;
        stalled = errorCode(err) === 'UND_ERR_BODY_TIMEOUT';
        return true;
      },
    };
    return {
      caps,
      stalled: () => stalled,
      done: () => {
        if (holding) this.#sitemapReads--;
        holding = false;
        finished = true;
      },
    };
  }

  #pool(origin: string, ip: string): Pool {
    const key = `${origin}|${ip}`;
    const existing = this.#pools.get(key);
    if (existing) {
      lruTouch(this.#pools, key, existing);
      return existing;
    }
    const o = this.#o;
    const dial = buildConnector({
      timeout: o.connectTimeoutMs,
      // ALPN is offered by the connector: with a custom one, the Pool's allowH2 alone does not.
      ...(o.allowH2 ? { allowH2: true } : {}),
      ...(o.tls?.ca !== undefined ? { ca: typeof o.tls.ca === 'string' ? o.tls.ca : [...o.tls.ca] } : {}),
      ...(o.tls?.rejectUnauthorized !== undefined ? { rejectUnauthorized: o.tls.rejectUnauthorized } : {}),
    });
    // Dial the pinned address; `host` (hostname:port) still names the server for SNI and the
    // certificate check, and the Pool's origin still writes the Host header.
    const proxy = this.#proxy;
    const connect: buildConnector.connector =
      proxy === undefined
        ? (opts, callback) => dial({ ...opts, hostname: ip }, callback)
        : (opts, callback) => {
            // Through the proxy: a tunnel to the checked address, then TLS over it for https.
            const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
            proxy.open(ip, port).then(
              (socket) => (opts.protocol === 'https:' ? dial({ ...opts, hostname: ip, httpSocket: socket }, callback) : callback(null, socket)),
              (err: Error) => callback(err, null),
            );
          };
    const pool = new Pool(origin, {
      connections: o.connectionsPerOrigin,
      pipelining: 1,
      keepAliveTimeout: o.keepAliveTimeoutMs,
      keepAliveMaxTimeout: Math.max(o.keepAliveTimeoutMs, 60_000),
      maxHeaderSize: o.maxHeaderBytes,
      allowH2: o.allowH2,
      headersTimeout: o.headersTimeoutMs,
      bodyTimeout: o.bodyTimeoutMs,
      connect,
    });
    // An evicted pool finishes the requests it holds, then closes.
    lruSet(this.#pools, key, pool, o.maxOrigins, (old) => void old.close().catch(() => undefined));
    return pool;
  }

  async #address(hostname: string, pinned: string | undefined): Promise<{ ip: string } | { kind: FetchErrorKind; error: string }> {
    const allowPrivate = this.#o.allowPrivate;
    let candidates: string[];
    if (ipVersion(hostname) !== 0) candidates = [hostname];
    else if (pinned !== undefined) candidates = [pinned];
    else {
      const answer = await this.#dns.lookup(hostname);
      if (!answer.ok) return { kind: 'dns', error: `dns ${answer.code} for ${hostname}: ${answer.error}` };
      candidates = answer.addresses.map((a) => a.address);
    }
    let firstReason: string | undefined;
    for (const ip of candidates) {
      const reason = refusalReason(ip, allowPrivate);
      if (reason === undefined) return { ip };
      firstReason ??= reason;
    }
    return { kind: 'refused', error: `refused ${hostname}: ${firstReason ?? 'no address'}${allowPrivate ? '' : ' (allowPrivate, or --allow-private, permits it)'}` };
  }

  async #run(
    row: number,
    url: string,
    pinned: string | undefined,
    validators: Validators,
    signal: AbortSignal,
    mode: Mode,
    depth: number,
  ): Promise<Outcome> {
    const o = this.#o;
    const t0 = o.now();
    const fail = (errorKind: FetchErrorKind, error: string, ip?: string): Outcome => ({
      row,
      url,
      status: 0,
      error,
      errorKind,
      ip,
      fetchMs: o.now() - t0,
    });
    if (this.#closed) return fail('aborted', 'the fetcher is closed');
    if (url.length > o.maxUrlLength) return fail('url', `URL of ${url.length} characters exceeds maxUrlLength ${o.maxUrlLength}`);
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return fail('url', `not a URL: ${JSON.stringify(url.slice(0, 200))}`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return fail('url', `unsupported scheme ${u.protocol}`);
    if (signal.aborted) return fail('aborted', 'aborted by the caller');
    const hostname = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    const pinnedIp = pinned?.startsWith('[') ? pinned.slice(1, -1) : pinned;
    const where = await this.#address(hostname, pinnedIp);
    if ('kind' in where) return fail(where.kind, where.error, pinnedIp);
    const ip = where.ip;

    const headers: Record<string, string> = {
      accept: o.accept,
      ...this.#extraHeaders,
      'user-agent': o.agent,
      'accept-encoding': ACCEPT_ENCODING,
    };
    // Stored validators came from a server: send them only when they are valid header text.
    if (validators.etag && HEADER_VALUE.test(validators.etag)) headers['if-none-match'] = validators.etag;
    if (validators.lastModified !== undefined && Number.isFinite(validators.lastModified) && validators.lastModified >= 0) {
      headers['if-modified-since'] = new Date(validators.lastModified * 1000).toUTCString();
    }
    const credential = credentialFor(this.#credentials, u);
    if (credential !== undefined && headers['authorization'] === undefined) headers['authorization'] = `Basic ${Buffer.from(credential, 'utf8').toString('base64')}`;
    const jar = o.cookies;
    const cookie = jar?.header(u);
    if (cookie !== undefined) headers['cookie'] = headers['cookie'] === undefined ? cookie : `${headers['cookie']}; ${cookie}`;

    // One controller per fetch, aborted by the caller's signal or the total timeout; both
    // hooks are removed in `finally`, so a long-lived caller signal collects no listeners and
    // no timer outlives its fetch.
    const controller = new AbortController();
    let timedOut = false;
    let raising: SitemapRead | undefined;
    const onAbort = (): void => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`total timeout after ${o.totalTimeoutMs} ms`));
    }, o.totalTimeoutMs);
    const combined = controller.signal;
    let latencyMs: number | undefined;
    // The recording's closer once the headers arrived: what was received when the body broke off.
    let received: ((complete: boolean) => HttpExchange | undefined) | undefined;
    // Recording: the body up to the body cap as the body reader counts it (entity bytes, framing
    // aside), the head bounded by what undici's header cap admits (`Capture`).
    const capture = o.record ? beginCapture(mode.maxBodyBytes, o.maxHeaderBytes) : undefined;
    // The socket's tap reads ahead of the body read, the more so through a decoder: a fetch whose
    // cap a sitemap may raise is recorded on past the page cap until the read says whether it was
    // raised (`#sitemapCaps`), so a raise that comes late still finds the record whole.
    if (capture !== undefined && this.#mayRaise(mode)) capture.defer(o.maxSitemapBytes);
    try {
      const res = await this.#pool(u.origin, ip).request({
        path: `${u.pathname}${u.search}`,
        method: 'GET',
        headers,
        signal: combined,
        headersTimeout: o.headersTimeoutMs,
        bodyTimeout: o.bodyTimeoutMs,
        ...(capture !== undefined ? { opaque: capture, responseHeaders: 'raw' as const } : {}),
      });
      latencyMs = o.now() - t0;
      // With raw headers undici hands a flat [name, value, …] list in received order.
      const raw = capture !== undefined ? (res.headers as unknown as string[]) : undefined;
      const h = raw !== undefined ? headerMap(raw) : res.headers;
      const exchange = (complete: boolean): HttpExchange | undefined =>
        capture === undefined || raw === undefined ? undefined : finishCapture(capture, res.statusCode, res.statusText ?? '', raw, 'HTTP/2', complete);
      received = exchange;
      const status = res.statusCode;
      // Every answer's cookies count, a redirect's above all (a cookie check sets one and
      // sends the client back to the page it asked for).
      if (jar !== undefined) jar.store(u, h['set-cookie']);
      const contentType = firstHeader(h, 'content-type');
      const base: {
        -readonly [K in keyof Outcome]: Outcome[K];
      } = {
        row,
        url,
        status,
        retryAfter: firstHeader(h, 'retry-after'),
        etag: firstHeader(h, 'etag'),
        lastModified: httpDateSeconds(firstHeader(h, 'last-modified')),
        serverDate: httpDateSeconds(firstHeader(h, 'date')),
        contentType,
        ip,
        latencyMs,
      };
      if (status >= 300 && status < 400 && status !== 304) {
        const header = firstHeader(h, 'location');
        const location = header === undefined ? undefined : urlHeaderValue(header);
        if (location !== undefined) {
          let resolved: string | undefined;
          try {
            resolved = new URL(location, u).href;
          } catch {
            resolved = undefined;
          }
          if (resolved === undefined) {
            base.error = `unusable Location ${JSON.stringify(location.slice(0, 200))}`;
          } else if (resolved.length > o.maxUrlLength) {
            base.error = `Location of ${resolved.length} characters exceeds maxUrlLength ${o.maxUrlLength}`;
          } else {
            base.location = resolved;
          }
        }
      }
      const challenge = challengeOf(h);
      if (challenge !== undefined && status >= 400) base.error = `a bot challenge (${challenge}: challenge): the site wants a browser to run its script, and meguri runs none`;
      if (status < 200 || status >= 300) {
        if (capture === undefined) await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
        else {
          capture.decide(); // no sitemap: the page cap
          // Recorded, an error page or a redirect's body is part of the archive: read up to the
          // body cap like any page, and a cut or a failure is said (in the record and the outcome).
          const cut = await drainBody(teeEntity(res.body, capture), mode.maxBodyBytes).then(
            (whole) => (whole ? undefined : ('cap' as const)),
            (err: unknown) => (timedOut || errorCode(err) === 'UND_ERR_BODY_TIMEOUT' ? ('time' as const) : ('disconnect' as const)),
          );
          base.exchange = exchange(cut === undefined);
          if (cut !== undefined) {
            base.truncated = true;
            base.cutAt = cut;
          }
        }
        base.fetchMs = o.now() - t0;
        return base;
      }
      const source = capture === undefined ? res.body : teeEntity(res.body, capture);
      raising = this.#sitemapCaps(u, mode, contentType, capture, signal);
      const read = await readBody(source, parseContentEncoding(firstHeader(h, 'content-encoding')), mode.maxBodyBytes, o.maxDecodedBytes, raising?.caps);
      base.fetchMs = o.now() - t0;
      // A body that failed to decode was still read to its end: the recording is whole.
      if (capture !== undefined) base.exchange = exchange(!read.truncated);
      if (read.truncated) {
        base.truncated = true;
        base.cutAt = !read.raised ? 'cap' : read.cutBy !== 'failure' ? 'sitemapCap' : timedOut || raising?.stalled() === true ? 'time' : 'disconnect';
        // Validators of a part would let a recrawl's 304 keep the rest unread: the next fetch asks
        // in full. So for a sitemap held to the page cap only because two were being read.
        if (read.cutBy === 'failure' || read.refused) {
          base.etag = undefined;
          base.lastModified = undefined;
        }
      }
      if (read.error !== undefined) {
        base.error = read.error;
        base.errorKind = 'body';
      }
      const robotsHeader = xRobots(h['x-robots-tag'], this.#token);
      if (robotsHeader.noindex) base.noindex = true;
      if (robotsHeader.nofollow) base.nofollow = true;
      const bytes = read.bytes;
      if (o.keepBody) base.body = bytes;
      let sitemap: PageAnalysis['sitemap'];
      if (bytes.length > 0 && !read.encoded && mode.analyze) {
        // Computed once, here (on a worker thread for large bodies): the frontier and
        // freshness only compare them.
        const found = await this.#analyzer.analyze(
          { url, bytes, contentType, token: this.#token, maxLinks: o.maxLinks, canonPolicy: o.canonPolicy, parseLinks: mode.parseLinks, requisites: o.requisites, sitemaps: mode.parseLinks, feeds: mode.parseLinks && o.seedFeeds && depth === 0 },
          signal,
        );
        base.contentFp = found.contentFp;
        if (found.simhash !== undefined) base.simhash = found.simhash;
        if (found.churnFp !== undefined) base.churnFp = found.churnFp;
        if (found.noindex) base.noindex = true;
        if (found.nofollow === true) base.nofollow = true;
        if (found.links !== undefined) {
          base.links = robotsHeader.nofollow ? found.links.map((l): Link => ({ ...l, nofollow: true })) : found.links;
        }
        if (found.canonical !== undefined) base.canonical = found.canonical;
        if (found.linksCapped === true) base.linksCapped = true;
        if (found.loginForm === true) base.loginForm = true;
        if (found.selfLinked === true) base.selfLinked = true;
        if (found.sitemap !== undefined) sitemap = found.sitemap;
      }
      if (mode.parseLinks) headerLinks(base, h, url, o.canonPolicy, robotsHeader.nofollow);
      if (sitemap !== undefined) {
        base.links = sitemapLinks(sitemap, depth, robotsHeader.nofollow);
        base.sitemap = true;
      }
      return base;
    } catch (err) {
      const [kind, message] = classify(err, signal.aborted, timedOut && !signal.aborted, o);
      if (latencyMs === undefined) return fail(kind, message, ip);
      // The headers had arrived: a connection that broke or a framing that went bad now is the
      // page's failure (a script crashing mid-answer), not the server's silence. A body that
      // stalls past bodyTimeoutMs stays a timeout: a slow server is a sign of load.
      const cut = kind === 'network' || kind === 'connect' || kind === 'protocol';
      // The part received is kept for the archive (a WARC response record marked truncated):
      // after every retry failed the same way, it is all there is of the page.
      const partial = cut || kind === 'timeout' ? received?.(false) : undefined;
      return {
        ...fail(cut ? 'incomplete' : kind, cut ? `the response broke off after its headers (${message})` : message, ip),
        latencyMs,
        ...(partial !== undefined ? { exchange: partial } : {}),
      };
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      // A raised sitemap read holds its share until the body is analyzed, not only read.
      raising?.done();
    }
  }
}
