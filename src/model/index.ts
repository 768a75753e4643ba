/**
 * src/model: the vocabulary every layer shares — URL statuses, host flags, host grouping,
 * and the messages that cross the frontier's boundary (`FetchRequest` out, `Outcome` and
 * `Discovery` in), and the outcome vocabulary (`outcomeClass` and its transition table, in
 * outcome.ts). It holds types, small constants and pure table look-ups only, so any module
 * may import it without pulling in behaviour.
 */
import type { KeyArray } from '../core/keys.js';

export { UrlStatus, URL_STATUS_NAMES, isLiveStatus } from './status.js';
export {
  OUTCOME_TRANSITIONS,
  OutcomeClass,
  type OutcomeTransition,
  classOfOutcome,
  isSelfRedirect,
  countsAsPage,
  isUnchangedSitemap,
  refreshTargetOf,
  isOk,
  isTransientStatus,
  outcomeClass,
} from './outcome.js';

/** Bit flags on a host record. */
export const HostFlags = {
  /** The trap detector flagged the host; its discoveries must pass the pattern heuristics. */
  TrapSuspect: 1 << 0,
  /** Pinned at the politeness ceiling: treated as dead until it recovers. */
  Dead: 1 << 1,
  /** robots.txt could not be fetched (5xx or unreachable): content fetches wait. */
  RobotsUnreachable: 1 << 2,
  /**
   * The host's next start counts from its last answer, not its last start: that answer was a
   * failure (a timeout, a 503, a 500 held as a page fault) and came later than one interval after
   * the request left. Tells such a window apart from a Retry-After hold, which also lies past
   * start + interval.
   */
  SpacedFromAnswer: 1 << 3,
} as const;
export type HostFlags = (typeof HostFlags)[keyof typeof HostFlags];

/** How hosts are grouped into one politeness/budget unit and one HostKey (DESIGN §5). */
export type HostGrouping = 'registrable' | 'host' | 'origin';

/** What the frontier hands a fetcher: one URL to fetch now. */
export interface FetchRequest {
  /** Row of the URL in the frontier's table (opaque to fetchers; echoed back in the outcome). */
  readonly row: number;
  /** The URL's key (4 lanes). */
  readonly key: KeyArray;
  /** Canonical URL to fetch. */
  readonly url: string;
  /** Host group name the URL belongs to. */
  readonly host: string;
  /** Resolved IP to pin the connection to, when DNS is on. */
  readonly ip?: string | undefined;
  /** Stored validators for a conditional GET. */
  readonly etag?: string | undefined;
  /** Stored Last-Modified, epoch seconds. */
  readonly lastModified?: number | undefined;
  /** Link depth from the nearest seed. */
  readonly depth: number;
  /** Monotonic ms at which the frontier dispatched it. */
  readonly dispatchedAtMs: number;
  /** Content fingerprint of the previous fetch, when there was one (to classify the change). */
  readonly prevContentFp?: bigint | undefined;
  /** Simhash of the previous fetch, when there was one. */
  readonly prevSimhash?: bigint | undefined;
  /** Churn fingerprint of the previous fetch, when it had one (see `Outcome.churnFp`). */
  readonly prevChurnFp?: bigint | undefined;
  /**
   * A fetch again of a crawled page whose depth fell under a depth cap (a shorter path found
   * after its fetch): sent without validators, so its links are passed on at the new depth.
   */
  readonly relink?: true | undefined;
  /**
   * The URL's last fetch with a body was a sitemap, sitemap index or feed (`Outcome.sitemap`):
   * a 304 to this request is a sitemap's answer too, no page (the crawl engine marks it so).
   */
  readonly sitemap?: true | undefined;
}

/** A link found on a fetched page, already canonicalized. */
export interface Link {
  readonly url: string;
  /** rel=nofollow on the anchor (recorded; the engine does not follow it). */
  readonly nofollow?: boolean;
  /** A page requisite (image, script, stylesheet…) rather than a link (`requisites` option). */
  readonly requisite?: boolean | undefined;
  /**
   * The syndication feed the page names for autodiscovery (`<link rel=alternate
   * type=application/rss+xml>`; `HttpFetcherOptions.seedFeeds`), not a link on the page: a
   * page whose only links are feeds still has none a reader follows (an app shell, say).
   */
  readonly feed?: boolean | undefined;
  /**
   * The page's refresh target: of the refresh a browser acts on (a `Refresh` header, else the
   * first `<meta http-equiv=refresh>` outside a `<template>`), when it is prompt (≤ 10 s) and
   * names a URL. A redirect written in the page, as browsers follow it (and Heritrix, as a
   * redirect hop): followed at the page's own depth, not one deeper — a splash page's home page
   * is still the seed's depth — for up to `maxRedirects` refreshes in a row (in a cluster, within
   * the page's host group); and a seed's refresh target out of the scope becomes a seed, as a
   * seed's HTTP redirect target does (a site that moved domains with a meta refresh). On an
   * ordinary link to the same URL too, the mark stays. What the frontier is told carries one
   * mark per page, whatever a fetcher set (`Page.links` are the fetcher's).
   */
  readonly refresh?: boolean | undefined;
  /**
   * The link's fragment names an element of the page it is on (`viewtopic.php?p=7#p7` on the
   * topic page that holds post 7, `<div id="p7">`): likely a permalink to a spot on this very
   * page. The engine learns per URL shape whether such links lead to copies (`AnchorCopies`).
   */
  readonly anchored?: boolean | undefined;
  /** A sitemap's `<lastmod>` for the URL, epoch seconds (a change hint; see src/sitemap). */
  readonly lastmod?: number | undefined;
  /**
   * A question the engine asks the site, not a link found on the page: a made-up URL whose answer
   * tells a page's copies from the site's not-found page (`EngineOptions.soft404Probe`). The
   * frontier takes it at the page's depth and before the host's other queued URLs
   * (`Discovery.urgent`): the answer settles how the URLs after it are read. Fetchers never set it.
   */
  readonly probe?: true | undefined;
}

/**
 * Why a fetch got no usable HTTP response (status 0), or — for `body` only — why a response's
 * body could not be decoded. Lets the state machine tell permanent failures (`url`,
 * `refused`, a negative `dns` answer) from transient ones without parsing messages.
 */
export type FetchErrorKind =
  /** The URL is malformed, not http(s), or longer than the fetcher's cap. */
  | 'url'
  /** The destination address is not allowed (private, loopback, … without `allowPrivate`). */
  | 'refused'
  /** The name did not resolve. */
  | 'dns'
  /**
   * No connection could be made: refused, host or network unreachable, or not made within the
   * connect timeout (TLS handshake included). The server never saw the request.
   */
  | 'connect'
  /** The TLS handshake failed (certificate, protocol). */
  | 'tls'
  /** A headers, body-idle or total timeout: the request was sent (a connect timeout is 'connect'). */
  | 'timeout'
  /** The response was not valid HTTP, or its headers exceeded the size cap. */
  | 'protocol'
  /** The caller aborted the fetch. */
  | 'aborted'
  /**
   * The request was never sent: the HTTP client refused it locally (an invalid header value,
   * an unsupported option). A fault of the crawler's configuration, not of the server.
   */
  | 'local'
  /** Any other transport failure: a connection reset or closed before a response, … */
  | 'network'
  /**
   * The response's headers arrived, then the connection broke or its framing went bad before
   * the body ended (a server crashing mid-page, a bad chunk). Status 0: the page is fetched
   * again; politeness reads it as a fault of this page, not a sign of load
   * (src/politeness `isPageFault`).
   */
  | 'incomplete'
  /** A response arrived but its body could not be (fully) decoded; status is kept. */
  | 'body';

/** Every `FetchErrorKind`, for validating one read back from a file. Keep in sync with the type. */
export const FETCH_ERROR_KINDS: readonly FetchErrorKind[] = Object.freeze([
  'url',
  'refused',
  'dns',
  'connect',
  'tls',
  'timeout',
  'protocol',
  'aborted',
  'local',
  'network',
  'incomplete',
  'body',
] as const);

/** What comes back from a fetch: the frontier, politeness and freshness read it. */
export interface Outcome {
  /** Echo of `FetchRequest.row`. */
  readonly row: number;
  /** Echo of the URL fetched. */
  readonly url: string;
  /**
   * The crawl was offline when this outcome came — its own network down, not the server's
   * (the crawl engine's `Connectivity`, src/engine/connectivity.ts): a failure to connect or to
   * resolve then spends no retry of its URL. Journaled with the outcome, so a replay after a
   * crash decides as the live run did.
   */
  readonly offline?: boolean | undefined;
  /** HTTP status, or 0 for a transport error (DNS, connect, timeout, reset). */
  readonly status: number;
  /** Raw Retry-After header, when present. */
  readonly retryAfter?: string | undefined;
  readonly etag?: string | undefined;
  /** Last-Modified, epoch seconds. */
  readonly lastModified?: number | undefined;
  /**
   * The response's Date header, epoch seconds: the server's clock as it answered. Read with
   * Last-Modified on the server's own clock, so a server stamping every response with the time
   * is told from a page just changed whatever the two clocks' skew (src/freshness `firstFetchAge`).
   */
  readonly serverDate?: number | undefined;
  readonly contentType?: string | undefined;
  /**
   * Location header of a redirect, resolved against the request URL. On a 4xx answer, a URL to
   * fetch in this one's place (at its depth): the engine sets it when a link it rewrote by a
   * learned lesson was not there, naming the link as found.
   */
  readonly location?: string | undefined;
  /**
   * On a redirect: fetch its target again if the target answered a redirect to this very URL —
   * a round trip (`/a` → `/check?back=/a` → `/a`), as a cookie check bounces a client that sent
   * no cookie. The engine sets it when it now holds cookies for the target; the frontier fetches
   * such a target again once (`FpFlag.Reopened`), never twice, so a true loop ends.
   */
  readonly reopenLocation?: boolean | undefined;
  /** xxHash64 of the normalized body (absent for 304, errors, empty bodies). */
  readonly contentFp?: bigint | undefined;
  /** 64-bit simhash of the body text. */
  readonly simhash?: bigint | undefined;
  /**
   * Churn fingerprint (src/dedup `churnFp`): the main text with clocks, counters and tokens
   * masked. Equal on both fetches → the difference is boilerplate churn (Cosmetic); different →
   * an edit (Real). Absent: the change classifier falls back to the simhash rule.
   */
  readonly churnFp?: bigint | undefined;
  /** Out-links (canonical), when the body was parsed. */
  readonly links?: readonly Link[] | undefined;
  /**
   * The page had more distinct links than the fetcher's `maxLinks`: `links` holds the first
   * ones in document order, the rest were not taken.
   */
  readonly linksCapped?: boolean | undefined;
  /** Start-to-headers latency in ms. */
  readonly latencyMs?: number | undefined;
  /**
   * The body exceeded the size cap and was cut: a 2xx's, or — when the fetcher records for an
   * archive (`HttpFetcherOptions.record`) — another status's body, read up to the same cap. This
   * is the decoded body the fetcher kept (its fingerprints and links incomplete), not the record:
   * `HttpExchange.truncated` says whether the recording lacks bytes of the response.
   */
  readonly truncated?: boolean | undefined;
  /**
   * Where a `truncated` body was cut: 'cap' at the page body cap (`maxBodyBytes` /
   * `maxDecodedBytes`); for a sitemap read past it (`HttpFetcherOptions.maxSitemapBytes`),
   * 'sitemapCap' at the sitemap cap, 'time' by the total or idle timeout, 'disconnect' by a broken
   * connection — the entries before the cut were kept; 'time' and 'disconnect' also for another
   * status's body read for the archive. Absent when not truncated.
   */
  readonly cutAt?: 'cap' | 'sitemapCap' | 'time' | 'disconnect' | undefined;
  /**
   * The body was a sitemap, sitemap index or feed (its entries are `links`): fetched and followed,
   * but not a page — `maxPages` does not count it (`countsAsPage`).
   */
  readonly sitemap?: boolean | undefined;
  /**
   * Set by the crawl engine, never by a fetcher (the engine overwrites it): the engine took this
   * 2xx answer for the site's not-found page (a soft-404) and told the frontier 404 (`status`). Still a page for `maxPages` (`countsAsPage`): the server
   * answered 200 and the body was delivered and archived — counting it keeps `maxPages` a bound
   * on the work, where a single-page app listed by its sitemap (every route the same shell,
   * soon read as the not-found page) otherwise made one request per listed URL whatever the limit.
   */
  readonly soft404?: boolean | undefined;
  /** robots.txt forbids this URL (decided at fetch time). */
  readonly robotsDisallowed?: boolean | undefined;
  /**
   * Human-readable transport error when status is 0; with a status, a note on a body that
   * could not be decoded (`errorKind` `body`).
   */
  readonly error?: string | undefined;
  /** Machine-readable class of `error`. */
  readonly errorKind?: FetchErrorKind | undefined;
  /** The IP address the connection went to (the pinned one), when a connection was attempted. */
  readonly ip?: string | undefined;
  /** Start-to-end-of-body time in ms (latencyMs is start-to-headers). */
  readonly fetchMs?: number | undefined;
  /**
   * The decoded body bytes, for embedders (WARC writers, indexers). Present for 2xx responses
   * whose body was read; capped at the fetcher's decoded-size limit (see `truncated`). The
   * frontier itself reads only `contentFp`, `simhash` and `churnFp`.
   */
  readonly body?: Uint8Array | undefined;
  /** `<link rel=canonical>` of an HTML page, canonicalized. */
  readonly canonical?: string | undefined;
  /** Meta robots or X-Robots-Tag said noindex. */
  readonly noindex?: boolean | undefined;
  /** Meta robots or X-Robots-Tag said nofollow (every link of the page is marked nofollow too). */
  readonly nofollow?: boolean | undefined;
  /**
   * An HTML page with a password field (`<input type=password>`): a login form. The engine learns
   * paths that answer one login form whatever is asked (src/dedup/loginwall.ts).
   */
  readonly loginForm?: boolean | undefined;
  /**
   * An anchor of the HTML page names the page's own URL by a path or a URL, not in place (an
   * empty or fragment-only href, a skip link): a permalink to itself. The engine asks it of a copy
   * of another page (`NamedCopies`: a permalink its named page shows).
   */
  readonly selfLinked?: boolean | undefined;
  /** The exchange as it crossed the wire, when the fetcher records (`HttpFetcher`'s `record`). */
  readonly exchange?: HttpExchange | undefined;
}

/** One HTTP exchange as it crossed the wire (what a WARC request/response record pair holds). */
export interface HttpExchange {
  /** The request head as sent (for a GET, the whole request). */
  readonly request: Uint8Array;
  /**
   * The final response as received: head then body bytes, transfer coding (chunked) included;
   * interim responses (`102 Processing`, `103 Early Hints`) left out.
   */
  readonly response: Uint8Array;
  /**
   * Bytes of the response are missing: a bound of the recording cut it, or the fetch stopped
   * reading before its end. A body that arrived whole but did not decode is not truncated.
   */
  readonly truncated: boolean;
  /** No HTTP/1 bytes were seen (HTTP/2): head rebuilt from the raw header list, body de-framed. */
  readonly synthesized: boolean;
}

/** A routed out-link entering a partition's intake (idempotent by key). */
export interface Discovery {
  /** Canonical URL. */
  readonly url: string;
  /** Its key (4 lanes), when already computed by the router. */
  readonly key?: KeyArray | undefined;
  /** Host group name. */
  readonly host: string;
  /** Depth from the nearest seed. */
  readonly depth: number;
  /** OPIC cash (or link weight) the source grants. */
  readonly cash: number;
  /** Registrable domain of the linking page, for cross-host in-degree. */
  readonly fromHost?: string | undefined;
  /** Queued ahead of its host's other URLs (`URGENT_PRIORITY`): a soft-404 probe (`Link.probe`). */
  readonly urgent?: true | undefined;
}
