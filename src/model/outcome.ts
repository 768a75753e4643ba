/**
 * The outcome vocabulary: one name for what a fetch's answer means, and one table of what the
 * frontier's state machine does with each (DESIGN §4).
 *
 * ```
 *   status / errorKind                         class         URL status after report
 *   2xx                                        ok            Crawled (fingerprints, recrawl, links)
 *   304                                        notModified   Crawled (no new fingerprint, no links)
 *   3xx other than 304                         redirect      Redirected (the Location is discovered)
 *   3xx whose Location is the URL itself       transient     RetryWait, or Gone after retryLimit
 *   429, 5xx, 0 (transport)                    transient     RetryWait, or Gone after retryLimit
 *   ≥ 600, or a final 1xx (no HTTP status)     transient     RetryWait, or Gone after retryLimit
 *   0 with errorKind 'url' or 'refused'        gone          Gone (will never succeed)
 *   4xx other than 429                         gone          Gone
 *   robots.txt forbids it (outcome flag)       disallowed    Disallowed
 * ```
 *
 * `isTransientStatus` is the "429 / 0 / 5xx / no HTTP status" rule, written once: politeness
 * reads it as "the server is struggling or refusing" (`isThrottle`), the state machine as "try
 * again later". A code outside RFC 9110's final statuses (§15: 100–599, 1xx interim) names no
 * class a client could read it by; the ones servers send are blocks of a client they take for a
 * bot (LinkedIn's 999), answered without a body the crawl uses (links and fingerprints come from
 * 2xx bodies only). Filed as
 * ok, such a URL was recorded crawled with nothing and never asked again; as a refusal it is
 * retried with the host backed off, as a 429 or 5xx is, and Gone after `retryLimit`. A DNS answer
 * of "no such name" is also permanent, but only the engine's resolver cache can tell it from
 * a failed look-up, so the engine reports such an outcome as 410.
 *
 * Pure functions and frozen constants only: any layer may import this without behaviour.
 */
import type { FetchErrorKind } from './index.js';
import { UrlStatus } from './status.js';

/** What an outcome means for its URL. */
export const OutcomeClass = {
  Ok: 'ok',
  NotModified: 'notModified',
  Redirect: 'redirect',
  Transient: 'transient',
  Gone: 'gone',
  Disallowed: 'disallowed',
} as const;
/** One of the `OutcomeClass` values. */
export type OutcomeClass = (typeof OutcomeClass)[keyof typeof OutcomeClass];

/**
 * Whether a status as the frontier was told it is a page fetched OK — 2xx or 304 (soft-404s
 * are told 404; `countsAsPage` adds them back for `maxPages`).
 */
export function isOk(status: number): boolean {
  return status === 304 || (status >= 200 && status < 300);
}

/**
 * Whether an outcome is a page for `maxPages`: fetched OK (`isOk`, or a 2xx the engine read as a
 * soft-404 and told 404) and not a sitemap. A crawl started from a sitemap index of fifty
 * sitemaps with `--max-pages 60` fetches sixty pages, not ten; one over an app whose every route
 * is the same shell stops after sixty requests, not one per route; `maxRequests` counts every fetch.
 */
export function countsAsPage(o: { readonly status: number; readonly sitemap?: boolean | undefined; readonly soft404?: boolean | undefined }): boolean {
  return (isOk(o.status) || o.soft404 === true) && o.sitemap !== true;
}

/**
 * Whether `o` is a 304 to a request for a URL whose last body was a sitemap or feed
 * (`FetchRequest.sitemap`): a sitemap's answer, no page — a 304 has no body to tell by, so the
 * fetcher cannot mark it (`Outcome.sitemap`) itself.
 */
export function isUnchangedSitemap(req: { readonly sitemap?: true | undefined }, o: { readonly status: number; readonly sitemap?: boolean | undefined }): boolean {
  return o.status === 304 && req.sitemap === true && o.sitemap !== true;
}

/**
 * The refresh target a page's links hold and a reader follows (`Link.refresh`, not nofollow),
 * if any: the page's redirect written in it.
 */
export function refreshTargetOf(o: { readonly links?: readonly { readonly url: string; readonly refresh?: boolean | undefined; readonly nofollow?: boolean | undefined }[] | undefined }): string | undefined {
  const links = o.links;
  if (links === undefined) return undefined;
  for (const l of links) if (l.refresh === true && l.nofollow !== true) return l.url;
  return undefined;
}

/**
 * Whether `status` is a transient failure: 429, any 5xx, no response at all (0), or a status
 * that is no final HTTP status (≥ 600, or a 1xx given as final; see the module comment).
 */
export function isTransientStatus(status: number): boolean {
  return status === 429 || status === 0 || status >= 500 || status < 200;
}

/**
 * The class of an answer with HTTP `status` (0 = no response) and, for status 0, the
 * transport's `errorKind`. Robots disallowance is a flag of the outcome, not a status: see
 * `classOfOutcome`.
 */
export function outcomeClass(status: number, errorKind?: FetchErrorKind): OutcomeClass {
  if (status === 0) return errorKind === 'url' || errorKind === 'refused' ? OutcomeClass.Gone : OutcomeClass.Transient;
  if (status === 304) return OutcomeClass.NotModified;
  if (isTransientStatus(status)) return OutcomeClass.Transient;
  if (status >= 300 && status < 400) return OutcomeClass.Redirect;
  if (status >= 400 && status < 500) return OutcomeClass.Gone;
  return OutcomeClass.Ok;
}

/**
 * Whether an answer is a redirect to the very URL fetched (`location` equal to `url`): a cookie
 * check (the server sets a cookie and sends the client back to the page it asked for), or a
 * server's "ask again". Its target is the URL itself, already answered, so following it would
 * end the URL with no page; it is retried instead, and `retryLimit` ends a true loop.
 */
export function isSelfRedirect(o: { readonly status: number; readonly url?: string | undefined; readonly location?: string | undefined }): boolean {
  return o.status >= 300 && o.status < 400 && o.status !== 304 && o.location !== undefined && o.location === o.url;
}

/**
 * `outcomeClass` of a whole outcome: `disallowed` when robots.txt forbade the URL, and
 * `transient` for a redirect to itself (`isSelfRedirect`).
 */
export function classOfOutcome(o: {
  readonly status: number;
  readonly errorKind?: FetchErrorKind | undefined;
  readonly robotsDisallowed?: boolean | undefined;
  readonly url?: string | undefined;
  readonly location?: string | undefined;
}): OutcomeClass {
  if (o.robotsDisallowed) return OutcomeClass.Disallowed;
  return isSelfRedirect(o) ? OutcomeClass.Transient : outcomeClass(o.status, o.errorKind);
}

/** What the frontier's state machine does with one outcome class. */
export interface OutcomeTransition {
  /** The URL status it leaves (for `transient`: the status while retries remain). */
  readonly to: number;
  /** Record a crawl: validators, change verdict, next-due hour. */
  readonly crawl: boolean;
  /** Take the page's fingerprints and links (false for a 304: nothing new was read). */
  readonly content: boolean;
  /** Discover the Location as the URL's redirect target. */
  readonly follow: boolean;
  /** Re-queue until the retry limit, then Gone. */
  readonly retry: boolean;
}

const T = (to: number, crawl: boolean, content: boolean, follow: boolean, retry: boolean): OutcomeTransition =>
  Object.freeze({ to, crawl, content, follow, retry });

/**
 * The state transitions, by class. The frontier's `report` reads this table and nothing else to
 * move a URL; an engine counting or logging outcomes reads the same classes.
 */
export const OUTCOME_TRANSITIONS: Readonly<Record<OutcomeClass, OutcomeTransition>> = Object.freeze({
  ok: T(UrlStatus.Crawled, true, true, false, false),
  notModified: T(UrlStatus.Crawled, true, false, false, false),
  redirect: T(UrlStatus.Redirected, false, false, true, false),
  transient: T(UrlStatus.RetryWait, false, false, false, true),
  gone: T(UrlStatus.Gone, false, false, false, false),
  disallowed: T(UrlStatus.Disallowed, false, false, false, false),
});
