/**
 * The engine's options: one table (`defineOptions`), validated before any state exists, and
 * the mapping from the embedder's politeness words (`minDelayMs`, …) to the frontier's
 * `PolitenessConfig`.
 */
import type { Fetcher, HttpFetcherOptions, Resolver } from '../fetch/index.js';
import { userAgentField } from '../fetch/http.js';
import { type FreshnessHook, MIN_MEMORY_BUDGET } from '../frontier/index.js';
import type { HostGrouping } from '../model/index.js';
import {
  type FieldSpec,
  booleanField,
  customField,
  defineOptions,
  describeValue,
  enumField,
  functionField,
  numberField,
} from '../options/index.js';
import { InvalidArgumentError } from '../errors/index.js';
import { type PolitenessConfig, politenessConfig } from '../politeness/index.js';
import type { CanonPolicy } from '../url/index.js';
import type { Page } from './page.js';
import { CRAWL_SCOPES, type CrawlScope } from './scope.js';
import type { Progress } from './status.js';
import { type EngineClusterOptions, isEngineClusterOptions } from './cluster-mode.js';
import type { Logger } from '../observe/log.js';
import { type MetricsOptions, isMetricsRegistry } from '../observe/metrics.js';

/** Politeness overrides in the embedder's words. Every field is optional. */
export interface EnginePoliteness {
  /** Hard minimum between two fetch starts to one host, ms; never crossed. Default 250. */
  readonly minDelayMs?: number | undefined;
  /** Interval a host starts at before any signal, ms. Default max(1000, minDelayMs). */
  readonly startDelayMs?: number | undefined;
  /** Ceiling of the adaptive interval, ms; a host pinned there is treated as dead. Default 300 000. */
  readonly maxDelayMs?: number | undefined;
  /**
   * Minimum between two fetch starts to one IP address, ms: where each address's own
   * adaptive interval starts and never goes below. Default: `minDelayMs`.
   */
  readonly ipMinDelayMs?: number | undefined;
  /** Most content fetches in flight to one IP address at once; 0 = no cap. Default 0. */
  readonly ipMaxInFlight?: number | undefined;
  /** Multiplicative back-off on 429, 5xx and transport errors. Default 2. */
  readonly backoff?: number | undefined;
  /** Additive narrowing per healthy fetch, ms. Default 50. */
  readonly narrowMs?: number | undefined;
  /** Proportional narrowing: at least this share of the interval's excess over the floor per healthy fetch. Default 1/16. */
  readonly narrowShare?: number | undefined;
  /** Multiplicative widening per fetch while latency is in a sustained rise. Default 1.25. */
  readonly softWiden?: number | undefined;
  /** A latency sample counts toward a rise only above the smoothed latency times this (and above it plus four deviations). Default 1.5. */
  readonly latencyRise?: number | undefined;
}

/**
 * Custom DNS: a hostname to one address or several, as strings or as records with their TTL
 * (`{ address, family, ttlSeconds }`, which the engine's DNS cache then respects; without a
 * TTL an answer is kept 5 minutes). The same type as `DnsCache`'s `resolver`.
 *
 * The contract, per hostname:
 * - **no such name**: resolve to an empty array, or reject with an error whose `code` is
 *   `ENOTFOUND`, `ENODATA`, `NXDOMAIN`, `ENONAME`, `NODATA` or `NOTFOUND`. The host is taken
 *   out at once: every URL of it is refused (status `Refused`, no request), it is named once
 *   in the end summary, and the answer is cached 5 minutes (continuous mode asks again later;
 *   a resume with other settings, e.g. a `--resolve` for it, re-evaluates its URLs).
 * - **try again**: reject with any other error (a plain `Error`, `ETIMEOUT`, `ESERVFAIL`, …).
 *   The URL's fetch fails as a transient network error and is retried up to `retryLimit`
 *   times; the answer is cached 30 seconds.
 */
export type EngineResolve = Resolver;

/** Options of `new Engine(...)` and `crawl(...)`. */
export interface EngineOptions {
  /** Start URLs (canonicalized; invalid ones are reported in `Engine.rejectedSeeds`). Default none (resume only). */
  readonly seeds: readonly string[];
  /**
   * Sitemap URLs to start from (sitemaps or sitemap indexes, gzip or not): fetched like seeds,
   * their entries followed as links. Default none.
   */
  readonly sitemaps: readonly string[];
  /**
   * Also fetch each HTML page's requisites (images, scripts, stylesheets), as frontier URLs
   * under the same politeness, robots and budget rules; a requisite takes its page's depth (not
   * one more), so a page at `maxDepth` is fetched with what it needs to display. Default false.
   */
  readonly requisites: boolean;
  /** Follow the `Sitemap:` lines of every robots.txt fetched, in cluster mode too (the ones in scope; they do not widen it, and the others are in `refusedSeeds`). Default true. */
  readonly robotsSitemaps: boolean;
  /** User-Agent sent with every request, product token first (`MyBot/1.0 (+https://example.com/bot)`). Required. */
  readonly agent: string;
  /**
   * Directory for the crash-safe state: `frontier.meguri` (checkpoint) and `journal.mgj`
   * (outcomes since). An existing directory resumes its campaign. Without it the crawl lives
   * in memory only.
   */
  readonly dataDir: string | undefined;
  /**
   * Resident memory budget of the frontier in bytes (0 = none, the default). Past it, hosts'
   * queued URLs beyond a window of their best are spilled to `<dataDir>/disk` and read back
   * ahead of need (DESIGN §14); needs `dataDir`. At least `MIN_MEMORY_BUDGET` (1 MiB) when
   * given: under it the frontier would run past the budget by up to 1 MiB. A property of this
   * machine, not of the crawl: not saved in settings.json. Refused with `cluster`
   * (docs/CLUSTER.md says why).
   */
  readonly memoryBudget: number;
  /** Fetches in flight at once (across hosts; one per host always). Default 64. */
  readonly concurrency: number;
  /**
   * Pages fetched OK (2xx or 304, soft-404s included: `countsAsPage`) for the campaign, resumes
   * included: the crawl stops once this many have been taken. Failures, redirects, sitemaps
   * (`Page.sitemap`) and robots.txt requests do not count. A soft-404 (`Page.soft404`, not
   * `Page.ok`) counts because the server answered 200 and the body was delivered: uncounted, an
   * app whose every route is one shell was fetched route by route whatever the limit. Default unlimited. With `cluster` it is the crawl's limit, recorded with it and
   * counted over every node (docs/CLUSTER.md).
   */
  readonly maxPages: number;
  /** Content requests of any outcome for the campaign, resumes included (a cap on work). Default unlimited; with `cluster`, counted over every node. */
  readonly maxRequests: number;
  /**
   * How far from its seeds the crawl goes: `host` (a seed's host name), `domain` (a seed's
   * registrable domain; the default), `origin` (a seed's scheme, host and port) or `any`.
   * Out-of-scope links are counted per reason and never fetched, nor their robots.txt.
   */
  readonly scope: CrawlScope;
  /** Glob patterns (picomatch) over the canonical URL; when given, a URL must match one. Default none. */
  readonly include: readonly string[];
  /** Glob patterns over the canonical URL; a URL matching one is out of scope. Default none. */
  readonly exclude: readonly string[];
  /**
   * For `crawl(options, handler)`: times a page is handed to the handler again after it
   * threw, before it is recorded as failed with the error's message. Default 2.
   */
  readonly handlerRetries: number;
  /**
   * For `crawl(options, handler)`: called when the handler failed on a page `handlerRetries + 1`
   * times. Throw (or reject) to end the crawl with that error; return to go on (the default).
   */
  readonly onHandlerError: ((error: unknown, page: Page) => void | Promise<void>) | undefined;
  /**
   * JSON-serializable settings of the embedder, saved with the crawl's own in the data
   * directory's `settings.json` and given back by `readCrawlSettings` (the CLI keeps its
   * `--resolve` table there). Default none.
   */
  readonly extraSettings: Readonly<Record<string, unknown>> | undefined;
  /**
   * Deepest link depth admitted (seeds are 0); 0 = unlimited. Default 32. A page's depth is the
   * fewest links from a seed found so far: a shorter path lowers it and admits a page the cap
   * parked; a page already fetched whose depth falls below it is fetched again for its links
   * (counted in `CrawlCounts.relinked`) when the crawl is otherwise idle and at least as many URLs
   * are parked past the cap as such pages, so the crawl fetches the pages within the cap
   * whatever order it found them in, unless a round could not pay (docs/DESIGN.md, "Depth is
   * the shortest path seen so far").
   */
  readonly maxDepth: number;
  /** URLs admitted per host group (the blunt trap defense); 0 = unlimited. Default 100 000. */
  readonly maxUrlsPerHost: number;
  /** Fetch private, loopback, link-local, CGNAT and multicast addresses. Only for intranets and tests. Default false. */
  readonly allowPrivate: boolean;
  /** Custom DNS (e.g. a fixed map); default: the system's resolver through a TTL cache. */
  readonly resolve: EngineResolve | undefined;
  /** Politeness overrides (see `EnginePoliteness`). */
  readonly politeness: EnginePoliteness | undefined;
  /** A robots.txt Crawl-delay above this is capped to it, ms. Must be below `politeness.maxDelayMs`. Default 30 000. */
  readonly maxCrawlDelayMs: number;
  /**
   * Politeness and budget unit (DESIGN §5): `registrable` (default: the public suffix + 1, so
   * `a.example.com` and `b.example.com` share one queue, while `alice.github.io` and
   * `bob.github.io` do not), `host` (each host name its own), or `origin`.
   */
  readonly grouping: HostGrouping;
  /** Obey robots.txt (RFC 9309). Default true. */
  readonly robots: boolean;
  /** First retry of an unreachable robots.txt (5xx, network), ms; doubles per failure up to 1 h. Default 60 000. */
  readonly robotsRetryMs: number;
  /**
   * Unreachable robots.txt answers in a row (5xx, 429, network) after which a campaign counts
   * the origin as disallowing everything, so the crawl can drain. Default 5. Continuous mode
   * never gives up: the host waits, retried with backoff up to an hour, and after 30 days of
   * outage its robots.txt counts as allowing everything (RFC 9309 §2.3.1.4).
   */
  readonly robotsMaxAttempts: number;
  /** How long a robots.txt is used before it is fetched again, ms. Default 24 h. */
  readonly robotsTtlMs: number;
  /** Transient failures (429, 5xx, network) of one URL before it is given up as Gone. Default 3. */
  readonly retryLimit: number;
  /**
   * Redirect hops followed from a URL no redirect led to; the target of one more hop is not
   * discovered (the page says so in `error`). A chain of fresh URLs (`/r/1` → `/r/2` → …) is
   * otherwise bounded only by `maxUrlsPerHost`. 0 follows none. Counts restart when a crawl
   * is resumed. Default 10.
   */
  readonly maxRedirects: number;
  /** Continuous mode: crawled URLs come due again (schedule index); the crawl never drains. Default false. */
  readonly recrawl: boolean;
  /**
   * The freshness policy of continuous mode (next-due per URL). Implies `recrawl`. Without it,
   * continuous mode uses meguri's own scheduler, `withFreshness(defaultParams(), recrawlBudget)`:
   * each page's change rate is learnt and recrawls are spent where they keep most pages fresh.
   */
  readonly freshness: FreshnessHook | undefined;
  /** Recrawls per hour the default freshness scheduler spends in continuous mode. Default 3600. */
  readonly recrawlBudget: number;
  /** OPIC importance ordering. Default true. */
  readonly prioritize: boolean;
  /** Trap pattern detection (calendar, facets, session ids) feeding admission, and the links a catch-all path echoes or a listing paged past its end repeats (`NavigationEcho`, `PagingEnd`) dropped. Default true. */
  readonly trapDetection: boolean;
  /**
   * Learn, per section of a site (origin and first path segment), query keys it ignores
   * (`?ref=…`, `?from=…`): a key is learned once three pages that carry it name the same URL
   * without it as their `<link rel=canonical>` and their text is a near-duplicate of that page's
   * (a `ParamLearner`; one contradiction bans the key) — or, for a return-to key (its value a
   * URL or a path, `?redirect_to=https…`, `?next=/…`; or its name `returnto`, `ReturnUrl`…),
   * once three pages without a canonical that differ only in its value show the same text; and
   * path rules from canonicals that drop leading segments (`/collections/c/products/p` naming
   * `/products/p`).
   * From then on the engine drops the key from links into that section, and a copy already
   * queued whose canonical page was fetched is not fetched (`CrawlCounts.paramCopies`).
   * Under the same switch, a path whose every query is ignored for this visitor: once five
   * distinct URLs of a path (`/posting.php?mode=quote&p=…`) answered a login form (a password
   * field in the page's content) with the same text, and none answered anything else, its
   * queued URLs are not fetched but for seeds and one in 32, fetched as a check that lifts the
   * wall if it finds content (`LoginWalls`, `CrawlSummary.loginWalls`, `CrawlCounts.loginWalled`).
   * And links to a spot on the page they sit on (`viewtopic.php?p=7#p7` beside post 7, the
   * fragment naming an element of the page and the post the query selects): once three of a URL
   * shape (origin, path, query key names) found on two pages of a path were copies of the page
   * they were on, such links are not followed but for one in 32, fetched as a check
   * (`AnchorCopies`, `CrawlSummary.anchorCopies`, `CrawlCounts.anchorCopies`).
   * And the filters and sort orders of a listing (`/shop/?filter_color=red&orderby=price`, each
   * naming the unfiltered listing as rel=canonical): once three pages whose canonical drops a key
   * alone brought no link the crawl did not know and a worded value of it came back, links drop
   * it, queued URLs carrying it are not fetched, and one URL in 32 is fetched as a check that
   * bans the key if it brings new links (`ViewKeys`, `CrawlSummary.viewKeys`,
   * `CrawlCounts.viewRewrites` / `viewCopies`).
   * And a query pair whose pages name another page the crawl knows as theirs, by rel=canonical or
   * redirect (phpBB's `viewtopic.php?t=5&view=next`, showing topic 6 and naming it canonical): once
   * ten distinct URLs of a path carrying it named pages the crawl holds, distinct ones for ¾ of them
   * at least (a redirect out of the scope counts as one; a few pages named by many, as a site-wide
   * or category canonical, do not teach), and none standing named one it does not hold or itself,
   * its queued URLs are not fetched but for seeds and one in 32, fetched as a check that bans the
   * pair if it names such a page (`KnownCopies`, `CrawlSummary.knownCopies`,
   * `CrawlCounts.knownCopies`).
   * Default true; the checkpoint keeps the keys, walls, anchor lessons, view keys and pairs
   * learned and banned.
   */
  readonly learnParams: boolean;
  /**
   * Learn origins a site moved away from (`http://` → `https://`, `example.com` ↔
   * `www.example.com`): once three URLs of an origin answered a permanent redirect (301, 308)
   * to the same path on the moved form (an `OriginAliases`; a page served by the old origin, or
   * a redirect elsewhere, bans it), links into the old origin are taken to the new one before
   * they are keyed, saving a redirect per URL (`CrawlCounts.aliasRewrites`). The same for a
   * section of a site (origin and first path segment) whose URLs redirect to add or drop a
   * trailing slash: once three did (a `SlashRules`; a page served where the rule would move it
   * bans it), links into the section are written its way. And origins that ignore the letter
   * case of paths (IIS): once two paths were each served the same under two spellings (a
   * `PathCase`: the same bytes or text, neither naming another URL canonical; a 404 or another
   * page under another spelling bans it, a few spellings it would refuse are fetched as checks),
   * links to the origin are taken to the spelling of their path met first
   * (`CrawlCounts.caseRewrites`); and origins
   * that serve a directory's index file as the directory (`/a/index.html` = `/a/`; a `PathCase`
   * with `fold: 'index'`), their links taken to the spelling met first
   * (`CrawlCounts.indexRewrites`). And URL shapes whose URLs redirect into their parent page (a
   * forum's post permalink `/threads/t.1/post-5` → the thread's page holding the post) or serve a
   * copy of it (a Q&A site's answer link `/questions/7/title/9` showing the question's page, its
   * canonical the question, its text and links the question's): once eight URLs of a shape did and none
   * served a page of its own (a `ParentRedirects`), its queued
   * URLs are not fetched once the crawl fetched the parent page, but for seeds, URLs fetched
   * before and checks (the 1st, 2nd, 4th, 8th, 16th refusals, then every 32nd); a check that
   * serves a page of its own (not a copy), shows a page under the parent the crawl does not hold,
   * or redirects under the parent to a page
   * the crawl did not hold (a slug completed), lifts the lesson and queues them again
   * (`CrawlSummary.parentRedirects`, `CrawlCounts.parentRedirects`). And URL shapes whose URLs
   * redirect where the crawl does not go (a `DeadEndRedirects`: StackExchange's `/posts/5/edit`
   * to a login form `LoginWalls` walled, a share button's `?share=twitter` to another site, a
   * path robots.txt disallows, a short link into a shape another lesson refuses): once eight URLs
   * of a shape did and none served a page nor, once one was a dead end, led to a page the crawl
   * had not met (before, a redirect to a login form not yet walled is one), its queued URLs are not fetched but
   * for seeds, URLs fetched before and checks (as above), one of which, serving a page or leading
   * to a new one, lifts the lesson and queues them again (`CrawlSummary.deadEndRedirects`,
   * `CrawlCounts.deadEndRedirects`). And URL shapes whose pages are copies of another page of
   * their origin that they name canonical (a `NamedCopies`: Drupal's comment permalink
   * `/comment/512` serving the article's page, naming the article): once eight URLs of a shape
   * served such a copy — the named page fetched at no greater link depth, its text within 3
   * simhash bits, no link the crawl did not know, a link to itself — and none a page of its own,
   * its queued URLs are not fetched but for seeds, URLs fetched before and checks (as above), one
   * of which serving a page of its own or naming a page the crawl did not reach otherwise lifts
   * the lesson, as does a redirect to a page the crawl had not met, and queues them again
   * (`CrawlSummary.namedCopies`, `CrawlCounts.namedCopies`); a page of such a shape naming another
   * page of its origin the crawl has no row for queues it. Default true; the checkpoint keeps the
   * aliases, slash rules, case, index, parent-redirect, dead-end and named-copy lessons learned
   * and banned.
   */
  readonly learnAliases: boolean;
  /**
   * Learn URL shapes whose pages ask not to be indexed nor followed (`<meta name="robots"
   * content="noindex,nofollow">` or X-Robots-Tag): a wiki's edit forms, histories and old
   * revisions, a shop's cart and account pages. A shape is the origin, the path with each segment
   * holding a digit as `*`, and the query's key names (`/w/index.php?action=*&title=*`), or the
   * last segment as `*` without a query (`/wiki/Special:WhatLinksHere/*`). Once eight distinct
   * URLs of a shape said noindex and nofollow (soft-404s, once recognised, teach nothing) and
   * none of it said otherwise, its queued URLs are not fetched but for seeds, recrawls, and
   * checks — the 1st, 2nd, 4th, 8th and 16th refusals, then every 32nd — one of which, finding a
   * page to index or follow, lifts the lesson and queues the refused URLs again
   * (`NoindexShapes`, `CrawlSummary.noindexShapes`, `CrawlCounts.noindexSkipped`). Nothing
   * reachable is lost through such a page: its links would not have been followed anyway; a
   * shape that mixes such pages with content refuses content pages until a check finds one.
   * Default true; false fetches every such page (an archive that keeps whatever a site serves).
   * The checkpoint keeps the shapes learned and banned. In a cluster each node learns from the
   * pages it fetches, and a slot that moves to another node has its refused URLs asked again
   * there (a lesson stays with the process that learned it).
   */
  readonly learnNoindex: boolean;
  /**
   * Keep the cookies sites set and send them back for the rest of the run, as a browser does
   * (a `CookieJar`, RFC 6265: domain, path, expiry and Secure rules, at most 50 per site and
   * 10,000 in all): many sites answer a client without cookies with a redirect to the same page
   * that sets one, and a redirect to the URL itself is fetched again (it is retried, up to
   * `retryLimit`) so the page comes with the cookie. Memory only: a resumed run starts without
   * cookies. Default true; ignored when `fetcher` is given (`http.cookies` names a jar of your
   * own).
   */
  readonly cookies: boolean;
  /** Distinct URLs of a host sharing one body that make it a soft-404 template. Default 5. */
  readonly soft404Threshold: number;
  /**
   * Before a body shared by `soft404Threshold` URLs of a host is read as its not-found page, fetch
   * one made-up URL beside the last of them (`soft404ProbeUrl`: the part its URLs differ in — a
   * version, a commit, an id — made up in its class: a number by a ten-digit one, a hash by a hash,
   * a word by a `meguri-soft404-probe-…` token) and ask: a site answers a URL that does not exist with its
   * not-found page, not with a page's copies (versioned docs, a forge's file at every commit, a
   * mirror, when they name no canonical). Answered not found (404, 410) or with another page, the
   * body is a page's and its URLs stay pages (a made-up number the site has is fetched as the page
   * it is); with the same body, a redirect, an error, or no answer within 20 more URLs of it, a
   * template as without the probe. One probe per shape of URL in flight (its reply answers the
   * later bodies of the shape), first on its host and at its page's depth, under robots.txt and
   * the scope; the body's URLs are pages until the answer. Default true; false reads the body as
   * the template at the threshold.
   */
  readonly soft404Probe: boolean;
  /** Checkpoint period, ms (also at stop and at the end); a period with nothing journaled writes none, for up to an hour (an idle crawl). Default 60 000. */
  readonly checkpointIntervalMs: number;
  /**
   * The longest the run sleeps with nothing in flight for the next fetch the frontier allows
   * (a host's Retry-After, a robots.txt retry, an interval): past it the run ends with stop
   * reason `waiting` and `CrawlSummary.resumeAtMs` instead of idling — what was asked is
   * obeyed, the checkpoint keeps it, and a resume after that time fetches the rest. Never less
   * than the politeness ceiling or `maxCrawlDelayMs` (a slow host is no reason to end), and not
   * with `recrawl` or `freshness` (a continuous crawl waits by design). Default Infinity (wait).
   */
  readonly maxWaitMs: number;
  /** fsync the journal every N records — fetch starts and outcomes (0: at checkpoints and the end of a run only; a killed process loses nothing either way, this is for power loss). Default 0. */
  readonly journalSyncEvery: number;
  /**
   * Called synchronously before each checkpoint is written (at open, every
   * `checkpointIntervalMs`, at the end; single-process mode): make durable here the outputs of
   * every page taken so far — the CLI fdatasyncs its WARC file and pages.jsonl. The checkpoint
   * marks those pages done, and a done page is never fetched again, so outputs still in the page
   * cache at a power cut would be lost for good. A throw skips the checkpoint (the previous one
   * stands), ends the run with that error, and no later checkpoint of the run is written — not
   * even the end-of-run one (a failed fsync may have dropped the data it was syncing, so a retry
   * that succeeds proves nothing). Not called for a cluster slot's checkpoints,
   * which are cut on the node's schedule, pages not yet taken included (cluster-mode.ts).
   * Default none.
   */
  readonly beforeCheckpoint: (() => void) | undefined;
  /** Clock in epoch ms, monotonic (default: `performance.timeOrigin + performance.now()`). */
  readonly clock: () => number;
  /** Aborting it stops the crawl: in-flight fetches are cut, a checkpoint is written, `run()` ends. */
  readonly signal: AbortSignal | undefined;
  /** Install SIGINT/SIGTERM handlers for the run: the first stops gracefully, a second aborts in-flight fetches. Default false. */
  readonly handleSignals: boolean;
  /** Called with progress stats every `progressIntervalMs` (also emitted as the `progress` event). */
  readonly onProgress: ((progress: Progress) => void) | undefined;
  /** Period of progress reports, ms. Default 1000. */
  readonly progressIntervalMs: number;
  /** A custom fetcher (tests, proxies); default an `HttpFetcher` built from these options. */
  readonly fetcher: Fetcher | undefined;
  /** Extra `HttpFetcher` options (timeouts, body caps, TLS, headers). */
  readonly http: Readonly<Partial<HttpFetcherOptions>> | undefined;
  /** The crawl's canonicalization policy, pinned for its whole life. Default src/url's. */
  readonly canonPolicy: CanonPolicy | undefined;
  /**
   * A pino-compatible logger (`info/warn/error/debug(object, message)`): start, resume, stop,
   * host transitions, checkpoints, fetch errors (src/observe). Default none: silent.
   */
  readonly logger: Logger | undefined;
  /**
   * Prometheus metrics (prom-client, an optional dependency): `{ port }` serves `/metrics` on
   * 127.0.0.1, `{ registry }` registers into yours (src/observe/metrics.ts). Default none.
   */
  readonly metrics: MetricsOptions | undefined;
  /**
   * Cluster mode: this engine joins (or creates) crawl `cluster.crawl`, coordinated through
   * Redis, and runs whichever slots the coordinator gives it (src/engine/cluster-mode.ts).
   * Default none: a single-process crawl.
   */
  readonly cluster: EngineClusterOptions | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

let memoryBudgetFloor = MIN_MEMORY_BUDGET;

/**
 * Internal test seam: the smallest `memoryBudget` > 0 the validator takes (default
 * `MIN_MEMORY_BUDGET`; `undefined` restores it). The engine's disk-tier tests crawl a simulated
 * web of a few hundred pages, which spills only under a budget of tens of KiB. Not exported
 * from the package.
 */
export function setMemoryBudgetFloor(bytes: number | undefined): void {
  memoryBudgetFloor = bytes ?? MIN_MEMORY_BUDGET;
}

/**
 * The rule on `memoryBudget`'s size (0 = no disk tier, else at least `MIN_MEMORY_BUDGET`): the
 * one place it is checked. Returns the problem, if any.
 */
function memoryBudgetProblem(budget: number): string | undefined {
  if (budget === 0 || budget >= memoryBudgetFloor) return undefined;
  return (
    `memoryBudget (${budget}) is below the minimum of ${memoryBudgetFloor} bytes (${memoryBudgetFloor % (1 << 20) === 0 ? `${memoryBudgetFloor / (1 << 20)} MiB` : `${memoryBudgetFloor / 1024} KiB`}): ` +
    'under it the frontier runs past the budget by up to 1 MiB (it sheds again only after that much growth); ' +
    `give at least ${memoryBudgetFloor}, or 0 for no disk tier`
  );
}

const POLITENESS_KEYS = ['minDelayMs', 'startDelayMs', 'maxDelayMs', 'ipMinDelayMs', 'ipMaxInFlight', 'backoff', 'narrowMs', 'narrowShare', 'softWiden', 'latencyRise'];

const HTTP_OWNED = ['agent', 'allowPrivate', 'dns', 'now'];

const maxPagesField: FieldSpec<number> = {
  expects: 'a positive integer or Infinity',
  check: (v, fail) => (typeof v === 'number' && (v === Infinity || (Number.isInteger(v) && v > 0)) ? v : fail()),
  fallback: () => Infinity,
};

/** A duration that may be Infinity ("wait as long as asked"), the default of `maxWaitMs`. */
const waitField: FieldSpec<number> = {
  expects: 'a number of milliseconds >= 0, or Infinity',
  check: (v, fail) => (typeof v === 'number' && v >= 0 ? v : fail()),
  fallback: () => Infinity,
};

const stringsField: FieldSpec<readonly string[]> = {
  expects: 'an array of strings',
  check: (v, fail) => (Array.isArray(v) && v.every((s) => typeof s === 'string') ? Object.freeze([...(v as string[])]) : fail()),
  fallback: () => Object.freeze([]),
};
const seedsField: FieldSpec<readonly string[]> = { ...stringsField, expects: 'an array of URL strings' };

const agentField: FieldSpec<string> = userAgentField;

/**
 * The default engine clock: epoch ms from the monotonic clock. `performance.timeOrigin` is a
 * getter and fixed for the thread, so it is read once (the loop reads the clock several times
 * per page).
 */
const TIME_ORIGIN = performance.timeOrigin;
function monotonicEpochMs(): number {
  return TIME_ORIGIN + performance.now();
}

/** Validates engine options (throws `InvalidArgumentError` naming the option). */
export const resolveEngineOptions = defineOptions<EngineOptions>(
  'EngineOptions',
  {
    seeds: seedsField,
    sitemaps: seedsField,
    robotsSitemaps: booleanField(true),
    requisites: booleanField(false),
    agent: agentField,
    dataDir: customField<string | undefined>('a directory path (non-empty string)', (v): v is string => typeof v === 'string' && v !== ''),
    memoryBudget: numberField({ min: 0, integer: true, default: 0 }),
    concurrency: numberField({ min: 1, max: 100_000, integer: true, default: 64 }),
    maxPages: maxPagesField,
    maxRequests: maxPagesField,
    scope: enumField<CrawlScope>(CRAWL_SCOPES, 'domain'),
    include: { ...stringsField, expects: 'an array of glob patterns' },
    exclude: { ...stringsField, expects: 'an array of glob patterns' },
    handlerRetries: numberField({ min: 0, max: 100, integer: true, default: 2 }),
    onHandlerError: functionField<(error: unknown, page: Page) => void>() as FieldSpec<((error: unknown, page: Page) => void | Promise<void>) | undefined>,
    extraSettings: customField<Readonly<Record<string, unknown>> | undefined>('a JSON-serializable object', (v): v is Record<string, unknown> => isObject(v)),
    maxDepth: numberField({ min: 0, max: 0xffff, integer: true, default: 32 }),
    maxUrlsPerHost: numberField({ min: 0, integer: true, default: 100_000 }),
    allowPrivate: booleanField(false),
    resolve: functionField<EngineResolve>() as FieldSpec<EngineResolve | undefined>,
    politeness: customField<EnginePoliteness | undefined>(
      `an object with some of ${POLITENESS_KEYS.join(', ')}`,
      (v): v is EnginePoliteness => isObject(v) && Object.keys(v).every((k) => POLITENESS_KEYS.includes(k)),
    ),
    maxCrawlDelayMs: numberField({ min: 0, default: 30_000 }),
    grouping: enumField<HostGrouping>(['host', 'registrable', 'origin'], 'registrable'),
    robots: booleanField(true),
    robotsRetryMs: numberField({ above: 0, default: 60_000 }),
    robotsMaxAttempts: numberField({ min: 1, max: 1000, integer: true, default: 5 }),
    robotsTtlMs: numberField({ min: 0, default: 24 * 3_600_000 }),
    retryLimit: numberField({ min: 0, max: 255, integer: true, default: 3 }),
    maxRedirects: numberField({ min: 0, max: 1000, integer: true, default: 10 }),
    recrawl: booleanField(false),
    freshness: customField<FreshnessHook | undefined>(
      'a function or an object with nextDue()',
      (v): v is FreshnessHook => typeof v === 'function' || (isObject(v) && typeof v['nextDue'] === 'function'),
    ),
    recrawlBudget: numberField({ above: 0, default: 3600 }),
    prioritize: booleanField(true),
    trapDetection: booleanField(true),
    learnParams: booleanField(true),
    learnAliases: booleanField(true),
    learnNoindex: booleanField(true),
    cookies: booleanField(true),
    soft404Threshold: numberField({ min: 2, max: 1 << 16, integer: true, default: 5 }),
    soft404Probe: booleanField(true),
    checkpointIntervalMs: numberField({ above: 0, default: 60_000 }),
    maxWaitMs: waitField,
    journalSyncEvery: numberField({ min: 0, integer: true, default: 0 }),
    beforeCheckpoint: functionField<() => void>() as FieldSpec<(() => void) | undefined>,
    clock: functionField<() => number>(monotonicEpochMs),
    signal: customField<AbortSignal | undefined>('an AbortSignal', (v): v is AbortSignal => v instanceof AbortSignal),
    handleSignals: booleanField(false),
    onProgress: functionField<(progress: Progress) => void>() as FieldSpec<((progress: Progress) => void) | undefined>,
    progressIntervalMs: numberField({ above: 0, default: 1000 }),
    fetcher: customField<Fetcher | undefined>('an object with fetch(request, signal)', (v): v is Fetcher => isObject(v) && typeof v['fetch'] === 'function'),
    http: customField<Readonly<Partial<HttpFetcherOptions>> | undefined>(
      `HttpFetcher options other than ${HTTP_OWNED.join(', ')}`,
      (v): v is Partial<HttpFetcherOptions> => isObject(v) && Object.keys(v).every((k) => !HTTP_OWNED.includes(k)),
    ),
    canonPolicy: customField<CanonPolicy | undefined>('a CanonPolicy (see canonPolicy())', (v): v is CanonPolicy => isObject(v)),
    logger: customField<Logger | undefined>(
      'a logger with debug, info, warn and error methods (pino or compatible)',
      (v): v is Logger => typeof v === 'object' && v !== null && ['debug', 'info', 'warn', 'error'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function'),
    ),
    cluster: customField<EngineClusterOptions | undefined>(
      `an object with redis (URL), crawl (name), store (directory) and optionally slots, durability, heartbeatTtlMs, checkpointMs, pollMs, nodeId`,
      isEngineClusterOptions,
    ),
    metrics: customField<MetricsOptions | undefined>(
      'an object with some of port (0–65535), host, registry (a prom-client Registry), prefix',
      (v): v is MetricsOptions =>
        isObject(v) &&
        Object.keys(v).every((k) => ['port', 'host', 'registry', 'prefix'].includes(k)) &&
        (v['port'] === undefined || (Number.isInteger(v['port']) && (v['port'] as number) >= 0 && (v['port'] as number) <= 65535)) &&
        (v['registry'] === undefined || isMetricsRegistry(v['registry'])),
    ),
  },
  (o) => {
    if (typeof o.agent !== 'string') return 'agent is required: the User-Agent to send, e.g. "MyBot/1.0 (+https://example.com/bot)"';
    const budgetProblem = memoryBudgetProblem(o.memoryBudget);
    if (budgetProblem !== undefined) return budgetProblem;
    if (o.memoryBudget > 0 && o.dataDir === undefined) return 'memoryBudget needs dataDir: the disk tier lives in the data directory';
    if (o.cluster !== undefined && o.memoryBudget > 0) {
      // Measured (100,000 queued URLs, 2 MiB budget): after one full image the frontier holds
      // 14.0 MB against 8.3 MB all resident, and the image takes 346 ms against 128 ms.
      return (
        `memoryBudget (${o.memoryBudget}) is not supported with cluster: a slot checkpoint is a full image, which reads ` +
        'every URL the slot spilled back into its frontier (whose tables keep that size), so the budget would not bound memory; ' +
        'run cluster nodes without memoryBudget (docs/CLUSTER.md)'
      );
    }
    try {
      enginePolitenessConfig(o.politeness);
    } catch (err) {
      if (err instanceof InvalidArgumentError) return `politeness: ${err.message}`;
      throw err;
    }
    const ceiling = o.politeness?.maxDelayMs ?? 300_000;
    if (o.maxCrawlDelayMs >= ceiling) {
      return `maxCrawlDelayMs (${o.maxCrawlDelayMs}) must be below politeness.maxDelayMs (${ceiling}): a host held at the ceiling counts as dead`;
    }
    return undefined;
  },
);

/** `EnginePoliteness.minDelayMs` when not given, ms. */
export const DEFAULT_MIN_DELAY_MS = 250;

/**
 * The frontier's `PolitenessConfig` from the embedder's overrides: `minDelayMs` → floor,
 * `startDelayMs` → the interval of a new host (default max(1000, floor)), `maxDelayMs` →
 * ceiling, `ipMinDelayMs` → the per-IP floor (default: the host floor), `ipMaxInFlight` → the
 * per-IP in-flight cap.
 * @throws InvalidArgumentError for values the policy rejects.
 */
export function enginePolitenessConfig(p: EnginePoliteness | undefined): Readonly<PolitenessConfig> {
  const floor = p?.minDelayMs ?? DEFAULT_MIN_DELAY_MS;
  const partial: { -readonly [K in keyof PolitenessConfig]?: PolitenessConfig[K] } = {
    floorMs: floor,
    defaultIntervalMs: p?.startDelayMs ?? Math.max(1000, floor),
    ipFloorMs: p?.ipMinDelayMs ?? floor,
  };
  if (p?.maxDelayMs !== undefined) partial.ceilingMs = p.maxDelayMs;
  if (p?.ipMaxInFlight !== undefined) partial.ipMaxInFlight = p.ipMaxInFlight;
  if (p?.backoff !== undefined) partial.backoff = p.backoff;
  if (p?.narrowMs !== undefined) partial.narrowMs = p.narrowMs;
  if (p?.narrowShare !== undefined) partial.narrowShare = p.narrowShare;
  if (p?.softWiden !== undefined) partial.softWiden = p.softWiden;
  if (p?.latencyRise !== undefined) partial.latencyRise = p.latencyRise;
  for (const [k, v] of Object.entries(p ?? {})) {
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v))) {
      throw new InvalidArgumentError(`politeness.${k}: expected a finite number, received ${describeValue(v)}`);
    }
  }
  return politenessConfig(partial);
}
