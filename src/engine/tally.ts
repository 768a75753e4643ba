/**
 * `Tally`: what a run did, in the words an end summary uses — pages fetched OK, redirects,
 * client and server errors, network errors, URLs refused by a setting (per reason), URLs out
 * of scope (per reason), robots.txt refusals, handler failures — plus the hosts that failed
 * most and why, and the names that do not exist.
 *
 * Counts are of this run; a policy refusal or an out-of-scope link is counted once per URL
 * (the frontier keeps it `Refused`, so it is not asked again until the settings change).
 *
 * Never: change what is fetched; it only counts what the engine reports to it.
 */
import type { SeedRedirect } from './run-types.js';
import type { FetchErrorKind } from '../model/index.js';
import { SCOPE_REASONS, type ScopeReason } from './scope.js';
import { splitOrigin } from '../url/host.js';

/** Why a setting refused a URL that is in scope. */
export type PolicyReason = 'private-address' | 'no-such-name';

/** The end-of-run counts (see the module comment). */
export interface CrawlCounts {
  /** 2xx and 304 answers, soft-404s aside. */
  readonly ok: number;
  readonly redirects: number;
  /** 4xx answers (429 included) and soft-404s. */
  readonly clientErrors: number;
  /** 5xx answers, and statuses that are no final HTTP status (≥ 600 such as LinkedIn's 999, a final 1xx): the summary's "5xx". */
  readonly serverErrors: number;
  /** No HTTP answer: DNS, connect, TLS, timeout, protocol. */
  readonly networkErrors: number;
  /**
   * Answers that broke off after their headers (`FetchErrorKind` 'incomplete': a reset or a bad
   * framing mid-body); not among `networkErrors` — the server answered, the page did not finish.
   */
  readonly incomplete: number;
  /** URLs refused by a setting though in scope (private address, a name that does not exist). */
  readonly refusedByPolicy: number;
  readonly refusedBy: Readonly<Record<PolicyReason, number>>;
  /** URLs robots.txt disallows. */
  readonly robotsDisallowed: number;
  /** Links and redirect targets outside the scope or patterns: never fetched. */
  readonly outOfScope: number;
  readonly outOfScopeBy: Readonly<Record<ScopeReason, number>>;
  /** Pages the handler of `crawl()` failed on after its retries. */
  readonly handlerFailed: number;
  /**
   * Of `ok`, fetches again of pages whose depth fell under `maxDepth` after their fetch (a
   * shorter path found later): their links are passed on at the shorter depth.
   */
  readonly relinked: number;
  /** Links whose query keys learned ignorable were dropped (`EngineOptions.learnParams`). */
  readonly paramRewrites: number;
  /** URLs queued before their query keys were learned ignorable, not fetched: their canonical page was. */
  readonly paramCopies: number;
  /**
   * Links taken without query keys learned to select a view (a filter, a sort order) of the page
   * their site names canonical (`CrawlSummary.viewKeys`, `EngineOptions.learnParams`).
   */
  readonly viewRewrites: number;
  /** URLs queued before their view keys were learned, not fetched (one in 32 is, as a check). */
  readonly viewCopies: number;
  /**
   * URLs not fetched because their path answers one login form whatever is asked
   * (`CrawlSummary.loginWalls`, `EngineOptions.learnParams`).
   */
  readonly loginWalled: number;
  /**
   * URLs not fetched because they carry a query pair whose pages name a page the crawl knows as
   * theirs (`viewtopic.php?t=5&view=next`; `CrawlSummary.knownCopies`, `EngineOptions.learnParams`;
   * one in 32 is fetched, as a check).
   */
  readonly knownCopies: number;
  /**
   * Links not followed, and queued URLs not fetched, because they point at a spot on the page they
   * were found on under a URL shape learned to serve that page (`CrawlSummary.anchorCopies`).
   */
  readonly anchorCopies: number;
  /**
   * URLs not fetched because their URL shape's pages said noindex and nofollow
   * (`CrawlSummary.noindexShapes`, `EngineOptions.learnNoindex`; checks are fetched, and those of a
   * shape whose check found a page to index or follow are queued again and not counted).
   */
  readonly noindexSkipped: number;
  /**
   * URLs not fetched because their URL shape was learned to redirect into (or copy) the parent page, which
   * the crawl fetched (`CrawlSummary.parentRedirects`, `EngineOptions.learnAliases`; checks are
   * fetched, and those of a shape whose check found a page of its own are queued again and not
   * counted).
   */
  readonly parentRedirects: number;
  /**
   * URLs not fetched because their URL shape was learned to redirect where the crawl does not go
   * — a login form, another site, a path robots.txt disallows, a shape another lesson refuses (`CrawlSummary.deadEndRedirects`,
   * `EngineOptions.learnAliases`; checks are fetched, and those of a shape whose check found a
   * page of its own or a new page are queued again and not counted).
   */
  readonly deadEndRedirects: number;
  /**
   * URLs not fetched because their URL shape was learned to serve copies of other pages of their
   * site, named as their rel=canonical (`CrawlSummary.namedCopies`, `EngineOptions.learnAliases`;
   * checks are fetched, and those of a shape whose check found a page of its own or named a page
   * the crawl did not hold are queued again and not counted).
   */
  readonly namedCopies: number;
  /**
   * Links taken from an origin learned moved to the origin it moved to, or written with a
   * section's trailing slash learned (`EngineOptions.learnAliases`).
   */
  readonly aliasRewrites: number;
  /** URLs queued before their section's slash rule was learned, not fetched: the page they redirect to was. */
  readonly aliasCopies: number;
  /**
   * Of `redirects`, answers redirecting to the URL itself (a cookie check): retried, up to
   * `retryLimit`, with the cookies the answer set (`EngineOptions.cookies`).
   */
  readonly selfRedirects: number;
  /**
   * Links not followed because their page repeated an ancestor directory's relative navigation
   * one level deeper (a catch-all path; `NavigationEcho`, under `EngineOptions.trapDetection`).
   */
  readonly echoLinks: number;
  /**
   * Pages with more distinct links than the fetcher's `maxLinks` (`http.maxLinks`, default
   * 10,000): the links past it were not taken (`Outcome.linksCapped`).
   */
  readonly linksCapped: number;
  /** The first such page's URL, to name in a summary (undefined when none). */
  readonly linksCappedExample?: string | undefined;
  /**
   * Pages (2xx) whose body was longer than the fetcher's size cap (`http.maxBodyBytes`, default
   * 10 MiB) and was cut there (`Outcome.truncated`): kept up to it, links past it not taken.
   */
  readonly bodiesCut: number;
  /** The first such page's URL (undefined when none). */
  readonly bodiesCutExample?: string | undefined;
  /**
   * Sitemaps (2xx) read only in part: longer than the sitemap cap (`http.maxSitemapBytes`, the
   * protocol's 50 MiB), or cut by a timeout or a broken connection past a page's cap. The
   * entries before the cut were taken.
   */
  readonly sitemapsCut: number;
  /** The first such sitemap's URL (undefined when none). */
  readonly sitemapsCutExample?: string | undefined;
  /** Links taken to the spelling of their path met first, on an origin that ignores case (`PathCase`). */
  readonly caseRewrites: number;
  /** Queued URLs not fetched: another spelling of their path was served by an origin that ignores case. */
  readonly caseCopies: number;
  /** Links taken to the spelling met first (`/a/` or `/a/index.html`) on an origin that serves a directory's index file as the directory. */
  readonly indexRewrites: number;
  /** Queued URLs not fetched: the other spelling (`/a/` or `/a/index.html`) was served by such an origin. */
  readonly indexCopies: number;
  /**
   * Links to later pages of a listing not followed: their page repeated an earlier page of the
   * same series past the listing's end (`PagingEnd`, under `EngineOptions.trapDetection`).
   */
  readonly pagingEnds: number;
  /** Sitemaps fetched OK (`Outcome.sitemap`): among `ok`, but not pages for `maxPages`. */
  readonly sitemaps: number;
  /** 2xx answers read as the site's not-found page (`Outcome.soft404`): among `clientErrors`, and pages for `maxPages`. */
  readonly soft404s: number;
  /**
   * Made-up URLs answered (past any transient answer) that asked a site for its not-found answer
   * before a body shared by many of its URLs was read as it (`EngineOptions.soft404Probe`, `soft404ProbeUrl`): counted by their
   * status above, never as a host's failures.
   */
  readonly soft404Probes: number;
  /** Of them, the ones answered not found (or with another body): the shared body was a page's, its URLs kept as pages. */
  readonly soft404Cleared: number;
}

/** A host that failed, with how often and why. */
export interface FailingHost {
  readonly host: string;
  readonly failures: number;
  /** The latest message of its most frequent kind of failure (ties: the kind met last). */
  readonly reason: string;
  /**
   * Failures by kind: the transport's `errorKind` ('timeout', 'incomplete', …), `HTTP <status>`,
   * or 'soft-404'. Most frequent first (ties: the kind met last).
   */
  readonly byKind: readonly { readonly kind: string; readonly failures: number }[];
}

/** One kind of failure of one host: how many, its latest message, and when it was last met. */
interface FailureKind {
  readonly kind: string;
  failures: number;
  reason: string;
  lastSeq: number;
}

/** A name that does not exist, taken out of the crawl at once. */
export interface UnresolvedHost {
  readonly host: string;
  readonly code: string;
  /** URLs of it refused this run. */
  readonly urls: number;
}

/** A page the handler failed on. */
export interface HandlerFailure {
  readonly url: string;
  readonly message: string;
}

/** Handler failures kept for the summary (the count is exact). */
const MAX_HANDLER_FAILURES = 100;

function zeros<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

/** Counts of a run (see the module comment). */
export class Tally {
  #ok = 0;
  #redirects = 0;
  #client = 0;
  #soft404s = 0;
  #soft404Probes = 0;
  #soft404Cleared = 0;
  #server = 0;
  #network = 0;
  #incomplete = 0;
  #disallowed = 0;
  #handler = 0;
  #relinked = 0;
  #paramRewrites = 0;
  #paramCopies = 0;
  #viewRewrites = 0;
  #viewCopies = 0;
  #loginWalled = 0;
  #knownCopies = 0;
  #anchorCopies = 0;
  #noindexSkipped = 0;
  #parentRedirects = 0;
  #deadEndRedirects = 0;
  #namedCopies = 0;
  #aliasRewrites = 0;
  #aliasCopies = 0;
  #selfRedirects = 0;
  #echoLinks = 0;
  #linksCapped = 0;
  #linksCappedExample: string | undefined;
  #bodiesCut = 0;
  #sitemaps = 0;
  #caseRewrites = 0;
  #pagingEnds = 0;
  #caseCopies = 0;
  #indexRewrites = 0;
  #indexCopies = 0;
  #bodiesCutExample: string | undefined;
  #sitemapsCut = 0;
  #sitemapsCutExample: string | undefined;
  readonly #rewriteMisses: string[] = [];
  readonly #seedRedirects: SeedRedirect[] = [];
  readonly #refusedBy = zeros<PolicyReason>(['private-address', 'no-such-name']);
  readonly #scopeBy = zeros<ScopeReason>(SCOPE_REASONS);
  readonly #failing = new Map<string, { failures: number; kinds: FailureKind[] }>();
  #failureSeq = 0;
  readonly #unresolved = new Map<string, { code: string; urls: number }>();
  readonly #handlerFailures: HandlerFailure[] = [];

  /**
   * The answer to `req` (`status` 0: no HTTP answer, `error` says why); a failure is filed under
   * its URL's hostname, but for a soft-404 probe's (`probe`: a made-up URL's 404 is the answer asked).
   */
  outcome(req: { readonly url: string; readonly host: string; readonly relink?: true | undefined }, status: number, soft404: boolean, errorKind: FetchErrorKind | undefined, error: string | undefined, probe = false): void {
    if (soft404) {
      this.#client++;
      this.#soft404s++;
    }
    else if (status === 0 && errorKind === 'incomplete') this.#incomplete++;
    else if (status === 0) this.#network++;
    else if (status === 304 || (status >= 200 && status < 300)) {
      this.#ok++;
      if (req.relink === true) this.#relinked++;
    }
    else if (status >= 300 && status < 400) this.#redirects++;
    else if (status >= 400 && status < 500) this.#client++;
    // 5xx, and a status that is no final HTTP status (≥ 600, a final 1xx): the server's refusals,
    // transient as a 5xx is (src/model's `isTransientStatus`).
    else this.#server++;
    if ((status >= 200 && status < 400 && !soft404) || probe) return;
    const kind = soft404 ? 'soft-404' : status === 0 ? (errorKind ?? 'network') : `HTTP ${status}`;
    const reason = soft404 ? 'soft-404' : status === 0 ? `${kind}: ${error ?? 'no answer'}` : error === undefined ? kind : `${kind}, ${error}`;
    // The URL's own hostname (a group can hold several): derived only for a failure.
    const host = splitOrigin(req.url)?.host ?? req.host;
    const seq = ++this.#failureSeq;
    const f = this.#failing.get(host);
    if (f === undefined) {
      this.#failing.set(host, { failures: 1, kinds: [{ kind, failures: 1, reason, lastSeq: seq }] });
      return;
    }
    f.failures++;
    const k = f.kinds.find((x) => x.kind === kind);
    if (k === undefined) f.kinds.push({ kind, failures: 1, reason, lastSeq: seq });
    else {
      k.failures++;
      k.reason = reason;
      k.lastSeq = seq;
    }
  }

  /** A URL a setting refused. */
  refused(reason: PolicyReason, host: string, code?: string): void {
    this.#refusedBy[reason]++;
    if (reason !== 'no-such-name') return;
    const u = this.#unresolved.get(host);
    if (u === undefined) this.#unresolved.set(host, { code: code ?? 'ENOTFOUND', urls: 1 });
    else u.urls++;
  }

  /** A URL out of scope (counted once per URL). */
  outOfScope(reason: ScopeReason): void {
    this.#scopeBy[reason]++;
  }

  /** A URL robots.txt disallows. */
  disallowed(): void {
    this.#disallowed++;
  }

  /** Links of a page whose learned-ignorable query keys were dropped. */
  paramRewrites(n: number): void {
    this.#paramRewrites += n;
  }

  /** Links of a page taken to the origin their own moved to. */
  aliasRewrites(n: number): void {
    this.#aliasRewrites += n;
  }

  /** A link a learner rewrote led to a missing page: `original`, the link as found, was not fetched. */
  rewriteMiss(original: string): void {
    if (this.#rewriteMisses.length < MAX_HANDLER_FAILURES) this.#rewriteMisses.push(original);
  }

  /** A seed's redirect or refresh out of the scope made its target a seed (`CrawlSummary.seedRedirects`). */
  seedRedirect(r: SeedRedirect): void {
    if (this.#seedRedirects.length < MAX_HANDLER_FAILURES) this.#seedRedirects.push(r);
  }

  /** Seeds' targets taken as seeds this run (at most 100). */
  seedRedirects(): SeedRedirect[] {
    return [...this.#seedRedirects];
  }

  /** Links as found whose rewritten form was missing (at most 100). */
  rewriteMisses(): string[] {
    return [...this.#rewriteMisses];
  }

  /** A queued copy not fetched: its learned-ignorable keys dropped name a page fetched this run. */
  paramCopy(): void {
    this.#paramCopies++;
  }

  /** `n` links taken without their learned view keys. */
  viewRewrites(n: number): void {
    this.#viewRewrites += n;
  }

  /** A queued URL not fetched: it carries a view key learned since it was queued. */
  viewCopy(): void {
    this.#viewCopies++;
  }

  /** A queued URL not fetched: its path answers one login form whatever is asked. */
  loginWalled(): void {
    this.#loginWalled++;
  }

  /** A queued URL not fetched: it carries a query pair whose pages name a page the crawl knows. */
  knownCopy(): void {
    this.#knownCopies++;
  }

  /** A queued URL not fetched: its URL shape's pages said noindex and nofollow. */
  noindexSkipped(): void {
    this.#noindexSkipped++;
  }

  /** `n` URLs this run refused so are queued again: a check lifted their shape's lesson. */
  noindexRequeued(n: number): void {
    this.#noindexSkipped -= n;
  }

  /** A queued URL not fetched: its URL shape redirects into (or copies) its parent page, which the crawl fetched. */
  parentRedirect(): void {
    this.#parentRedirects++;
  }

  /** `n` URLs this run refused so are queued again: a check lifted their shape's lesson. */
  parentRedirectsRequeued(n: number): void {
    this.#parentRedirects -= n;
  }

  /** A queued URL not fetched: its URL shape redirects where the crawl does not go. */
  deadEndRedirect(): void {
    this.#deadEndRedirects++;
  }

  /** `n` URLs this run refused so are queued again: a check lifted their shape's lesson. */
  deadEndRedirectsRequeued(n: number): void {
    this.#deadEndRedirects -= n;
  }

  /** A queued URL not fetched: its URL shape serves copies of other pages it names canonical. */
  namedCopy(): void {
    this.#namedCopies++;
  }

  /** `n` URLs this run refused so are queued again: a check lifted their shape's lesson. */
  namedCopiesRequeued(n: number): void {
    this.#namedCopies -= n;
  }

  /** `n` anchored links, or a queued URL from one, not fetched: copies of the page they were on. */
  anchorCopies(n = 1): void {
    this.#anchorCopies += n;
  }

  /** A queued redirect not fetched: its section's slash rule names a page fetched this run. */
  aliasCopy(): void {
    this.#aliasCopies++;
  }

  /** Links of a page not followed: its navigation echoed an ancestor's (`NavigationEcho`). */
  echoLinks(n: number): void {
    this.#echoLinks += n;
  }

  /** Links of a page taken to the spelling met first on an origin that ignores case. */
  caseRewrites(n: number): void {
    this.#caseRewrites += n;
  }

  /** A queued URL not fetched: another spelling of it was served (an origin that ignores case). */
  caseCopy(): void {
    this.#caseCopies++;
  }

  /** Links of a page taken to the spelling met first on an origin that serves index files as their directory. */
  indexRewrites(n: number): void {
    this.#indexRewrites += n;
  }

  /** A queued URL not fetched: the directory or its index file was served under the other spelling. */
  indexCopy(): void {
    this.#indexCopies++;
  }

  /** Links of a page past a listing's end not followed (`PagingEnd`). */
  pagingEnds(n: number): void {
    this.#pagingEnds += n;
  }

  /** A sitemap was fetched OK (its entries are links; not a page). */
  sitemap(): void {
    this.#sitemaps++;
  }

  /** A page's body was cut at the fetcher's size cap. */
  bodyCut(url: string): void {
    this.#bodiesCut++;
    this.#bodiesCutExample ??= url;
  }

  /** A sitemap was read only in part (see `CrawlCounts.sitemapsCut`). */
  sitemapCut(url: string): void {
    this.#sitemapsCut++;
    this.#sitemapsCutExample ??= url;
  }

  /** A page had more links than the fetcher takes: those past its cap were not taken. */
  linksCapped(url: string): void {
    this.#linksCapped++;
    this.#linksCappedExample ??= url;
  }

  /** A soft-404 probe answered; `cleared` when its answer made the shared body a page's. */
  soft404Probe(cleared: boolean): void {
    this.#soft404Probes++;
    if (cleared) this.#soft404Cleared++;
  }

  /** An answer redirected to the URL itself (also counted among the redirects). */
  selfRedirect(): void {
    this.#selfRedirects++;
  }

  /** The handler failed on `url` for good. */
  handlerFailed(url: string, message: string): void {
    this.#handler++;
    if (this.#handlerFailures.length < MAX_HANDLER_FAILURES) this.#handlerFailures.push({ url, message });
  }

  /** Pages fetched OK this run. */
  get ok(): number {
    return this.#ok;
  }

  counts(): CrawlCounts {
    const refusedBy = { ...this.#refusedBy };
    const outOfScopeBy = { ...this.#scopeBy };
    return {
      ok: this.#ok,
      redirects: this.#redirects,
      clientErrors: this.#client,
      serverErrors: this.#server,
      networkErrors: this.#network,
      incomplete: this.#incomplete,
      refusedByPolicy: refusedBy['private-address'] + refusedBy['no-such-name'],
      refusedBy,
      robotsDisallowed: this.#disallowed,
      outOfScope: Object.values(outOfScopeBy).reduce((a, b) => a + b, 0),
      outOfScopeBy,
      handlerFailed: this.#handler,
      relinked: this.#relinked,
      paramRewrites: this.#paramRewrites,
      paramCopies: this.#paramCopies,
      viewRewrites: this.#viewRewrites,
      viewCopies: this.#viewCopies,
      loginWalled: this.#loginWalled,
      knownCopies: this.#knownCopies,
      anchorCopies: this.#anchorCopies,
      noindexSkipped: this.#noindexSkipped,
      parentRedirects: this.#parentRedirects,
      deadEndRedirects: this.#deadEndRedirects,
      namedCopies: this.#namedCopies,
      aliasRewrites: this.#aliasRewrites,
      aliasCopies: this.#aliasCopies,
      selfRedirects: this.#selfRedirects,
      echoLinks: this.#echoLinks,
      linksCapped: this.#linksCapped,
      ...(this.#linksCappedExample === undefined ? {} : { linksCappedExample: this.#linksCappedExample }),
      bodiesCut: this.#bodiesCut,
      sitemapsCut: this.#sitemapsCut,
      sitemaps: this.#sitemaps,
      soft404s: this.#soft404s,
      soft404Probes: this.#soft404Probes,
      soft404Cleared: this.#soft404Cleared,
      caseRewrites: this.#caseRewrites,
      pagingEnds: this.#pagingEnds,
      caseCopies: this.#caseCopies,
      indexRewrites: this.#indexRewrites,
      indexCopies: this.#indexCopies,
      ...(this.#bodiesCutExample === undefined ? {} : { bodiesCutExample: this.#bodiesCutExample }),
      ...(this.#sitemapsCutExample === undefined ? {} : { sitemapsCutExample: this.#sitemapsCutExample }),
    };
  }

  /** The `n` hosts with most failures, most first (ties by name). */
  failingHosts(n = 5): FailingHost[] {
    return [...this.#failing]
      .map(([host, f]) => {
        // The summary names what a host mostly failed with, not only its last answer: a site
        // with one page sending oversized headers and eight timeouts read "protocol" before.
        const kinds = [...f.kinds].sort((a, b) => b.failures - a.failures || b.lastSeq - a.lastSeq);
        return { host, failures: f.failures, reason: kinds[0]!.reason, byKind: kinds.map((k) => ({ kind: k.kind, failures: k.failures })) };
      })
      .sort((a, b) => b.failures - a.failures || (a.host < b.host ? -1 : 1))
      .slice(0, n);
  }

  /** Names that do not exist, in the order they were met. */
  unresolvedHosts(): UnresolvedHost[] {
    return [...this.#unresolved].map(([host, u]) => ({ host, code: u.code, urls: u.urls }));
  }

  /** Pages the handler failed on (at most 100; `counts().handlerFailed` is exact). */
  handlerFailures(): readonly HandlerFailure[] {
    return this.#handlerFailures;
  }
}
