/**
 * src/fetch: everything between a `FetchRequest` and its `Outcome` — the network side the
 * frontier never touches (DESIGN §9b).
 *
 * Owns: the `Fetcher` interface and `HttpFetcher` on undici (pinned, pooled, capped, never
 * following redirects); robots.txt (`parseRobots`, the pure RFC 9309 matcher, and
 * `RobotsCache`, its fetch/TTL/failure policy); `DnsCache`; destination safety
 * (`classifyAddress`, `isPublicAddress`); link extraction (`extractLinks`); body caps,
 * decoding and the content fingerprint; the run's cookies (`CookieJar`).
 *
 * Never: decide what to fetch or when (the frontier and politeness do), follow a redirect of
 * a content URL (the state machine records it), read the wall clock deep inside (clocks are
 * options), or throw for anything a remote server does — a hostile server produces an
 * Outcome or a verdict, never an exception.
 *
 * Node-only: undici, node:dns and node:zlib. Only `./robots.js` (`parseRobots` and its
 * helpers), which imports nothing from Node, is re-exported from the browser entry too.
 */
export {
  type AddressClass,
  classifyAddress,
  isPublicAddress,
  ipVersion,
  refusalReason,
} from './address.js';
export * from './robots.js';
export {
  type RobotsCacheOptions,
  type RobotsEntry,
  type RobotsFetch,
  type RobotsFetchResult,
  type RobotsReason,
  type RobotsSnapshot,
  type RobotsState,
  type RobotsVerdict,
  RobotsCache,
  shiftRobotsSnapshot,
} from './robots-cache.js';
export {
  type DnsCacheOptions,
  type DnsResult,
  type DnsStats,
  type ResolvedAddress,
  type Resolver,
  DnsCache,
  lookupResolver,
  normalizeHostname,
  systemResolver,
} from './dns.js';
export { DEFAULT_MAX_LINKS, type ExtractLinksOptions, type ExtractedLinks, LinkExtractor, extractLinks } from './links.js';
export { ACCEPT_ENCODING, BODY_HEAD_BYTES, type BodyCaps, type BodyRead, decodeText, readBody, sniffCharset } from './body.js';
export { type Cookie, type CookieJarOptions, CookieJar, parseCookieDate } from './cookies.js';
export { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES, DEFAULT_STALL_TIMEOUT_MS, type FetchUrlOptions, type Fetcher, type HttpFetcherOptions, HttpFetcher, type TlsOptions, isHeaderField, isOwnHeader } from './http.js';
