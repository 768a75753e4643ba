/**
 * `Engine`: the live crawl loop around one frontier partition.
 *
 * Why this file is over 600 lines: what is left here is one state machine — the table of
 * fetches in flight (`#flights`), the pages waiting for the consumer (`#outputs`), the phase
 * (new → running → ended → closed) and the stop/abort flags — and every method below reads or
 * changes that state together: dispatch adds a flight, completion shapes its page, the ack
 * journals and reports it and frees the slot, stop/abort/close wind the same table down, and
 * the checkpoint writes the flights back as schedulable. Split across files, each piece would
 * need the whole table passed in and the invariants ("an outcome is journaled only after the
 * consumer took its page", "a flight is dropped exactly once") would be kept in several
 * places. Everything that is not that state machine lives in the sibling files listed below.
 *
 * ```
 *  driver (timers, completions)                        consumer (for await … of run())
 *  ───────────────────────────                        ────────────────────────────────
 *  fill: while slots free ─ frontier.dispatch(now) ─┐
 *        journal 'd'   → fetcher.fetch(req) ────────┤   (robots.txt / DNS: frontier's seams;
 *                                                   │    each robots.txt answer: journal 'r')
 *  sleep until nextEligible / a completion / stop   │
 *                                                   ▼
 *                          outcome → soft-404, origins, change → outputs ─► yield page
 *                                                                             │ next()
 *                          journal 'o' → frontier.report (links, politeness) ◄┘ = ack
 *  every checkpointIntervalMs: .meguri checkpoint (generation g+1), fresh journal g+1
 *    (skipped while nothing was journaled since the last, for up to IDLE_CHECKPOINT_MS)
 * ```
 *
 * A fetch holds its slot from dispatch until the consumer has taken its page (the `ack`),
 * and only then is its outcome journaled and reported. So the frontier's state — and every
 * checkpoint of it — contains exactly the outcomes the consumer has seen; a URL whose page
 * was not yet taken is in flight and is written back as schedulable. After a crash, the
 * checkpoint plus the journal's outcome records (replayed through `Frontier#replay`) rebuild
 * the state: every journaled fetch stays done, and only fetches in flight at the crash are
 * made again. The journal's dispatch records also keep the host and IP intervals across the
 * crash (`Frontier#recordStart`). Each robots.txt answer is journaled too ('r', before the
 * RobotsCache acts on it: journaled, then applied) and restored on resume, so the resumed
 * process neither asks again for rules the killed one had read nor sends anything to a host
 * before a Retry-After its robots.txt answered has ended (the robots gate holds the group).
 *
 * Politeness is entirely the frontier's: the engine only asks `dispatch(now)` and sleeps until
 * `nextEligible()`; robots.txt and DNS go through the frontier's seams, so even a robots.txt
 * request is paced as a fetch start.
 *
 * The seams, one file each, each called in one direction (the engine wires them once, in its
 * constructor; none holds a reference back to the engine, only the callbacks it was given):
 *
 *   host-directory.ts  group → origins and hostnames (every URL registers before it enters)
 *   dns-seam.ts        the frontier's DNS seam; the address a URL is pinned to
 *   robots-gate.ts     the frontier's robots seam; owns the RobotsCache and the robots.txt
 *                      request path: gate → cache → gate.paced → send-gate → fetcher
 *   send-gate.ts       per-IP send order of content and robots.txt requests (undici's
 *                      sendHeaders), reading each address's interval through `Frontier#ipIntervalMs`
 *   datadir.ts         lock, checkpoint (.meguri + engine state) and journal files
 *   records.ts         journal record codec; redirect-hops.ts the maxRedirects counts
 *   scope.ts           which URLs the crawl may fetch (scope over the seeds, globs)
 *   settings.ts        the settings saved with the crawl (settings.json) and a resume's overrides
 *   tally.ts           the end summary's counts; run-types.ts its types; crawl.ts `crawl()`
 *   cluster-mode.ts    the `cluster` option: `run()` then drives src/cluster's ClusterNode (its
 *                      slot life cycle) with these same seams instead of the one frontier
 */
import { EventEmitter, setMaxListeners } from 'node:events';
import { join } from 'node:path';
// The frontier's disk tier (memoryBudget) writes through src/disk; importing it registers the backend.
import '../disk/spill-files.js';
import { isCoreLoaded } from '../core/instance.js';
import { keyFromHex, keyToHex } from '../core/keys.js';
import { loadCoreSync } from '../core/node.js';
import { AnchorCopies, DeadEndRedirects, type DeadEndVerdict, NamedCopies, type NamedCopyVerdict, type NamedPage, type ShapeChange, type ShapeLessons, carriesPage, namedAboveVerdict, namedCopyVerdict, namesAncestor, namesItself, type AliasRecord, type CopyRecord, KnownCopies, NoindexShapes, type NoindexRecord, ParentRedirects, type ParentRedirectVerdict, parentCopyVerdict, parentRedirectOf, type ShapeRecord, ViewKeys, type ViewRecord, type AnchorRecord, type CaseLesson, type CaseRecord, LoginWalls, NavigationEcho, OriginAliases, PagingEnd, ParamLearner, type ParamNumbersRecord, type ParamRecord, PathCase, type SlashRecord, type SlashRule, SlashRules, SoftDetector, type SoftProbe, TrapDetector, type WallRecord, anchorShapeOf, isUrlLessPairs, wallScopeOf } from '../dedup/index.js';
import { CorruptBucketError, CorruptPartitionError, DiskFullError, InvalidArgumentError, InvalidStateError } from '../errors/index.js';
import { splitSeedCredentials } from './credentials.js';
import { CookieJar, DnsCache, type Fetcher, HttpFetcher, type RobotsFetch, type RobotsSnapshot } from '../fetch/index.js';
import { type BlockCounts, type CrawledUrl, type FreshnessHook, type FrontierOptions, Frontier, type TrapSeam } from '../frontier/index.js';
import { withFreshness } from '../freshness/index.js';
import { type FetchRequest, HostFlags, type Link, type Outcome, URL_STATUS_NAMES, UrlStatus, countsAsPage, isSelfRedirect, isUnchangedSitemap, refreshTargetOf } from '../model/index.js';
import { type PolitenessConfig, isUnreachable } from '../politeness/index.js';
import { hostGroupKey, originEnd, sameOrigin, splitOrigin, withoutQuery } from '../url/host.js';
import { DEFAULT_POLICY, canonicalize } from '../url/index.js';
import { Connectivity } from './connectivity.js';
import { CHECKPOINT_FILE, DISK_DIR, DataDir, PREV_CHECKPOINT_FILE, type Recovered, refuseSingleProcessCrawl } from './datadir.js';
import { DnsSeam } from './dns-seam.js';
import { HostDirectory, originKey } from './host-directory.js';
import { RedirectHops } from './redirect-hops.js';
import { RobotsGate, robotsFetchOf } from './robots-gate.js';
import { SlotRobots } from './slot-robots.js';
import { type EngineOptions, enginePolitenessConfig, resolveEngineOptions } from './options.js';
import { type Page, makePage } from './page.js';
import type { CrawlSummary, EngineEvents, RecoveryInfo, RefusedSeed, SeedRedirect, StopReason, UnreachableRobots } from './run-types.js';
import { CRAWL_SCOPES, type CrawlScope, Scope, type ScopeReason } from './scope.js';
import { type SettingChange, checkCrawlId, mergeSettings, newCrawlId, readCrawlId, readCrawlSettings, writeCrawlSettings } from './settings.js';
import { Tally } from './tally.js';
import { type DispatchRecord, type OutcomeRecord, type JournalRecord, type ProbeNote, outcomeRecord, recordOutcome, replyOf } from './records.js';
import { type HostExtra, type HostStatus, type Progress, type RobotsOutageRecord, clockTime, countHosts, explainHost, robotsGaveUpText, robotsOutageText } from './status.js';
import { SendGate } from './send-gate.js';
import { robotsSitemaps, sitemapKey, snapshotSitemaps } from './sitemaps.js';
import { SitemapHints } from '../sitemap/index.js';
import { type EngineMetrics, attachLogger, startMetrics } from '../observe/index.js';
import { Waker } from './waker.js';
import type { ClusterNode, ClusterNodeStats } from '../cluster/node.js';
import type { CrawlSettings as ClusterCrawlSettings } from '../cluster/settings.js';
import { clusterNodeOf } from './cluster-mode.js';
import { evictOldest } from '../lru/index.js';
import { AskedProbes } from './soft-probes.js';

const HOUR_MS = 3_600_000;

/**
 * Fetch starts a checkpoint keeps at most (`EngineState.fetchStarts`): the flights' (at most
 * `concurrency`) plus those of earlier runs' kills not fetched again yet — a handful each, so
 * only a loop of kills of a crawl whose interrupted URLs are never fetched again (refused by a
 * resume's new scope) comes near it; past it the oldest are dropped (≈ 100 bytes each).
 */
const MAX_FETCH_STARTS = 10_000;

/**
 * An idle crawl (nothing journaled since its last checkpoint: every host waits, a `--recrawl`
 * crawl between due hours) writes its periodic checkpoint at most this often. The last one
 * still holds the crawl — its journal is empty — and rewriting it every minute rewrote the
 * whole frontier for nothing (measured 142 B per URL of 55 characters: 140 MB a minute for
 * a million URLs). Not never:
 * state that changes without a record (a freshness pass re-timing waiting URLs, refused names
 * asked again) is saved within this; a resume redoes either anyway.
 */
const IDLE_CHECKPOINT_MS = HOUR_MS;

/**
 * A request that reaches the fetcher more than this after its dispatch has its host's and IP's
 * windows count from then (`#launch`); within it, from the dispatch. So the fetcher may see two
 * starts of one host up to this much closer than the interval.
 */
const LATE_START_MS = 0.5;

/** Rewritten links remembered until their fetch (`Engine#rewritten`): ≈ 150 B each. */
const MAX_REWRITTEN = 65_536;

/**
 * A section's trailing-slash rule as the summary lists what links are taken to
 * (`CrawlSummary.learnedAliases`): `http://x/blog/…` → `http://x/blog/…/` (add) or back (strip).
 */
function slashAlias(r: { readonly section: string; readonly rule: SlashRule }): { from: string; to: string } {
  const bare = `${r.section}…`;
  const slashed = `${r.section}…/`;
  return r.rule === 'add' ? { from: bare, to: slashed } : { from: slashed, to: bare };
}

interface Flight {
  readonly req: FetchRequest;
  /** The URLKey in hex for the journal ('' without a data directory). */
  readonly key: string;
  /** origin + path, as undici names the request; undefined when sends are not watched. */
  sendId: string | undefined;
  /** The outcome as the frontier will be told it (set on completion). */
  reported: Outcome | undefined;
  /** Links and redirect target out of scope, with why (refused at the ack, never fetched). */
  outside: { url: string; reason: ScopeReason }[];
  page: Page | undefined;
  /** What its journal record says of a soft-404 probe (asked by this page, or this page's the reply). */
  note: ProbeNote | undefined;
}

interface Counters {
  dispatched: number;
  completed: number;
  s2xx: number;
  s3xx: number;
  s4xx: number;
  s429: number;
  s5xx: number;
  errors: number;
  soft404: number;
  bytes: number;
  checkpoints: number;
}

/** `l` without the refresh mark (an ordinary link of its page). */
function unmarkRefresh(l: Link): Link {
  return l.refresh === true ? { ...l, refresh: undefined } : l;
}

/**
 * The simhash of `url`'s page as `frontier` holds it fetched (`Frontier.fetchedSimhashOf`), under
 * its own spelling or, failing that, with the trailing slash added or dropped: a page named
 * canonical (a parent, a page above) is one page under either.
 */
function fetchedSimhashEitherSlash(frontier: Frontier, url: string): bigint | undefined {
  return frontier.fetchedSimhashOf(url) ?? frontier.fetchedSimhashOf(url.endsWith('/') ? url.slice(0, -1) : `${url}/`);
}

/**
 * A crawl: `for await (const page of engine.run())` yields every fetched page; `close()`
 * releases everything. See the module comment for the loop and its crash safety.
 */
export class Engine extends EventEmitter<EngineEvents> {
  #options: Readonly<EngineOptions>;
  /** Whether the caller chose the grouping (otherwise a resumed crawl keeps its own). */
  readonly #groupingGiven: boolean;
  /** The freshness hook in force: the caller's, or meguri's scheduler in continuous mode. */
  readonly #freshness: FreshnessHook | undefined;
  /** Sitemap lastmod hints (continuous mode only). */
  readonly #hints: SitemapHints | undefined;
  /** Prometheus metrics being started (`metrics` option). */
  readonly #metrics: Promise<EngineMetrics> | undefined;
  /** Sitemaps named by robots.txt answers, seeded at the next fill (single-process; cluster mode sends them through the node). */
  readonly #sitemapQueue: string[] = [];
  /** The seeds as canonical URLs, for the seed-redirect rule (`#seedRedirect`); built when first asked, dropped when seeds are added. */
  #seedSet: Set<string> | undefined;
  /** Cluster mode: the crawl's scope seeds as this node knows them (every node's, read from Redis), for the seed-redirect rule. */
  readonly #crawlSeeds = new Set<string>();
  /**
   * Unreachable robots.txt answers after which a campaign gives an origin up; undefined in
   * continuous mode, which never gives up (see `EngineOptions.robotsMaxAttempts`).
   */
  readonly #robotsGiveUp: number | undefined;
  /** The politeness policy in force. */
  readonly policy: Readonly<PolitenessConfig>;
  readonly #clock: () => number;
  readonly #dns: DnsCache;
  /** Whether the crawl is offline (its own network down): read by every frontier, the robots gate and progress. */
  readonly #connectivity = new Connectivity();
  readonly #fetcher: Fetcher;
  readonly #cookies: CookieJar | undefined;
  readonly #ownsFetcher: boolean;
  readonly #directory: HostDirectory;
  readonly #names: DnsSeam;
  readonly #gate: RobotsGate;
  readonly #soft: SoftDetector;
  /** Soft-404 probes asked and not answered yet (`EngineOptions.soft404Probe`). */
  readonly #probes: AskedProbes;
  readonly #traps: TrapDetector | undefined;
  /** Relative navigation repeated one level deeper (a catch-all path): its links are dropped. */
  readonly #echo: NavigationEcho | undefined;
  /** Listings paged past their end (`EngineOptions.trapDetection` too). */
  readonly #paging: PagingEnd | undefined;
  /** Query keys learned ignorable per section of a site (`EngineOptions.learnParams`). */
  readonly #params: ParamLearner | undefined;
  /** Query keys that select a view of a page its site names canonical (under `learnParams`). */
  readonly #views: ViewKeys | undefined;
  /** Paths answering one login form whatever is asked (under `learnParams`). */
  readonly #walls: LoginWalls | undefined;
  /** Query pairs whose pages name a URL the crawl knows as themselves (under `learnParams`). */
  readonly #copies: KnownCopies | undefined;
  /** URL shapes whose pages say noindex and nofollow (`EngineOptions.learnNoindex`). */
  readonly #noindex: NoindexShapes | undefined;
  /** URL shapes whose URLs redirect into (or copy) their parent page (`EngineOptions.learnAliases`). */
  readonly #parentRedirects: ParentRedirects | undefined;
  /** URL shapes whose URLs redirect where the crawl does not go (`EngineOptions.learnAliases`). */
  readonly #deadEndRedirects: DeadEndRedirects | undefined;
  /** URL shapes whose pages are copies of other pages they name canonical (under `learnAliases`). */
  readonly #namedCopies: NamedCopies | undefined;
  /** URL shapes whose anchored links are copies of their page (under `learnParams`). */
  readonly #anchors: AnchorCopies | undefined;
  /** Origins learned moved (`EngineOptions.learnAliases`). */
  readonly #aliases: OriginAliases | undefined;
  /** Sections' trailing-slash redirects learned (`EngineOptions.learnAliases` too). */
  readonly #slashes: SlashRules | undefined;
  /** Origins that ignore the letter case of paths, learned (`EngineOptions.learnAliases` too). */
  readonly #cases: PathCase | undefined;
  /** Origins that serve a directory's index file as the directory, learned (`EngineOptions.learnAliases` too). */
  readonly #indexFiles: PathCase | undefined;
  /**
   * Links the learners rewrote, rewritten URL → the URL as found (the first one), until the
   * rewritten URL is fetched: a 404 there refutes the lesson. At most `MAX_REWRITTEN` (oldest
   * dropped: such a link's lesson is then not checked by its fetch).
   */
  readonly #rewritten = new Map<string, string>();
  readonly #stop = new AbortController();
  readonly #driverWaker = new Waker();
  readonly #outputWaker = new Waker();
  readonly #flights = new Map<number, Flight>();
  readonly #outputs: Flight[] = [];
  readonly #rejected: string[] = [];
  readonly #refusedSeeds: RefusedSeed[] = [];
  /** Which URLs the crawl may fetch at all (scope and patterns over the seeds). */
  readonly #scope: Scope;
  readonly #tally = new Tally();
  /** Saved settings the options overrode (printed by the CLI, recorded in settings.json). */
  readonly #changes: readonly SettingChange[];
  /** The crawl's identity (settings.ts `newCrawlId`), in settings.json and every checkpoint; set when `dataDir` is opened. */
  #crawlId: string | undefined;
  /** Pages for `maxPages` in the campaign: fetched OK, soft-404s included (`countsAsPage`). */
  #ok = 0;
  /** Seeds given to `add()` before `run()` opened the crawl. */
  readonly #pendingSeeds: string[] = [];
  /** The flight whose page the `run()` loop body holds (yielded, not yet acknowledged). */
  #taken: Flight | undefined;
  /**
   * Fetch starts whose outcome no journal holds and that no flight holds any more, by URL: the
   * resume's `RecoveryInfo.interrupted`, and flights an abort dropped. Kept in every checkpoint
   * (`EngineState.fetchStarts`, with the flights') until the URL's outcome is journaled, so the
   * consumer can still tell outputs it wrote before a kill after another kill (finding 4 of the
   * crash audit: the checkpoint at open forgot them, and a page was written twice).
   */
  readonly #unfinished = new Map<string, number[]>();
  /** Resolves whoever waits in `stop()`/`abort()` once no fetch is running. */
  #quietWaiters: (() => void)[] = [];
  #summary: CrawlSummary | undefined;
  /** Redirect hops that led to each URL still to be fetched (`maxRedirects`). */
  readonly #hops: RedirectHops;
  readonly #c: Counters = { dispatched: 0, completed: 0, s2xx: 0, s3xx: 0, s4xx: 0, s429: 0, s5xx: 0, errors: 0, soft404: 0, bytes: 0, checkpoints: 0 };
  #frontier: Frontier | undefined;
  /** The data directory's files; undefined for an in-memory crawl. */
  readonly #data: DataDir | undefined;
  #generation = 0;
  /**
   * Journal records appended since the last checkpoint, plus URLs of names that resolve again
   * queued (`#recheckUnresolved`): 0 is an idle crawl (`IDLE_CHECKPOINT_MS`). What else changes
   * without a record a resume redoes: seeds given to `add()` (settings.json), refused URLs asked
   * again (`#reconsider`), a freshness pass and the recrawl wheel's hour (their hour restored).
   */
  #unsaved = 0;
  /** When the last checkpoint was written (the engine's clock). */
  #checkpointedAtMs = 0;
  #completed = 0;
  #phase: 'new' | 'running' | 'ended' | 'closed' = 'new';
  #stopping = false;
  #aborting = false;
  #reason: StopReason | undefined;
  /** With reason `waiting`: the frontier's next eligible time when the run ended. */
  #resumeAtMs: number | undefined;
  #driverDone = false;
  #driver: Promise<void> = Promise.resolve();
  #driverError: unknown;
  /**
   * The disk filled (frontier's disk tier, checkpoint or journal): the run stops as at an abort
   * and writes no further checkpoint — the last good one plus the journal is the state a resume
   * starts from, as after a crash.
   */
  #diskFull: DiskFullError | undefined;
  /**
   * `beforeCheckpoint` threw: the outputs of pages taken may not be on disk (after a failed
   * fsync, Linux may already have dropped the dirty pages, so a retry that succeeds proves
   * nothing). No later checkpoint of this run may mark them done — the end-of-run one included.
   */
  #outputsUnsynced: unknown;
  /** `dataDir` was opened (and replayed) completely: only then may a checkpoint replace the file. */
  #opened = false;
  #detach: () => void = () => undefined;
  #recovery: RecoveryInfo = { resumed: false, generation: 0, replayedOutcomes: 0, replayedDispatches: 0, replayedRobots: 0, tornBytes: 0, refetch: [], robotsInFlight: [] };
  #runStartMs = 0;
  #lastProgress = { atMs: 0, completed: 0 };
  /** The host states of the progress event being emitted (`hostStates` during its listeners), else undefined. */
  #hostsOfProgress: HostStatus[] | undefined;
  /** Per-IP send order of requests handed to undici (see send-gate.ts). */
  readonly #sends: SendGate;
  #stalls = 0;
  /** Options the caller set (cluster mode records only those in the crawl record). */
  readonly #given: ReadonlySet<string>;
  /** Cluster mode: the node running this engine's slots (from run() on). */
  #node: ClusterNode | undefined;
  /** Cluster mode: which slot each robots.txt origin belongs to (its entry travels in that slot's checkpoint). */
  readonly #slotRobots: SlotRobots | undefined;
  /** Cluster mode: pages fetched, waiting for the consumer. */
  readonly #clusterPages: Page[] = [];

  /**
   * Validates `options` (see `EngineOptions`; `agent` is required) and builds the fetcher,
   * DNS cache and robots cache. With a `dataDir` holding a crawl, its saved settings
   * (`settings.json`) fill in every option not given, and seeds are added to the saved ones;
   * an option given with another value overrides the saved one (`settingChanges`). Nothing
   * but that file is read, and nothing is written or fetched, until `run()`. In cluster mode
   * the `dataDir` holds only the lock, and a single-process crawl found there is refused.
   * @throws InvalidArgumentError naming the offending option.
   * @throws InvalidStateError in cluster mode, when `dataDir` holds a single-process crawl (its
   *   checkpoint, journal, settings.json or disk tier), naming the files and the ways out; `run()`
   *   checks again once it holds the directory's lock.
   */
  constructor(options: Partial<EngineOptions> & Pick<EngineOptions, 'agent'>) {
    super();
    // Every fetch and robots.txt load listens on the stop signal while it runs.
    setMaxListeners(0, this.#stop.signal);
    const dir = typeof options.dataDir === 'string' && options.dataDir !== '' ? options.dataDir : undefined;
    // Before its settings.json is merged in: cluster mode would not resume the crawl (datadir.ts).
    if (options.cluster !== undefined && dir !== undefined) refuseSingleProcessCrawl(dir);
    // Credentials in seed URLs go to the fetcher, never into the saved settings.
    const split = options.seeds === undefined ? undefined : splitSeedCredentials(options.seeds);
    const given = split === undefined || Object.keys(split.credentials).length === 0 ? options : { ...options, seeds: split.seeds };
    // A resumed crawl's saved settings fill in every option not given (settings.ts).
    const { options: merged, changes } = mergeSettings(dir === undefined ? undefined : readCrawlSettings(dir), given);
    this.#changes = changes;
    this.#given = new Set(Object.keys(merged).filter((k) => (merged as Record<string, unknown>)[k] !== undefined));
    const o = resolveEngineOptions(merged);
    this.#options = o;
    this.#groupingGiven = merged.grouping !== undefined;
    // Sitemaps given as starting points count as seeds for the scope.
    this.#scope = new Scope(o.scope, scopeSeedsOf(o), o.include, o.exclude);
    const freshness = o.freshness ?? (o.recrawl ? withFreshness(undefined, o.recrawlBudget) : undefined);
    // Sitemap lastmod hints wrap the scheduler in force (src/sitemap/hints.ts).
    this.#hints = freshness === undefined ? undefined : new SitemapHints(freshness, { keyOf: (url) => sitemapKey(this.#directory, url) });
    this.#freshness = this.#hints?.hook() ?? freshness;
    this.#robotsGiveUp = o.recrawl || o.freshness !== undefined ? undefined : o.robotsMaxAttempts;
    this.policy = enginePolitenessConfig(o.politeness);
    this.#clock = o.clock;
    if (!isCoreLoaded()) loadCoreSync();
    this.#dns = new DnsCache({ now: o.clock, ...(o.resolve ? { resolver: o.resolve } : {}) });
    // The jar the engine's own fetcher keeps (a fetcher given as an option keeps its own, or none).
    this.#cookies = o.fetcher || !o.cookies ? undefined : (o.http?.cookies ?? new CookieJar({ now: o.clock }));
    if (o.fetcher) {
      this.#fetcher = o.fetcher;
      this.#ownsFetcher = false;
    } else {
      this.#fetcher = new HttpFetcher({
        ...o.http,
        agent: o.agent,
        allowPrivate: o.allowPrivate,
        dns: this.#dns,
        canonPolicy: o.http?.canonPolicy ?? o.canonPolicy,
        requisites: o.http?.requisites ?? o.requisites,
        cookies: this.#cookies,
        credentials: { ...split?.credentials, ...o.http?.credentials },
        now: o.clock,
      });
      this.#ownsFetcher = true;
    }
    this.#data = o.dataDir === undefined ? undefined : new DataDir(o.dataDir);
    // Cluster mode: a slot opened from a checkpoint registers its URLs through `admitted`.
    this.#directory = new HostDirectory(o.grouping);
    const wake = (group: string): void => {
      if (this.#node !== undefined) this.#node.wake(group);
      else if (this.#frontier?.wake(group) === true) this.#driverWaker.notify();
    };
    this.#names = new DnsSeam({ dns: this.#dns, directory: this.#directory, allowPrivate: o.allowPrivate, clock: o.clock, onSettled: wake });
    // The send order reads the frontier's host intervals and re-spends its windows; the
    // frontier exists from run() on, and no request is sent before it does. Every request it
    // sees leave is one the frontier dispatched (a page) or started (a robots.txt hop).
    this.#sends = new SendGate(
      o.clock,
      (group, ip) => this.#frontierOf(group)?.ipIntervalMs(ip) ?? this.policy.ipFloorMs,
      (group, ip, atMs) => void this.#frontierOf(group)?.recordStart(group, ip, atMs, true),
    );
    this.#params = o.learnParams ? new ParamLearner() : undefined;
    this.#views = o.learnParams ? new ViewKeys() : undefined;
    this.#walls = o.learnParams ? new LoginWalls() : undefined;
    this.#copies = o.learnParams ? new KnownCopies() : undefined;
    this.#anchors = o.learnParams ? new AnchorCopies() : undefined;
    this.#noindex = o.learnNoindex ? new NoindexShapes() : undefined;
    this.#aliases = o.learnAliases ? new OriginAliases() : undefined;
    this.#slashes = o.learnAliases ? new SlashRules() : undefined;
    this.#cases = o.learnAliases ? new PathCase() : undefined;
    this.#indexFiles = o.learnAliases ? new PathCase({ fold: 'index' }) : undefined;
    this.#parentRedirects = o.learnAliases ? new ParentRedirects((url) => this.#fetchedWithPage(url)) : undefined;
    this.#deadEndRedirects = o.learnAliases ? new DeadEndRedirects() : undefined;
    this.#namedCopies = o.learnAliases ? new NamedCopies() : undefined;
    this.#gate = new RobotsGate({
      directory: this.#directory,
      names: this.#names,
      sends: this.#sends,
      scope: this.#scope,
      tally: this.#tally,
      params: this.#params,
      views: this.#views,
      knows: (url) => this.#hasRow(url),
      walls: this.#walls,
      copies: this.#copies,
      anchors: this.#anchors,
      noindex: this.#noindex,
      parentRedirects: this.#parentRedirects,
      deadEndRedirects: this.#deadEndRedirects,
      namedCopies: this.#namedCopies,
      slashes: this.#slashes,
      cases: this.#cases,
      indexFiles: this.#indexFiles,
      enabled: o.robots,
      fetch: this.#observedRobotsFetch(this.#gatedRobots(robotsFetchOf(this.#fetcher, (url) => this.#names.addressOf(url), o.clock))),
      agent: o.agent,
      ttlMs: o.robotsTtlMs,
      retryMs: o.robotsRetryMs,
      maxAttempts: this.#robotsGiveUp ?? Infinity,
      spares: (status, errorKind) => this.#connectivity.spares(status, errorKind, o.clock()),
      maxCrawlDelayMs: o.maxCrawlDelayMs,
      clock: o.clock,
      onStart: (group, url) => this.#robotsStarted(group, url),
      onAnswer: (answer) => this.#robotsAnswered(answer),
      onSettled: wake,
      signal: this.#stop.signal,
    });
    this.#slotRobots =
      o.cluster === undefined
        ? undefined
        : new SlotRobots(this.#gate, (origin) => {
            const group = this.#directory.register(`${origin}/`);
            return group === undefined ? undefined : this.#node?.slotOfGroup(group);
          });
    this.#hops = new RedirectHops(o.maxRedirects);
    // The run's own salt: a resumed crawl asks again what an earlier run asked (its URL is known).
    this.#soft = new SoftDetector({ threshold: o.soft404Threshold, probe: o.soft404Probe, probeSalt: Math.max(0, Math.floor(this.#clock())) });
    this.#probes = new AskedProbes(this.#soft);
    if (o.logger !== undefined) attachLogger(this, o.logger);
    this.#metrics = o.metrics === undefined ? undefined : startMetrics(this, o.metrics);
    this.#metrics?.catch(() => undefined); // surfaced by run()
    this.#traps = o.trapDetection ? new TrapDetector() : undefined;
    this.#echo = o.trapDetection ? new NavigationEcho() : undefined;
    this.#paging = o.trapDetection ? new PagingEnd() : undefined;
  }

  // ───────────────────────────── public surface ─────────────────────────────

  /**
   * Runs the crawl and yields each fetched page (every status, errors included: check
   * `page.ok`). Opens (or resumes) `dataDir` first. The next page is requested from the
   * generator only after the loop body returns, and only then is the page's outcome recorded:
   * a page the body has not finished with is fetched again after a crash, never lost. Breaking
   * out of the loop stops the crawl (in-flight fetches are cut and fetched again next run);
   * so does an exception thrown by the loop body — use `crawl(options, handler)` for a
   * handler whose failures are retried and recorded while the crawl goes on. Returns (as the
   * generator's value) the end summary, which `summary()` also gives. Can be called once per
   * engine.
   *
   * A full disk (ENOSPC or EDQUOT on a write of the frontier's disk tier — a shed while taking
   * links, a merge — of a checkpoint, or of the journal) stops the crawl as `abort()` does:
   * fetches in flight are cut (fetched again next run), no further checkpoint is attempted, so
   * the last good one stands (checkpoints and the tier's manifest are written to a temporary
   * file and renamed), the `end` event fires with reason `diskFull`, and the generator throws
   * the `DiskFullError` (code `MEGURI_ERR_DISK_FULL`, `file` naming the file that could not be
   * written). Once space is freed, a new engine on the same `dataDir` resumes from that
   * checkpoint plus the journal: every URL known before stays known, and only the fetches in
   * flight at the stop are made again.
   * @throws InvalidStateError when called twice or after `close()`; in cluster mode also when
   *   `dataDir` holds a single-process crawl (see the constructor), before anything is fetched.
   * @throws DiskFullError when the disk filled during the run (see above).
   */
  async *run(): AsyncGenerator<Page, CrawlSummary, undefined> {
    if (this.#phase !== 'new') throw new InvalidStateError(`Engine.run: the engine is ${this.#phase}; run() can be called once`);
    this.#phase = 'running';
    if (this.options.cluster !== undefined) return yield* this.#runCluster();
    let completedNormally = false;
    this.#detach = this.#attachSignals();
    try {
      if (this.#metrics !== undefined) await this.#metrics;
      try {
        this.#open();
      } catch (err) {
        this.#noteDiskFull(err);
        throw err;
      }
      this.#opened = true;
      this.emit('open', this.#recovery);
      this.#sends.watch(this.#fetcher instanceof HttpFetcher);
      this.#runStartMs = this.#clock();
      this.#lastProgress = { atMs: this.#runStartMs, completed: 0 };
      const driver = this.#drive().catch((err: unknown) => {
        this.#noteDiskFull(err);
        this.#driverError = err;
        this.#driverDone = true;
        this.#outputWaker.notify();
      });
      this.#driver = driver;
      try {
        for (;;) {
          const next = this.#outputs.shift();
          if (next !== undefined) {
            this.#taken = next;
            yield next.page!;
            this.#taken = undefined;
            if (this.#diskFull !== undefined) {
              // The disk filled while the body held this page (add() shed onto it): keep its
              // outcome in the journal so a resume does not fetch it again, but tell the
              // frontier nothing more — no checkpoint will be written, and a report may shed.
              this.#journalOutcome(next);
              throw this.#diskFull;
            }
            try {
              this.#ack(next);
            } catch (err) {
              this.#noteDiskFull(err);
              throw err;
            }
            continue;
          }
          if (this.#driverError !== undefined) throw this.#driverError;
          if (this.#driverDone) break;
          await this.#outputWaker.wait();
        }
        completedNormally = true;
      } finally {
        if (!completedNormally) {
          this.#taken = undefined; // the body did not finish with it: fetched again next run
          this.#abortNow(this.#reason ?? 'stopped');
        }
        this.#driverWaker.notify();
        await driver;
      }
      if (this.#driverError !== undefined) throw this.#driverError;
    } finally {
      this.#detach();
      this.#finish();
    }
    return this.summary();
  }


  /**
   * Stops dispatching; the fetches in flight complete and their pages are still yielded, then
   * a checkpoint is written and `run()` ends. Resolves once no fetch is running any more — it
   * never waits for the loop body, so `await engine.stop()` is safe inside the `for await`
   * body, from another task, twice, and before `run()` (which then opens the crawl, writes a
   * checkpoint and ends without fetching). Await the loop itself for the checkpoint.
   */
  stop(): Promise<void> {
    if (this.#phase === 'ended' || this.#phase === 'closed') return Promise.resolve();
    if (this.options.cluster !== undefined) return this.#stopCluster();
    if (!this.#stopping) {
      this.#stopping = true;
      this.#reason ??= 'stopped';
      this.#driverWaker.notify();
    }
    return this.#quiet();
  }

  /**
   * Cuts the fetches in flight (they are fetched again next run); `run()` then checkpoints and
   * ends. Resolves at once: safe from anywhere, as `stop()` is; before `run()` it makes the
   * run end without fetching.
   */
  abort(): Promise<void> {
    if (this.#phase === 'ended' || this.#phase === 'closed') return Promise.resolve();
    if (this.options.cluster !== undefined) return this.#stopCluster();
    if (this.#phase === 'new') {
      this.#stopping = true;
      this.#reason ??= 'aborted';
      return Promise.resolve();
    }
    this.#abortNow('aborted');
    return this.#quiet();
  }

  /** Resolves when no fetch is running (every one in flight has its page, or the loop ended). */
  #quiet(): Promise<void> {
    if (this.#isQuiet()) return Promise.resolve();
    return new Promise((resolve) => this.#quietWaiters.push(resolve));
  }

  #isQuiet(): boolean {
    if (this.#phase !== 'running' || this.#driverDone) return true;
    for (const f of this.#flights.values()) if (f.page === undefined) return false;
    return true;
  }

  #notifyQuiet(): void {
    if (this.#quietWaiters.length === 0 || !this.#isQuiet()) return;
    for (const resolve of this.#quietWaiters.splice(0)) resolve();
  }

  /**
   * Adds seed URLs to the crawl, running or not yet started (they widen the scope like the
   * first seeds, and are saved with the crawl's settings). Returns how many were new to the
   * frontier (before `run()`: how many were accepted) and the ones refused, with why. A URL the
   * frontier holds is not new, but it becomes a seed all the same: depth 0 (`Frontier.seedBatch`),
   * and queued if the scope had refused it as a link, by the rule a resume asks again by (a
   * copy refused under a learned rule stays refused). A
   * `user:password@` in a URL is taken out as in the `seeds` option: sent as HTTP Basic to that
   * origin by the engine's own fetcher (or an `HttpFetcher` given as `fetcher`), never saved.
   *
   * In cluster mode, once `run()` has joined the crawl, the seeds the scope takes are sent to
   * the crawl through this engine's node — recorded among the crawl's scope seeds, then routed
   * to the inboxes of the slots that own them, whichever node holds those — as the seeds given
   * at the start are. The send is asynchronous: `added` counts the seeds accepted and handed to
   * the node to send (whether each is new is known only to its slot's frontier); `refused` lists
   * the others with why, as before `run()` (in `summary().refusedSeeds` too). Until the send is
   * done the campaign does not end, and this node does not leave (after `stop()`, `close()` or the
   * campaign's end) before it reached Redis; while Redis is unreachable it waits, as the node's
   * other calls do. A send that fails (Redis answered the scope-seed record with an error) ends
   * the run: the generator throws that error once the pages already fetched are yielded, as for
   * any failure of the node. Before the run has joined the crawl, the seeds are kept and sent
   * with the first ones.
   * @throws InvalidStateError after the run ended; in cluster mode also once this node has begun
   *   to leave the crawl (the campaign drained, or `stop()` took effect): the run is ending.
   * @throws DiskFullError when shedding the new seeds met a full disk; a running crawl then
   *   ends with the same error, as `run()` describes. The seeds are still saved with the
   *   settings when that small file fits, so a resume seeds them again.
   */
  add(urls: string | readonly string[]): { added: number; refused: readonly RefusedSeed[] } {
    if (this.#phase === 'ended' || this.#phase === 'closed') throw new InvalidStateError(`Engine.add: the engine is ${this.#phase}; add seeds before or during run()`);
    const node = this.#node;
    if (node !== undefined && !node.acceptsSeeds) throw new InvalidStateError('Engine.add: the cluster run is ending (this node has left the crawl); add seeds before or during run()');
    const given = typeof urls === 'string' ? [urls] : [...urls];
    if (!given.every((u) => typeof u === 'string')) throw new InvalidArgumentError(`Engine.add: expected URL strings, received ${JSON.stringify(given)}`);
    // As the seeds option's: a user:password goes to the fetcher, never into the saved seeds
    // (settings.json), a cluster's Redis or a report. Before, added seeds kept it in all three
    // and their fetches went without it (canonical URLs have no userinfo): 401.
    const { seeds: list, credentials } = splitSeedCredentials(given);
    if (Object.keys(credentials).length > 0 && this.#fetcher instanceof HttpFetcher) this.#fetcher.addCredentials(credentials);
    this.#rememberSeeds(list);
    if (node !== undefined) return this.#addCluster(node, list);
    if (this.#frontier === undefined) {
      this.#pendingSeeds.push(...list);
      return { added: list.length, refused: [] };
    }
    const before = this.#refusedSeeds.length;
    let added: number;
    try {
      added = this.#seed(list);
    } catch (err) {
      // A shed of the new seeds met a full disk: the run ends with it as from inside the loop.
      if (this.#phase === 'running' && this.#noteDiskFull(err)) {
        // Saved with the settings all the same (a small file: it may still fit), so a resume
        // seeds them again; if it does not fit, the caller has the error and the URLs.
        try {
          if (this.#data !== undefined) writeCrawlSettings(this.#data.path, this.options, [], new Date());
        } catch {
          // the disk is full: the DiskFullError below says so
        }
        this.#driverError ??= err;
        this.#abortNow('diskFull');
      }
      throw err;
    }
    // A seed the frontier held as a link the scope refused is wanted now: queued as a resume
    // would queue it (`#reconsider`'s rule; its depth fell to 0 in the seeding). Before, it
    // stayed refused for the run. A scan of the rows, for the Refused ones only: add() is rare.
    const asked = new Set(canonicalSeeds(list, this.options.canonPolicy));
    if (asked.size > 0) this.#frontier.reconsider((url, status, depth) => status === UrlStatus.Refused && asked.has(url) && this.#mayRequeue(url, status, false, depth));
    if (this.#data !== undefined) writeCrawlSettings(this.#data.path, this.options, [], new Date());
    this.#driverWaker.notify();
    return { added, refused: this.#refusedSeeds.slice(before) };
  }

  /** The end statistics: final once `run()` has ended, the figures so far before. */
  summary(): CrawlSummary {
    if (this.#summary !== undefined) return this.#summary;
    return {
      reason: this.#reason ?? 'stopped',
      ...(this.#reason === 'waiting' && this.#resumeAtMs !== undefined ? { resumeAtMs: this.#resumeAtMs } : {}),
      progress: this.#progress(this.#clock(), false),
      recovery: this.#recovery,
      counts: this.#tally.counts(),
      okInCampaign: this.#ok,
      failingHosts: this.#tally.failingHosts(),
      blocks: this.#blockCounts(),
      unresolvedHosts: this.#tally.unresolvedHosts(),
      robotsUnreachable: this.#robotsUnreachable(),
      learnedParams: this.#params?.learned() ?? [],
      viewKeys: this.#views?.learned() ?? [],
      loginWalls: this.#walls?.learned() ?? [],
      knownCopies: this.#copies?.learned() ?? [],
      anchorCopies: this.#anchors?.learned() ?? [],
      noindexShapes: this.#noindex?.learned() ?? [],
      parentRedirects: this.#parentRedirects?.learned() ?? [],
      deadEndRedirects: this.#deadEndRedirects?.learned() ?? [],
      namedCopies: this.#namedCopies?.learned() ?? [],
      learnedAliases: [...(this.#aliases?.learned() ?? []), ...(this.#slashes?.learned() ?? []).map(slashAlias)],
      caseInsensitive: this.#cases?.learned() ?? [],
      indexFiles: this.#indexFiles?.learned() ?? [],
      rewriteMisses: this.#tally.rewriteMisses(),
      seedRedirects: this.#tally.seedRedirects(),
      handlerFailures: this.#tally.handlerFailures(),
      refusedSeeds: this.#refusedSeeds,
      settingChanges: this.#changes,
    };
  }

  /** Saved settings this engine's options overrode (empty for a new crawl). */
  get settingChanges(): readonly SettingChange[] {
    return this.#changes;
  }

  /** Seeds the settings refused (out of scope by a pattern, or not http(s)); known once `run()` opened the crawl. */
  get refusedSeeds(): readonly RefusedSeed[] {
    return this.#refusedSeeds;
  }

  /**
   * Records that `crawl()`'s handler failed on `page` for good (after its retries): counted
   * in the summary with the error's message. The page's fetch stays recorded as fetched.
   */
  recordHandlerFailure(page: Page, error: unknown): void {
    this.#tally.handlerFailed(page.url, error instanceof Error ? error.message : String(error));
  }

  /**
   * Ends the run if one is going (aborting in-flight fetches), writes a last checkpoint, and
   * releases the journal, the fetcher's connections, the frontier's memory and the
   * `dataDir` lock. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#phase === 'closed') return;
    let failure: { err: unknown } | undefined;
    if (this.#phase === 'running') {
      // A consumer suspended at a yield never resumes the generator: wind down from here (the
      // page it holds is not acknowledged, so it is fetched again next run).
      this.#taken = undefined;
      this.#node?.stop();
      this.#abortNow('aborted');
      await this.#driver;
      this.#detach();
      try {
        this.#finish();
      } catch (err) {
        // A full disk at the final checkpoint: release everything first, then say so.
        failure = { err };
      }
    }
    this.#phase = 'closed';
    this.#stop.abort();
    await (await this.#metrics?.catch(() => undefined))?.close();
    this.#data?.release();
    if (this.#ownsFetcher && this.#fetcher instanceof HttpFetcher) await this.#fetcher.close();
    this.#frontier?.free();
    this.#frontier = undefined;
    if (failure !== undefined) throw failure.err;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * The validated options. `grouping` is the one in force: when none was given and the
   * dataDir holds a crawl, the crawl's own (known once `run()` has opened it).
   */
  get options(): Readonly<EngineOptions> {
    return this.#options;
  }

  /** The Prometheus metrics (`metrics` option): registry and endpoint URL; undefined without. */
  metrics(): Promise<EngineMetrics> | undefined {
    return this.#metrics;
  }

  /** Why the run ended (undefined while running). */
  get stopReason(): StopReason | undefined {
    return this.#phase === 'running' ? undefined : this.#reason;
  }

  /** What resuming `dataDir` found (valid once `run()` started). */
  get recovery(): RecoveryInfo {
    return this.#recovery;
  }

  /** Seeds that were not crawlable URLs. */
  get rejectedSeeds(): readonly string[] {
    return this.#rejected;
  }

  /** The frontier (read-only use: stats, dueUrls, hostSnapshots); undefined before `run()`. */
  get frontier(): Frontier | undefined {
    return this.#frontier;
  }

  /**
   * When the next fetch may start (epoch ms on the engine's clock): the soonest of the
   * frontier's, or in cluster mode of the slots the node runs now; undefined when nothing is
   * queued (or before `run()`).
   */
  nextFetchAt(): number | undefined {
    let at: number | undefined;
    for (const f of this.#openFrontiers()) {
      const t = f.nextEligible();
      if (t !== undefined && (at === undefined || t < at)) at = t;
    }
    return at;
  }

  /**
   * URLs by status (`Crawled`, `Scheduled`, … as in `FrontierStats.byStatus`) over the
   * frontier, or in cluster mode over the slots the node runs now; every status 0 before `run()`.
   * A scan of the URL table per call (what a metrics scrape or a status page can afford).
   */
  urlsByStatus(): Record<string, number> {
    const hour = Math.floor(this.#clock() / 3_600_000);
    // Every status, zeros included: a node whose slots all moved away counts 0 of each, so a
    // gauge reading this drops to 0 rather than keeping the last counts it was given.
    const out: Record<string, number> = Object.fromEntries(URL_STATUS_NAMES.map((name) => [name, 0]));
    for (const f of this.#openFrontiers()) for (const [status, n] of Object.entries(f.stats(hour).byStatus)) out[status] = (out[status] ?? 0) + n;
    return out;
  }

  /** Times the dispatch loop woke, and how many of those were timers (not completions). */
  get wakeups(): { readonly total: number; readonly timers: number; readonly stalls: number } {
    return { total: this.#driverWaker.wakeups, timers: this.#driverWaker.timerWakeups, stalls: this.#stalls };
  }

  /** robots.txt requests made (each redirect hop counts). */
  get robotsRequests(): number {
    return this.#gate.requests;
  }

  /** Every host's situation now: why it is or is not being fetched (`meguri hosts --why`). */
  hostStates(): HostStatus[] {
    // While a progress event is emitted its listeners (the CLI's view, the logger's host watch)
    // each ask: they share the states the event was counted from (O(hosts) each time: 30–120 ms at
    // 100,000 hosts, measured, three times a tick before).
    if (this.#hostsOfProgress !== undefined) return this.#hostsOfProgress.slice();
    const now = this.#clock();
    return this.#openFrontiers().flatMap((f) => f.hostSnapshots()).map((s) => {
      // Asked whatever the host's flag says: between a failed retry's answer and the host's
      // next turn the flag is clear, and the log must not read that as a recovery.
      return explainHost(s, now, this.policy, {
        robotsPending: this.#gate.pending(s.name),
        ...this.#outageExtra(s.name),
        robotsGaveUp: s.queued === 0 ? this.#gate.gaveUp(s.name) : undefined,
      });
    });
  }

  /** The hosts' blocks (src/frontier/blocks.ts) summed over the open frontiers. */
  #blockCounts(): BlockCounts {
    let confirmed = 0;
    let dismissed = 0;
    let retried = 0;
    for (const f of this.#openFrontiers()) {
      const b = f.blockCounts();
      confirmed += b.confirmed;
      dismissed += b.dismissed;
      retried += b.retried;
    }
    return { confirmed, dismissed, retried };
  }

  /** The frontiers this engine runs: its own, or in cluster mode those of the slots its node runs now. */
  #openFrontiers(): Frontier[] {
    if (this.#node !== undefined) return this.#node.frontiers();
    return this.#frontier === undefined ? [] : [this.#frontier];
  }

  /**
   * Hosts with URLs left whose robots.txt is unreachable, or was given up on (at most 100;
   * `CrawlSummary.robotsUnreachable`); not one whose rules read before apply meanwhile (its URLs
   * are fetched under them, nothing waits).
   */
  #robotsUnreachable(): UnreachableRobots[] {
    const f = this.#frontier;
    const out: UnreachableRobots[] = [];
    if (f === undefined) return out;
    for (const s of f.hostSnapshots()) {
      if (out.length >= 100) break;
      const g = s.queued === 0 ? this.#gate.gaveUp(s.name) : undefined;
      const o = s.queued > 0 ? this.#outageExtra(s.name) : {};
      if (g !== undefined) out.push({ host: s.name, gaveUp: true, reason: robotsGaveUpText(g) });
      else if (o.robotsRetryAtMs !== undefined && o.robotsRulesKept !== true) out.push({ host: s.name, gaveUp: false, reason: robotsOutageText(o, (ms) => `${clockTime(ms)} UTC`) });
    }
    return out;
  }

  /** Host group `group`'s robots.txt outage as a host explanation's fields (none when it has none). */
  #outageExtra(group: string): HostExtra {
    const o = this.#gate.outage(group);
    if (o === undefined) return {};
    return {
      robotsRetryAtMs: o.retryAtMs,
      robotsStatus: o.status,
      robotsError: o.error,
      robotsFailures: o.failures,
      // A host whose rules read before apply is never given up: no "of N tries".
      robotsMaxAttempts: o.rulesKept ? undefined : this.#robotsGiveUp,
      ...(o.rulesKept ? { robotsRulesKept: true } : {}),
    };
  }

  /** The progress stats now (what the `progress` event carries). */
  progress(): Progress {
    return this.#progress(this.#clock(), false);
  }

  // ───────────────────────────── cluster mode ─────────────────────────────

  /**
   * `run()` in cluster mode: joins the crawl, routes this engine's seeds to their slots and
   * yields the pages of whichever slots the coordinator gives this node, until the campaign
   * is drained on every node (or `stop()`). The slot life cycle is `ClusterNode`'s; this
   * engine lends it its seams (robots.txt, DNS, traps, scope, soft-404) — cluster-mode.ts.
   */
  async *#runCluster(): AsyncGenerator<Page, CrawlSummary, undefined> {
    let node: ClusterNode | undefined;
    let done: Promise<void> | undefined;
    let failure: unknown;
    let ended = false;
    this.#detach = this.#attachSignals();
    try {
      if (this.#metrics !== undefined) await this.#metrics;
      this.#data?.lock();
      // Again under the lock (a single-process run may have used the directory since the
      // constructor): before the node connects, so nothing is fetched or written to Redis.
      if (this.#data !== undefined) refuseSingleProcessCrawl(this.#data.path);
      node = clusterNodeOf(this.options, this.#given, {
        fetcher: this.#fetcher,
        frontier: this.#frontierOptions(),
        clock: this.#clock,
        admitted: (url) => void this.#directory.register(url),
        opened: (_slot, frontier) => void frontier.reconsider((u, status, depth) => status === UrlStatus.Refused && this.#mayRequeue(u, status, false, depth)),
        beforeSeeds: async () => this.#takeScopeSeeds(await node!.scopeSeeds([])),
        shape: (req, outcome) => this.#shapeCluster(req, outcome),
        robots: this.#slotRobots!,
        onPage: () => undefined,
        onCheckpoint: (c) =>
          void this.emit('checkpoint', { generation: c.seq, bytes: c.bytes, urls: c.urls, ms: c.ms, slot: c.slot, epoch: c.epoch, atMs: c.atMs, refetch: c.refetch }),
        onCheckpointFallback: (f) => void this.emit('checkpointFallback', f),
        onStoreRestore: (r) => void this.emit('storeRestore', r),
        onPause: (p) => void this.emit('clusterPause', p),
      });
      await node.start();
      const recorded = node.crawlSettings!.grouping;
      if (recorded !== this.options.grouping) {
        // A node that named no grouping takes the crawl's (one that named another was refused).
        this.#options = Object.freeze({ ...this.options, grouping: recorded });
        this.#directory.regroup(recorded);
      }
      this.#adoptRecordedScope(node.crawlSettings!);
      // From here on add() sends its seeds through the node itself; the ones given before are
      // taken below, with no await in between, so none falls between the two.
      this.#node = node;
      const o = this.options;
      // add() before run() appended its seeds to the options' too: each is taken once.
      const seeds = this.#clusterSeeds(new Set([...o.seeds, ...o.sitemaps, ...this.#pendingSeeds.splice(0)]));
      // The scope grows from every node's seeds; re-read while running for seeds given later elsewhere.
      const widen = async (): Promise<void> => this.#takeScopeSeeds(await node!.scopeSeeds([]));
      this.#takeScopeSeeds(await node.scopeSeeds(seeds));
      if (seeds.length > 0) await node.seed(seeds);
      const timer = setInterval(() => void widen().catch(() => undefined), 2_000);
      timer.unref();
      // Progress as a single-process run reports it, over the slots the node runs at each tick.
      const progress = setInterval(() => {
        if (this.#reporting()) this.#emitProgress(this.#clock());
      }, o.progressIntervalMs);
      progress.unref();
      this.#opened = true;
      this.emit('open', this.#recovery);
      this.#sends.watch(this.#fetcher instanceof HttpFetcher);
      this.#runStartMs = this.#clock();
      this.#lastProgress = { atMs: this.#runStartMs, completed: 0 };
      if (this.#stopping) node.stop();
      done = node
        .run()
        .then(
          () => undefined,
          (err: unknown) => void (failure = err),
        )
        .finally(() => {
          clearInterval(timer);
          clearInterval(progress);
          ended = true;
          this.#outputWaker.notify();
        });
      for (;;) {
        const page = this.#clusterPages.shift();
        if (page !== undefined) {
          yield page;
          continue;
        }
        if (failure !== undefined) throw failure;
        if (ended) break;
        await this.#outputWaker.wait();
      }
      this.#reason ??= node.stopReason ?? 'drained';
    } finally {
      if (node !== undefined && !ended) {
        // The consumer broke out or threw: hand the slots back (final checkpoints) and leave.
        node.stop();
        await done;
      }
      this.#detach();
      this.#finish();
    }
    return this.summary();
  }

  /**
   * robots.txt loads in cluster mode: the node's IP gate holds them like page fetches (an IP
   * shared with another node is spaced on the Redis clock). As is otherwise.
   */
  #gatedRobots(base: RobotsFetch): RobotsFetch {
    return (url, signal) => {
      const node = this.#node;
      const ip = node === undefined ? undefined : this.#names.addressOf(url);
      if (node === undefined || ip === undefined) return base(url, signal);
      return node.gated(ip, url, () => base(url, signal)).then((r) => r.value);
    };
  }

  /**
   * A cluster node that named no scope or patterns takes the crawl's, as it takes its grouping
   * (one that named others was refused when it joined). Before, it kept its own defaults — a
   * node joining a crawl created with scope `any` without `--scope` held every link off its
   * seeds' domain out of scope, and with no seeds of its own, every link.
   */
  #adoptRecordedScope(recorded: ClusterCrawlSettings): void {
    const o = this.options;
    const scopeGiven = this.#given.has('scope');
    const patternsGiven = this.#given.has('include') || this.#given.has('exclude');
    const scope = scopeGiven || recorded.scope === null ? o.scope : recorded.scope;
    if (!CRAWL_SCOPES.includes(scope as CrawlScope)) {
      throw new InvalidStateError(`crawl ${JSON.stringify(o.cluster!.crawl)}: its recorded scope ${JSON.stringify(scope)} is none of ${CRAWL_SCOPES.join(', ')}`);
    }
    const include = patternsGiven ? o.include : recorded.patterns.filter((p) => p.startsWith('+')).map((p) => p.slice(1));
    const exclude = patternsGiven ? o.exclude : recorded.patterns.filter((p) => p.startsWith('-')).map((p) => p.slice(1));
    const same = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
    if (scope === o.scope && same(include, o.include) && same(exclude, o.exclude)) return;
    this.#options = Object.freeze({ ...o, scope: scope as CrawlScope, include, exclude });
    this.#scope.adopt(scope as CrawlScope, scopeSeedsOf(o), include, exclude);
  }

  /**
   * Cluster mode: the canonical form of each of `urls` the scope takes; every other one is
   * recorded in `refusedSeeds` with why (`not-http` when it is no http(s) URL, which also goes
   * to `rejectedSeeds`, as single-process). The one rule for the seeds of the run's start and
   * those `add()` sends while it runs.
   */
  #clusterSeeds(urls: Iterable<string>): string[] {
    const policy = this.options.canonPolicy;
    const seeds: string[] = [];
    for (const raw of urls) {
      const url = canonicalize(raw, undefined, policy);
      if (url === null) this.#rejected.push(raw);
      const out = url === null ? 'not-http' : this.#scope.check(url);
      if (out !== undefined) this.#refusedSeeds.push({ url: raw, reason: out });
      else seeds.push(url!);
    }
    return seeds;
  }

  /**
   * `add()` while the cluster node runs: the seeds the scope takes go to the crawl through the
   * node (scope seeds, then the owning slots' inboxes: `ClusterNode#addSeeds`), asynchronously.
   * A send that fails ends the run with its error through the node's `run()`, which the run loop
   * throws once the pages already fetched are yielded.
   */
  #addCluster(node: ClusterNode, list: readonly string[]): { added: number; refused: readonly RefusedSeed[] } {
    const before = this.#refusedSeeds.length;
    const seeds = this.#clusterSeeds(list);
    this.#takeScopeSeeds(seeds);
    // The node's run() carries a failure (see above): this copy of it needs no handler of its own.
    if (seeds.length > 0) void node.addSeeds(seeds).catch(() => undefined);
    return { added: seeds.length, refused: this.#refusedSeeds.slice(before) };
  }

  #stopCluster(): Promise<void> {
    this.#reason ??= 'stopped';
    this.#stopping = true;
    this.#node?.stop();
    return Promise.resolve();
  }

  /** Cluster mode: the crawl's scope seeds (read from Redis) widen this engine's scope. */
  #takeScopeSeeds(urls: readonly string[]): void {
    for (const u of urls) {
      if (this.#crawlSeeds.has(u)) continue;
      this.#crawlSeeds.add(u);
      this.#scope.addSeed(u);
    }
  }

  /** A page fetched by the node: the engine's rules, counted as acknowledged, queued for the consumer; returns what the slot is told. */
  #shapeCluster(req: FetchRequest, outcome: Outcome): Outcome {
    const outside: Flight['outside'] = [];
    const { reported, page, note } = this.#shape(req, outcome, outside);
    // A slot's journal keeps no probe notes: a reply is forgotten once heard (a slot moving before
    // a transient one is retried leaves its body to `probeWait`).
    if (page.probe && note !== undefined) this.#probes.forget(req.url);
    for (const x of outside) this.#tally.outOfScope(x.reason);
    this.#hops.count(req.url, reported);
    if (countsAsPage(reported)) this.#ok++;
    this.#completed++;
    this.#c.dispatched++;
    this.#c.completed++;
    if (this.listenerCount('fetched') > 0) this.emit('fetched', page);
    this.#clusterPages.push(page);
    this.#outputWaker.notify();
    return reported;
  }

  /** Cluster mode: this node's counters (slots, hand-offs, routed links, IP gate); undefined otherwise or before `run()`. */
  clusterStats(): ClusterNodeStats | undefined {
    return this.#node?.stats();
  }

  // ───────────────────────────── opening and recovery ─────────────────────────────

  #frontierOptions(diskTier = false): Partial<FrontierOptions> {
    const o = this.options;
    const budget = o.memoryBudget > 0 ? o.memoryBudget : diskTier ? Number.MAX_SAFE_INTEGER : 0;
    let traps: TrapSeam | undefined;
    const detector = this.#traps;
    if (detector) {
      traps = {
        observe: (url, host, key, nowMs) => {
          const r = detector.observe(host, key, url, Math.floor(nowMs / HOUR_MS));
          return r.becameSuspect || detector.suspect(host);
        },
        passes: (url, host, nowMs) => detector.passes(host, url, Math.floor(nowMs / HOUR_MS)),
      };
    }
    return {
      politeness: this.policy,
      prioritizer: o.prioritize,
      stateMachine: true,
      retryLimit: o.retryLimit,
      robots: this.#gate,
      resolver: this.#names.resolver(),
      grouping: o.grouping,
      urlBudget: o.maxUrlsPerHost,
      depthCap: o.maxDepth,
      scheduleIndex: o.recrawl || o.freshness !== undefined,
      freshness: this.#freshness,
      traps,
      canonPolicyVersion: (o.canonPolicy ?? DEFAULT_POLICY).version,
      // A checkpoint with URLs on disk resumes with its tier even without a budget (nothing
      // sheds). The frontier takes a storeDir only with a budget; the options validator has checked
      // that a budget comes with a dataDir.
      memoryBudget: budget,
      storeDir: budget > 0 && o.dataDir !== undefined ? join(o.dataDir, DISK_DIR) : undefined,
    };
  }

  #open(): void {
    const o = this.options;
    const now = this.#clock();
    const data = this.#data;
    data?.lock();
    const savedCrawl = data === undefined ? undefined : readCrawlId(data.path);
    let found = data?.recover(now);
    if (found !== undefined) {
      let frontier: Frontier;
      try {
        frontier = this.#recoverFrontier(found, savedCrawl);
      } catch (err) {
        // A checkpoint that reads whole can still prove damaged once loaded: a disk-tier file it
        // names, or an invariant the frontier checks. That is checkpoint damage like any other:
        // the previous pair, by DataDir's one rule (before, the resume was refused, and the tier
        // had already deleted the previous checkpoint's manifest). Nothing else was loaded yet.
        if (!(err instanceof CorruptBucketError || err instanceof CorruptPartitionError)) throw err;
        found = data!.fallBack(err, now);
        frontier = this.#recoverFrontier(found, savedCrawl);
      }
      const { state } = found;
      this.#directory.import(state.groups);
      // robots.txt files still fresh are used until their own expiry: a restart asks no origin
      // again; an unreachable one keeps its retry time, failures and Retry-After hold.
      if (state.robots !== undefined) this.#gate.importRobots(state.robots);
      if (state.robotsUnreachable !== undefined) this.#gate.importRobots(state.robotsUnreachable);
      if (state.params !== undefined) this.#params?.import(state.params);
      // After the keys: a checkpoint of an older build has none, and its keys keep every number.
      if (state.paramNumbers !== undefined) this.#params?.importNumbers(state.paramNumbers);
      if (state.views !== undefined) this.#views?.import(state.views);
      if (state.walls !== undefined) this.#walls?.import(state.walls);
      if (state.copies !== undefined) this.#copies?.import(state.copies);
      if (state.anchors !== undefined) this.#anchors?.import(state.anchors);
      if (state.noindex !== undefined) this.#noindex?.import(state.noindex);
      if (state.parentRedirects !== undefined) this.#parentRedirects?.import(state.parentRedirects);
      if (state.deadEndRedirects !== undefined) this.#deadEndRedirects?.import(state.deadEndRedirects);
      if (state.namedCopies !== undefined) this.#namedCopies?.import(state.namedCopies);
      if (state.aliases !== undefined) this.#aliases?.import(state.aliases);
      if (state.slashes !== undefined) this.#slashes?.import(state.slashes);
      if (state.cases !== undefined) this.#cases?.import(state.cases);
      if (state.indexFiles !== undefined) this.#indexFiles?.import(state.indexFiles);
      if (state.softProbes !== undefined) this.#probes.import(state.softProbes);
      this.#frontier = frontier;
      this.#generation = found.generation;
      this.#completed = state.completed;
      this.#ok = state.ok ?? state.completed;
      this.#replay(found);
      // The spellings served are not checkpointed: the latest are read back from the URLs
      // fetched, so a spelling queued or refused as a copy stays one after a resume, and a
      // page fetched before it still counts as evidence.
      const spellings = [this.#cases, this.#indexFiles].filter((l): l is PathCase => l !== undefined);
      if (spellings.length > 0) {
        const latest: CrawledUrl[] = [];
        this.#frontier.eachCrawled(Math.max(...spellings.map((l) => l.options.maxSpellings)), (r) => latest.push(r));
        for (const l of spellings) for (let i = latest.length - 1; i >= 0; i--) l.noteServed(latest[i]!.url, latest[i]!);
      }
      // The seeds about to be given count as seeds here (depth 0): one refused as a link before
      // (walled, an anchored copy) is the user's word now, and seeding leaves a row's status.
      this.#reconsider(new Set(canonicalSeeds([...o.seeds, ...o.sitemaps, ...this.#pendingSeeds], o.canonPolicy)));
    } else {
      this.#frontier = new Frontier(0, Math.floor(now / HOUR_MS), this.#frontierOptions());
    }
    this.#seed([...o.seeds, ...o.sitemaps, ...this.#pendingSeeds.splice(0)]);
    if (data !== undefined) {
      // The crawl's identity: the checkpoint's, else settings.json's, else a new crawl's (or one
      // started before identities: it gets one now).
      this.#crawlId = found?.state.crawl ?? savedCrawl ?? newCrawlId();
      writeCrawlSettings(data.path, this.options, this.#changes, new Date(), this.#crawlId);
      this.#checkpoint();
    }
  }

  /**
   * The frontier of checkpoint `found`, under the grouping its URL keys were made with (a resume
   * not asking for one keeps it; asking for another is refused). Loading it reads the disk-tier
   * files the checkpoint names: `CorruptBucketError` when one fails validation.
   */
  #recoverFrontier(found: Recovered, savedCrawl: string | undefined): Frontier {
    const o = this.options;
    const { image, state } = found;
    // A checkpoint of another crawl than settings.json's is refused before anything is loaded.
    checkCrawlId(o.dataDir!, found.fallback === undefined ? CHECKPOINT_FILE : PREV_CHECKPOINT_FILE, state.crawl, savedCrawl);
    if (state.grouping !== o.grouping && !this.#groupingGiven) {
      // No grouping asked for: a resumed crawl keeps the one its URL keys were made with.
      this.#options = Object.freeze({ ...o, grouping: state.grouping });
      this.#directory.regroup(state.grouping);
    } else if (state.grouping !== o.grouping) {
      throw new InvalidArgumentError(`EngineOptions.grouping: ${JSON.stringify(o.dataDir)} was crawled with grouping ${JSON.stringify(state.grouping)}, received ${JSON.stringify(o.grouping)}`);
    }
    return Frontier.recover(image, this.#frontierOptions(image.meta.settings['spill'] !== undefined));
  }

  /**
   * A resume under a different `maxDepth` or `maxUrlsPerHost`: every host takes the new limits
   * (a restored host keeps the ones it was admitted under); URLs a widened limit parked as
   * Trapped are queued (`RecoveryInfo.released`), and queued ones past a narrowed depth cap are
   * parked at their turn (`Frontier.setAdmission`). The depth cap is set on every resume (the
   * option is the cap, whatever the checkpoint's hosts say); the URL budget only when it
   * changed, since a host's budget may have been raised by its in-degree since.
   */
  #applyLimits(): void {
    const o = this.options;
    const budgetChanged = this.#changes.some((c) => c.name === 'maxUrlsPerHost');
    const released = this.#frontier!.setAdmission({ depthCap: o.maxDepth, ...(budgetChanged ? { urlBudget: o.maxUrlsPerHost } : {}) }, this.#clock());
    if (released > 0) this.#recovery = { ...this.#recovery, released };
  }

  /**
   * A resume asks again of every URL a setting refused: those the scope now takes are queued
   * (a refused address or a name that did not exist is asked again at dispatch, costing no
   * request if it still holds). URLs robots.txt disallowed are queued again when the agent or
   * the robots setting changed. A copy refused under a query key learned ignorable, or a
   * redirect refused under a section's slash rule, stays refused while the lesson holds (the
   * page it names is a row of its own).
   */
  #reconsider(seeds: ReadonlySet<string>): void {
    this.#applyLimits();
    const robotsChanged = this.#changes.some((c) => c.name === 'agent' || c.name === 'robots');
    this.#frontier!.reconsider((url, status, depth) => this.#mayRequeue(url, status, robotsChanged, seeds.has(url) ? 0 : depth));
  }

  /**
   * A page's lesson on login walls (`LoginWalls`). A wall lifted (a check fetch under it showed
   * this visitor content) queues its path's refused URLs again, as a resume would: a scan of
   * the rows, for the Refused ones only, once per wall lifted (in a cluster, the rows of the
   * slots the node runs: `#requeueRefused`).
   */
  #wallLesson(url: string, o: Outcome): void {
    if (this.#walls!.observe(url, { loginForm: o.loginForm === true, simhash: o.simhash, mainFp: o.churnFp }) !== 'lifted') return;
    const scope = wallScopeOf(url);
    this.#requeueRefused((u) => wallScopeOf(u) === scope, true);
  }

  /**
   * A page's lesson on URL shapes that say noindex and nofollow (`NoindexShapes`). A lesson
   * lifted (a check fetch of the shape found a page to index or follow) queues the shape's
   * refused URLs again, as `#wallLesson` does.
   */
  #noindexLesson(url: string, o: Outcome): void {
    const lesson = this.#noindex!;
    this.#teachShape(lesson, url, () => lesson.observe(url, { noindex: o.noindex === true, nofollow: o.nofollow === true }), (n) => this.#tally.noindexRequeued(n));
  }

  /**
   * Feeds a shape lesson (`NoindexShapes`, `ParentRedirects`, `DeadEndRedirects`, `NamedCopies`)
   * one fetch's verdict (`observe`) and, when that lifted the lesson, queues the shape's refused
   * URLs again (in a cluster, of the node's slots: `#requeueRefused`); `requeued` gets how many of
   * them this run had refused, for the tally — rows refused by an earlier run are queued too but
   * were never counted in this run's figure, and a row another lesson covers now stays refused,
   * and counted.
   */
  #teachShape(lesson: ShapeLessons, url: string, observe: () => ShapeChange, requeued: (n: number) => void, shape = lesson.shapeOf(url)): void {
    if (shape === undefined) return;
    const skipped = lesson.skippedUnder(url);
    if (observe() !== 'lifted') return;
    requeued(Math.min(skipped, this.#requeueRefused((u) => lesson.shapeOf(u) === shape, true)));
  }

  /**
   * A fetch's lesson on URL shapes that redirect into (or copy) their parent page
   * (`ParentRedirects`), the verdict judged here, before this outcome reaches the frontier: a page
   * of its own (`content`: 2xx, whole, not a soft-404) is content, unless its rel=canonical names
   * its parent page or a page under it, when `#parentCopyVerdict` decides (a copy is quiet; under
   * a lesson, a page under the parent the crawl does not hold is news); a redirect (`target`,
   * canonical) to the parent page, or under it to a page the crawl holds live, is quiet; one under it to another page is news
   * once the parent was fetched (the URL is one the lesson would refuse, and it led to a page
   * nothing else reached: a slug completed, `/news/123` → `/news/123-headline`); a relink's
   * redirect under the parent (a redirected row fetched again: the target row may be its own
   * first redirect's), and anything else, is no evidence. A lesson lifted queues the shape's
   * refused URLs again, as `#noindexLesson` does (keep the count's rule in sync).
   */
  #parentRedirectLesson(req: FetchRequest, status: number, target: string | undefined, content: boolean, o: Outcome, links: readonly Link[] | undefined): void {
    if (!content && (status < 300 || status >= 400 || target === undefined)) return;
    const url = req.url;
    const lesson = this.#parentRedirects!;
    const shape = lesson.shapeOf(url);
    if (shape === undefined) return;
    let verdict: ParentRedirectVerdict | undefined;
    if (content) {
      const named = o.canonical === undefined ? undefined : parentRedirectOf(url, o.canonical);
      verdict = named === undefined ? 'content' : this.#parentCopyVerdict(req, o, links, named);
    } else if (status >= 300 && status < 400 && target !== undefined) {
      const into = parentRedirectOf(url, target);
      // A relink (a redirected row fetched again) says nothing under the parent: the target row
      // may be its own first redirect's.
      if (into === 'parent') verdict = 'intoParent';
      else if (into === 'under' && req.relink !== true) verdict = this.#holds(target) ? 'intoParent' : lesson.parentFetched(url) ? 'news' : undefined;
    }
    if (verdict === undefined) return;
    this.#teachShape(lesson, url, () => lesson.observe(url, verdict), (n) => this.#tally.parentRedirectsRequeued(n), shape);
  }

  /**
   * A fetch's lesson on URL shapes that redirect where the crawl does not go (`DeadEndRedirects`),
   * judged here before this outcome reaches the frontier: a page of its own (2xx, whole, not a
   * soft-404) is content; a redirect (`target`, canonical) is judged by `#deadEndOf`; a relink's
   * redirect (a redirected row fetched again: its target row is its own first redirect's) and
   * anything else is no evidence. A lesson lifted queues the shape's refused URLs again, as
   * `#parentRedirectLesson` does (keep the count's rule in sync).
   */
  #deadEndLesson(req: FetchRequest, status: number, target: string | undefined, content: boolean): void {
    let verdict: DeadEndVerdict | undefined;
    if (content) verdict = 'content';
    else if (status >= 300 && status < 400 && target !== undefined && req.relink !== true) verdict = this.#deadEndOf(target);
    if (verdict === undefined) return;
    const lesson = this.#deadEndRedirects!;
    this.#teachShape(lesson, req.url, () => lesson.observe(req.url, verdict), (n) => this.#tally.deadEndRedirectsRequeued(n));
  }

  /**
   * Where a redirect to `target` (canonical) leads for `DeadEndRedirects`: 'deadEnd' where the
   * crawl does not go — out of its scope (another site included), a path `LoginWalls` walled (under
   * `learnParams`), a path the rules of a robots.txt the crawl has read disallow (not one unread
   * or unreachable for now: `RobotsGate.disallowsByRules`), a shape `ParentRedirects` or this
   * lesson refuses now; 'news' to a page the crawl has no row for (in a
   * cluster, also one in another node's slot: news, the safe side); else undefined (a URL it has a
   * row for, whatever its status: no evidence).
   */
  #deadEndOf(target: string): DeadEndVerdict | undefined {
    if (this.#scope.check(target) !== undefined || this.#walls?.walled(target) !== undefined || this.#gate.disallowsByRules(target)) return 'deadEnd';
    if (this.#parentRedirects?.covers(target) !== undefined || this.#deadEndRedirects?.covers(target) !== undefined) return 'deadEnd';
    return this.#hasRow(target) ? undefined : 'news';
  }

  /**
   * `links` with the page this one names canonical added when the crawl has no row for it and
   * this page may be a copy of it: the named page is under this URL's parent (`parentRedirectOf`
   * 'under': a topic's `?page=2`, which Discourse's permalink `/t/slug/123/25` names), or this URL
   * has a `NamedCopies` shape and names another page of its origin (`/comment/512` naming its
   * article). A copy's content is then fetched on its own, so the copy's siblings a lesson refuses
   * are copies of a page the crawl has — a topic's later pages that only permalinks reach (or none
   * the crawl met yet: page 3 is linked from page 2) are not lost with them. Not for a page that
   * says nofollow, nor a named URL the page links already, one out of the scope (it would be
   * refused at once), or one a learned lesson rewrites or takes for another spelling (its spelling
   * met first is the one to fetch); one past `maxDepth` is parked as any link is, for a resume
   * with a higher cap. Added after the page's links were rewritten (`#rewriteLinks`), before the
   * scope and the link filters, which judge it as any of the page's.
   */
  #namedPageLink(req: FetchRequest, o: Outcome, links: readonly Link[] | undefined): readonly Link[] | undefined {
    const named = o.canonical;
    if (named === undefined || links === undefined || o.nofollow === true) return links;
    const into = parentRedirectOf(req.url, named);
    const copy = into === 'under' ? this.#parentRedirects !== undefined : into === undefined && this.#namedCopies?.shapeOf(req.url) !== undefined && sameOrigin(req.url, named) && !namesItself(req.url, named) && !namesAncestor(req.url, named);
    if (!copy || this.#hasRow(named) || this.#scope.check(named) !== undefined || links.some((l) => l.url === named)) return links;
    if ((this.#params?.rewrite(named) ?? this.#aliases?.rewrite(named) ?? this.#slashes?.rewrite(named) ?? this.#cases?.duplicateOf(named) ?? this.#indexFiles?.duplicateOf(named)) !== undefined) return links;
    return [...links, { url: named }];
  }

  /**
   * A fetch's lesson on URL shapes whose pages are copies of another page they name
   * (`NamedCopies`), judged before this outcome reaches the frontier, for a URL with a shape: a
   * page (`content`: 2xx, whole, not a soft-404) by `#namedCopyOf`; a redirect (`target`,
   * canonical; not a relink's, whose target row may be its own first redirect's) to a page the
   * crawl has no row for is news — under a lesson a check that leads somewhere new lifts it, as a
   * copy naming a page the crawl does not hold does; anything else is no evidence.
   */
  #namedCopyLesson(req: FetchRequest, status: number, target: string | undefined, content: boolean, o: Outcome, links: readonly Link[] | undefined): void {
    const lesson = this.#namedCopies!;
    const shape = lesson.shapeOf(req.url);
    if (shape === undefined) return;
    let verdict: NamedCopyVerdict | undefined;
    if (content) verdict = this.#namedCopyOf(req, o, links);
    else if (status >= 300 && status < 400 && target !== undefined && req.relink !== true && !this.#hasRow(target)) verdict = 'news';
    if (verdict === undefined) return;
    this.#teachShape(lesson, req.url, () => lesson.observe(req.url, verdict), (n) => this.#tally.namedCopiesRequeued(n), shape);
  }

  /**
   * What a page says of its shape for `NamedCopies`: a rel=canonical missing or naming the URL
   * itself (`namesItself`) is content; one outside the scope is no evidence; one on another origin
   * in the scope is news (its rows are not compared here: the safe side, counted under a lesson
   * only); one naming its parent or a page under it (`ParentRedirects`') or a page above it on
   * its path (`namesAncestor`) is content when that page was fetched with text more than 3
   * simhash bits off (a page of its own under a site-wide canonical — a check of a learned shape
   * must still lift it), else no evidence. Else `namedCopyVerdict` on the named page as the
   * frontier holds it — fetched with a page (its simhash and depth; spilled to disk, where
   * neither is at hand: no evidence), held and not fetched yet, or missing — the page's links the
   * crawl does not know (`#novelLinks`) and whether an anchor of it names itself by a path (a
   * permalink its named page shows; not a skip link: `Outcome.selfLinked`). A slot this node does
   * not hold: no evidence.
   */
  #namedCopyOf(req: FetchRequest, o: Outcome, links: readonly Link[] | undefined): NamedCopyVerdict | undefined {
    const named = o.canonical;
    if (named === undefined || namesItself(req.url, named)) return 'content';
    if (this.#scope.check(named) !== undefined) return undefined;
    if (!sameOrigin(req.url, named)) return 'news';
    const frontier = this.#frontierOf(req.host);
    if (frontier === undefined) return undefined;
    if (parentRedirectOf(req.url, named) !== undefined || namesAncestor(req.url, named)) {
      return namedAboveVerdict(fetchedSimhashEitherSlash(frontier, named), o.simhash);
    }
    const lesson = this.#namedCopies!;
    let page: NamedPage;
    if (frontier.fetchedCount([named]) === 1) {
      const depth = frontier.liveDepthOf(named);
      if (depth === undefined) return undefined;
      page = { simhash: frontier.fetchedSimhashOf(named), depth, viaCopy: lesson.viaCopy(named) };
    } else if (frontier.liveCount([named]) === 1) {
      page = 'queued';
    } else {
      page = 'missing';
      // No row: the row it gets now is this copy's (its links, or `#namedPageLink`).
      if (frontier.knownCount([named]) === 0) lesson.namedUnheld(named);
    }
    // An anchor to itself written as a path (a permalink the named page shows), not a skip link
    // `#main`, nor a self-naming hreflang alternate (`Outcome.selfLinked`).
    const linksItself = o.selfLinked === true;
    return namedCopyVerdict(page, req.depth, o.simhash, typeof page === 'object' ? this.#novelLinks(req, o, links, frontier) : 0, linksItself);
  }

  /**
   * How many of a page's same-origin followable links in the crawl's scope `frontier` does not
   * know: a copy repeats the links of the page it copies, met when that page was fetched. Judged
   * link by link on the links as rewritten by the learned lessons (`links`: aliases, slashes,
   * case, index files, keys, views — the spelling a row gets now) and as the page gave them
   * (`o.links`, in the same order): a link is new only when neither spelling has a row, since the
   * named page's rows were made under the lessons of its own fetch (`?destination` learned since
   * respells every login link it made). Links a later filter dropped from the named page —
   * echoes, a listing paged past its end, past `maxLinks` — read as new, and cost a lesson, never
   * a page. Left out: a link out of the scope (its row, if any, is a refusal, not a page the named
   * page led to), and one carrying this page's own address in either spelling (`carriesPage`: a
   * login form told to return here, new on every copy). A given spelling with a row (refused by a
   * lesson since, say) reads as known: the copy's own links are queued anyway.
   */
  #novelLinks(req: FetchRequest, o: Outcome, links: readonly Link[] | undefined, frontier: Frontier): number {
    if (links === undefined) return 0;
    const origin = `${req.url.slice(0, originEnd(req.url))}/`;
    const raw = o.links !== undefined && o.links.length === links.length ? o.links : undefined;
    const spellings = new Map<string, string | undefined>();
    for (let i = 0; i < links.length; i++) {
      const l = links[i]!;
      const given = raw?.[i]!.url;
      if (l.nofollow === true || !l.url.startsWith(origin) || spellings.has(l.url) || carriesPage(l.url, req.url) || (given !== undefined && carriesPage(given, req.url))) continue;
      if (this.#scope.check(l.url) !== undefined) continue;
      spellings.set(l.url, given !== undefined && given !== l.url ? given : undefined);
    }
    if (spellings.size === 0 || frontier.knownCount([...spellings.keys()]) === spellings.size) return 0;
    let novel = 0;
    for (const [url, given] of spellings) if (frontier.knownCount([url]) === 0 && (given === undefined || frontier.knownCount([given]) === 0)) novel++;
    return novel;
  }

  /**
   * What a page naming its parent page, or a page under it, canonical says (`named`, as
   * `parentRedirectOf` reads the canonical): nothing before the parent was fetched with a page (no
   * evidence either way). Then, for a page under the parent (a topic's `?page=2`, which a
   * permalink to a post there names) not fetched with a page: nothing either while the crawl holds
   * it; with no row (it is queued as this page's link, `#namedPageLink`) or a row that ended
   * without a page, news under a lesson (the siblings it refused may name pages nothing reaches)
   * and nothing before (it may only not be reached yet, or have failed for a while).
   * Else `parentCopyVerdict` on the named page's simhash as fetched (the parent under either
   * spelling) and the page's links the crawl does not know (`#novelLinks`: same-origin, followable,
   * in scope, new under both the rewritten and the given spelling; a link carrying this page's own
   * address left out). The parent has the page's origin, so this node holds its slot; a slot gone
   * mid-run is no evidence.
   */
  #parentCopyVerdict(req: FetchRequest, o: Outcome, pageLinks: readonly Link[] | undefined, named: 'parent' | 'under'): ParentRedirectVerdict | undefined {
    const canonical = o.canonical!;
    const frontier = this.#frontierOf(req.host);
    if (frontier === undefined || !this.#parentRedirects!.parentFetched(req.url)) return undefined;
    let simhash: bigint | undefined;
    if (named === 'parent') {
      simhash = fetchedSimhashEitherSlash(frontier, canonical);
    } else if (frontier.fetchedCount([canonical]) === 0) {
      // Not fetched with a page (yet). Held: it will be — no evidence. No row (it is queued now as
      // this page's link, `#namedPageLink`), or a row that ended without a page (gone, refused,
      // parked): under a lesson news — the siblings it refused may name pages nothing reaches, so
      // a check lifts it and they are queued again — else nothing (the page may only not be
      // reached yet, a topic's page 3 linked from its page 2; or have failed for a while).
      return this.#holds(canonical) || this.#parentRedirects!.covers(req.url) === undefined ? undefined : 'news';
    } else {
      simhash = frontier.fetchedSimhashOf(canonical);
    }
    return parentCopyVerdict(simhash, o.simhash, this.#novelLinks(req, o, pageLinks, frontier));
  }

  /**
   * A page's lesson on links to a spot on their own page (`AnchorCopies`). A lesson banned by a
   * check queues the refused URLs of its links' shape again (a scan of the rows, for the Refused
   * ones; once per lesson banned; in a cluster, of the node's slots: `#requeueRefused`).
   */
  #anchorLesson(url: string, o: Outcome): void {
    if (this.#anchors!.observe(url, { simhash: o.simhash, mainFp: o.churnFp }) !== 'lifted') return;
    const shape = anchorShapeOf(url);
    // Whatever other lesson ends in the same shape (another linking path's): fetching its copies
    // again is the safer mistake.
    this.#requeueRefused((u) => anchorShapeOf(u) === shape, false);
  }

  /** Whether `url` has a row (a cluster node asks the slot of its host group: none here, no). */
  #hasRow(url: string): boolean {
    return this.#frontierForUrl(url)?.knownCount([url]) === 1;
  }

  /** Whether `url`'s row was fetched with a page (`Frontier.fetchedCount`; a slot this node does not hold: no). */
  #fetchedWithPage(url: string): boolean {
    return this.#frontierForUrl(url)?.fetchedCount([url]) === 1;
  }

  /** Whether `url` has a live row, fetched or to be (`Frontier.liveCount`; a slot this node does not hold: no). */
  #holds(url: string): boolean {
    return this.#frontierForUrl(url)?.liveCount([url]) === 1;
  }

  /** The depth of `url`'s live row in memory (`Frontier.liveDepthOf`; a slot this node does not hold: undefined). */
  #heldDepth(url: string): number | undefined {
    return this.#frontierForUrl(url)?.liveDepthOf(url);
  }

  /** The frontier holding `url`'s host group (a cluster node's slot), or undefined. */
  #frontierForUrl(url: string): Frontier | undefined {
    let group: string;
    try {
      group = hostGroupKey(url, this.options.grouping);
    } catch {
      return undefined;
    }
    return this.#frontierOf(group);
  }

  /**
   * A page's lesson on view keys (`ViewKeys`): for a page whose rel=canonical is its URL less some
   * keys, how many of its followed links to other paths of its origin the crawl did not know,
   * asked of the frontier before this page's links enter it. A lesson lifted queues again the
   * rows it refused (`#requeueRefused`).
   */
  #viewLesson(req: FetchRequest, canonical: string | undefined, links: readonly Link[]): void {
    const views = this.#views!;
    const dropped = views.viewKeysOf(req.url, canonical);
    const frontier = this.#frontierOf(req.host);
    let novel = 0;
    // No frontier to ask (a cluster slot gone): the page is no evidence either way.
    if (dropped !== undefined && frontier === undefined) return;
    if (dropped !== undefined && frontier !== undefined) {
      const path = withoutQuery(req.url);
      const origin = `${req.url.slice(0, originEnd(req.url))}/`;
      const others = new Set<string>();
      for (const l of links) {
        // Links to this page's own path are its views (the filters); one to another path is news
        // if the crawl did not know it, whatever keys it carries (`/docs/x?lang=fr`), but for
        // another page of this listing paged in the path, judged without this view's keys.
        if (l.nofollow === true || !l.url.startsWith(origin) || withoutQuery(l.url) === path) continue;
        others.add(views.newsTargetOf(l.url, req.url, dropped));
      }
      novel = others.size - frontier.knownCount([...others]);
    }
    const change = views.observe(req.url, canonical, novel);
    if (change?.change === 'lifted') this.#requeueRefused((u) => ViewKeys.carries(u, change.keys, change.section), true);
  }

  /**
   * A page's lesson on query pairs whose pages the site names copies of pages the crawl knows
   * (`KnownCopies`): the URL the page names as itself — a redirect's target, or a whole page's
   * rel=canonical in the scope that is not the page less some of its pairs (the page itself is
   * news) — known when the crawl holds it live (asked before this outcome reaches the frontier) or
   * the redirect leaves the scope. A page naming nothing, a canonical outside the scope (a site
   * under another name) and a redirect to itself (a cookie check) are no evidence. A lesson lifted queues again the
   * rows it refused (`#requeueRefused`).
   */
  #copyLesson(req: FetchRequest, o: Outcome, whole: boolean, target: string | undefined): void {
    let named: string | undefined;
    let known = false;
    if (o.status >= 300 && o.status < 400) {
      if (target === undefined || target === req.url) return;
      named = target;
      known = this.#scope.check(target) !== undefined;
    } else if (whole && o.canonical !== undefined) {
      // The page less some of its pairs (a key ignored, a view) is for the other lessons to judge.
      if (o.canonical !== req.url && isUrlLessPairs(req.url, o.canonical)) return;
      if (this.#scope.check(o.canonical) !== undefined) return;
      named = o.canonical;
    }
    if (named === undefined) return;
    if (!known && named !== req.url) known = this.#holds(named);
    const change = this.#copies!.observe(req.url, named, known, req.depth, (u) => this.#heldDepth(u));
    if (change?.change === 'lifted') this.#requeueRefused((u) => KnownCopies.carries(u, change.scope, change.pairs), true);
  }

  /**
   * Queues again the Refused rows `lifted` names, by `#mayRequeue`'s rule (with the anchor rule
   * or without): after a lesson that refused them ended. In a cluster, those of the slots the
   * node runs now (`ClusterNode.reconsider`); a slot opening or moving meanwhile asks of its
   * Refused rows when it opens (`opened` in `#runCluster`). Returns how many were queued.
   */
  #requeueRefused(lifted: (url: string) => boolean, anchors: boolean): number {
    const accept = (u: string, status: UrlStatus, depth: number): boolean => status === UrlStatus.Refused && lifted(u) && this.#mayRequeue(u, status, false, depth, anchors);
    if (this.#node !== undefined) return this.#node.reconsider(accept);
    if (this.#frontier === undefined) return 0;
    const queued = this.#frontier.reconsider(accept);
    this.#driverWaker.notify();
    return queued;
  }

  /** Whether a Refused or Disallowed row may be queued again now (`#reconsider`'s rule, and a seed's in `add()`). */
  #mayRequeue(url: string, status: UrlStatus, robotsChanged: boolean, depth: number, anchors = true): boolean {
    if (status === UrlStatus.Disallowed ? !robotsChanged : this.#scope.check(url) !== undefined) return false;
    // Not a seed (depth 0): the user's word; a plain URL of the shape refused for another reason
    // waits as the anchored copies do (the rows do not say why they were refused).
    if (status === UrlStatus.Refused && depth > 0 && anchors && this.#anchors?.covers(url) === true) return false;
    if (status === UrlStatus.Refused && (this.#params?.rewrite(url) ?? (depth > 0 ? (this.#views?.rewrite(url) ?? this.#walls?.walled(url) ?? this.#copies?.covers(url) ?? this.#noindex?.covers(url) ?? this.#parentRedirects?.covers(url) ?? this.#deadEndRedirects?.covers(url) ?? this.#namedCopies?.covers(url)) : undefined) ?? this.#slashes?.rewrite(url) ?? this.#cases?.duplicateOf(url) ?? this.#indexFiles?.duplicateOf(url)) !== undefined) return false;
    return this.#directory.register(url) !== undefined;
  }

  /**
   * Applies the journal of the checkpoint's generation: fetch starts keep intervals, outcomes
   * are redone, robots.txt answers replace the checkpoint's entries (rules, retry state,
   * Retry-After hold: the gate holds the host from its first dispatch on).
   */
  #replay(found: Recovered): void {
    const state = found.state;
    const f = this.#frontier!;
    // URL → its fetch starts whose outcome no journal holds (none known: in flight at a
    // checkpoint written before `fetchStarts`).
    const pending = new Map<string, number[]>();
    for (const u of state.inFlight) pending.set(u, []);
    for (const [u, at] of state.fetchStarts ?? []) pending.set(u, [...(pending.get(u) ?? []), at]);
    // robots.txt hop URL → its group, while the journal holds its start but no answer.
    const robotsPending = new Map<string, string>();
    // A page's start waits for its outcome (URL → its last start): the outcome's replay
    // dispatches the URL again at that instant, under the start's address, spending its windows
    // and rate cap (`Frontier#replay`); recorded as well, the start counted twice against a
    // capped host. A start with no outcome replayed is recorded on its own.
    const unanswered = new Map<string, DispatchRecord>();
    let outcomes = 0;
    let dispatches = 0;
    let robots = 0;
    const start = (d: DispatchRecord): void => {
      if (f.recordStart(d.h, d.ip, d.at)) dispatches++;
    };
    const { records, tornBytes } = found;
    for (const r of records) {
      if (r.t === 'd') {
        if (r.u !== undefined && r.r !== 1) {
          pending.set(r.u, [...(pending.get(r.u) ?? []), r.at]);
          const before = unanswered.get(r.u);
          if (before !== undefined) start(before);
          unanswered.set(r.u, r);
        } else {
          start(r);
          if (r.u !== undefined) robotsPending.set(r.u, r.h);
        }
        continue;
      }
      if (r.t === 'r') {
        this.#gate.restoreAnswer(r);
        // Its Sitemap lines were queued as it arrived, and the killed process may not have
        // seeded them: the cache now holds the answer, so they are heard here or never.
        if (this.options.robotsSitemaps) this.#sitemapQueue.push(...snapshotSitemaps(r));
        robots++;
        // The answer ends its group's load (every hop of a redirected one).
        const group = hostGroupKey(`${r.origin}/`, this.options.grouping);
        for (const [u, g] of robotsPending) if (g === group) robotsPending.delete(u);
        continue;
      }
      const d = unanswered.get(r.u);
      unanswered.delete(r.u);
      if (this.#replayOutcome(r, d?.ip) && d !== undefined) dispatches++;
      else if (d !== undefined) start(d);
      pending.delete(r.u);
      outcomes++;
    }
    for (const d of unanswered.values()) start(d);
    this.#recovery = {
      resumed: true,
      generation: state.generation,
      ...(found.fallback === undefined ? {} : { checkpointFallback: found.fallback }),
      replayedOutcomes: outcomes,
      replayedDispatches: dispatches,
      replayedRobots: robots,
      tornBytes,
      refetch: [...pending.keys()],
      robotsInFlight: [...robotsPending.keys()],
      interrupted: [...pending].flatMap(([url, starts]) => starts.map((at) => ({ url, dispatchedAtMs: at }))),
    };
    for (const [url, starts] of pending) if (starts.length > 0) this.#unfinished.set(url, starts);
  }

  /** Redoes a journaled outcome (`ip`: the address its start went to); false when the frontier could not replay it. */
  #replayOutcome(r: OutcomeRecord, ip: string | undefined): boolean {
    const o = ip === undefined ? recordOutcome(r) : { ...recordOutcome(r), ip };
    for (const l of o.links ?? []) this.#directory.register(l.url);
    if (o.location !== undefined) this.#directory.register(o.location);
    const reply = r.pr === undefined ? undefined : replyOf(r.pr);
    if (reply !== undefined && r.ps !== undefined && r.pf !== undefined) {
      // A probe's reply, heard again (its shape's answer, whether or not its asking page is in
      // this journal: a checkpoint may hold it).
      this.#probes.forget(r.u);
      this.#soft.settleProbe({ host: r.h, url: r.u, shape: r.ps, fp: BigInt(`0x${r.pf}`) }, reply);
    } else if (!this.#probes.has(r.u) && o.contentFp !== undefined && ((r.s >= 200 && r.s < 300 && r.sm !== 1) || r.s4 === 1)) {
      // A template only ever observed again re-confirms itself; the count is per distinct URL.
      // As live: a sitemap is never observed, and a soft-404's record (told 404, marked s4)
      // counts toward its template as its fetch did (unmarked, a replay forgot those).
      this.#soft.observe(r.h, o.contentFp, keyFromHex(r.k), 0, { url: r.u, canonical: r.cn });
      // The live run's probes are in its records (`pb`, below); a replay's own are taken back,
      // so the next new URL of their body asks again (or finds its shape's answer).
      for (const p of this.#soft.takeProbes()) this.#soft.retract(p);
      // A page the live run told soft-404 says its verdict: a template, whatever the replay counted.
      if (r.s4 === 1) this.#soft.confirm(r.h, o.contentFp);
    }
    if (r.pb !== undefined && r.ps !== undefined && o.contentFp !== undefined) this.#probes.ask({ host: r.h, url: r.pb, shape: r.ps, fp: o.contentFp });
    const replayed = this.#frontier!.replay(r.k, o, r.at, r.now);
    if (replayed) {
      this.#completed++;
      if (countsAsPage(o)) this.#ok++;
    }
    // As `#ack` did live: a probe whose transient answer ended its row is given up.
    if (reply === undefined && this.#probes.has(r.u) && this.#frontier!.liveCount([r.u]) === 0) this.#probes.abandon(r.u);
    // The chains of redirects and refreshes count on across a kill, as they did live.
    this.#hops.count(r.u, o);
    // A page's refused links one step deeper, as `#ack` refused them live: at depth 0, a resume
    // whose scope took them in fetched them as seeds (past --max-depth, their feeds followed).
    const depth = r.x === undefined ? undefined : this.#frontier!.depthOf(r.k);
    for (const url of r.x ?? []) this.#refuse(url, depth === undefined ? 1 : depth + 1, r.now);
    return replayed;
  }

  /** Seeds the frontier with `urls` (those the scope takes); returns how many were new. */
  #seed(urls: readonly string[]): number {
    if (urls.length === 0) return 0;
    const hours = Math.floor(this.#clock() / HOUR_MS);
    const policy = this.options.canonPolicy;
    const specs = [];
    for (const raw of urls) {
      const url = canonicalize(raw, undefined, policy);
      if (url === null) {
        this.#rejected.push(raw);
        this.#refusedSeeds.push({ url: raw, reason: 'not-http' });
        continue;
      }
      const out = this.#scope.check(url);
      if (out !== undefined) {
        this.#refusedSeeds.push({ url: raw, reason: out });
        continue;
      }
      const group = this.#directory.register(url);
      if (group === undefined) {
        this.#rejected.push(raw);
        this.#refusedSeeds.push({ url: raw, reason: 'not-http' });
        continue;
      }
      specs.push({ url, host: group, priority: 1, firstSeen: hours, nextDue: hours, crawlDelay: 0 });
    }
    return this.#frontier!.seedBatch(specs);
  }

  // ───────────────────────────── the loop ─────────────────────────────

  /** Fetches the limits still allow (fetches in flight count as if they will succeed). */
  #budgetLeft(): number {
    const o = this.options;
    const n = this.#flights.size;
    return Math.min(o.maxPages - this.#ok - n, o.maxRequests - this.#completed - n);
  }

  /**
   * Continuous mode asks again, once an hour, of the names that did not exist: their URLs are
   * queued again and resolved anew (the negative answer is cached 5 minutes).
   */
  #recheckUnresolved(): void {
    const names = new Set(this.#tally.unresolvedHosts().map((h) => h.host));
    if (names.size === 0) return;
    const n = this.#frontier!.reconsider((url, status) => {
      const host = status === UrlStatus.Refused ? splitOrigin(url)?.host : undefined;
      return host !== undefined && names.has(host) && this.#scope.check(url) === undefined && this.#directory.register(url) !== undefined;
    });
    if (n > 0) {
      this.#unsaved++;
      this.#driverWaker.notify();
    }
  }

  async #drive(): Promise<void> {
    const o = this.options;
    const f = this.#frontier!;
    let nextCheckpoint = this.#clock() + o.checkpointIntervalMs;
    let nextProgress = this.#clock() + o.progressIntervalMs;
    let nextRecheck = this.#clock() + HOUR_MS;
    for (;;) {
      let now = this.#clock();
      if (this.#freshness !== undefined && now >= nextRecheck) {
        this.#recheckUnresolved();
        nextRecheck = now + HOUR_MS;
      }
      if (o.dataDir !== undefined && now >= nextCheckpoint) {
        if (this.#unsaved > 0 || now - this.#checkpointedAtMs >= Math.max(IDLE_CHECKPOINT_MS, o.checkpointIntervalMs)) {
          this.#checkpoint();
          now = this.#clock();
        }
        nextCheckpoint = now + o.checkpointIntervalMs;
      }
      if (now >= nextProgress) {
        if (this.#reporting()) this.#emitProgress(now);
        nextProgress = now + o.progressIntervalMs;
      }
      if (this.#stopping) {
        if (this.#flights.size === 0) break;
        await this.#driverWaker.wait();
        continue;
      }
      const before = this.#flights.size;
      this.#fill();
      if (this.#flights.size === 0) {
        if (this.#budgetLeft() <= 0) {
          this.#reason = o.maxPages - this.#ok <= 0 ? 'maxPages' : 'maxRequests';
          break;
        }
        const next = f.nextEligible();
        if (next === undefined) {
          this.#reason = 'drained';
          break;
        }
        // Everything left waits longer than the caller will (a Retry-After of a day): end now,
        // the wait checkpointed, rather than idle until then. robots.txt loads count as work,
        // and a wait a slow host's interval or Crawl-delay makes never ends a run.
        if (next - now > Math.max(o.maxWaitMs, this.policy.ceilingMs, o.maxCrawlDelayMs) && this.#freshness === undefined && this.#gate.loading === 0) {
          this.#reason = 'waiting';
          this.#resumeAtMs = next;
          break;
        }
      }
      let deadline = Infinity;
      if (this.#flights.size < o.concurrency && this.#budgetLeft() > 0) {
        const next = f.nextEligible();
        if (next !== undefined) {
          deadline = next;
          if (next <= now && this.#flights.size === before) {
            // The frontier said "now" but gave nothing: never spin on it.
            this.#stalls++;
            deadline = now + 1;
          }
        }
      }
      if (o.dataDir !== undefined) deadline = Math.min(deadline, nextCheckpoint);
      if (this.#reporting()) deadline = Math.min(deadline, nextProgress);
      // The freshness pass runs at the first dispatch of each clock hour and may re-time a
      // waiting recrawl earlier than the frontier's current answer: wake at every hour.
      if (this.#freshness !== undefined) deadline = Math.min(deadline, (Math.floor(now / HOUR_MS) + 1) * HOUR_MS);
      await this.#driverWaker.wait(deadline === Infinity ? undefined : deadline - this.#clock());
    }
    this.#driverDone = true;
    this.#outputWaker.notify();
    this.#notifyQuiet();
  }

  #fill(): void {
    const f = this.#frontier!;
    const max = this.options.concurrency;
    this.#flushStarts();
    this.#seedQueuedSitemaps();
    while (this.#flights.size < max && this.#budgetLeft() > 0) {
      // A fresh clock per dispatch: the time recorded is the time the request leaves.
      const req = f.dispatch(this.#clock());
      this.#flushStarts();
      if (req === undefined) return;
      this.#launch(req);
    }
  }

  #launch(req: FetchRequest): void {
    // The key in hex names the URL in the journal only: no data directory, no journal, no key.
    const data = this.#data;
    const key = data === undefined ? '' : keyToHex(req.key, 0);
    const flight: Flight = { req, key, sendId: undefined, reported: undefined, outside: [], page: undefined, note: undefined };
    this.#flights.set(req.row, flight);
    if (data !== undefined) this.#append({ t: 'd', h: req.host, ip: req.ip, at: req.dispatchedAtMs, k: key, u: req.url });
    this.#c.dispatched++;
    // Pinned to `req.ip`: the frontier dispatched it under its URL's own hostname's address
    // (the DNS seam's `lookupUrl`), which under registrable grouping a sibling hostname of the
    // group may not share — or may not have: then it is undefined, and the fetcher resolves the
    // name itself and fails with a clear outcome.
    const begin = (): void => {
      // The request leaves now: if that is later than its dispatch, the windows count from now.
      const at = this.#clock();
      if (at > req.dispatchedAtMs + LATE_START_MS) this.#frontier?.recordStart(req.host, req.ip, at, true);
      let pending: Promise<Outcome>;
      try {
        pending = this.#fetcher.fetch(req, this.#stop.signal);
      } catch (err) {
        pending = Promise.resolve({ row: req.row, url: req.url, status: 0, errorKind: 'network', error: err instanceof Error ? err.message : String(err) });
      }
      pending.then(
        (outcome) => this.#complete(flight, outcome),
        (err: unknown) => this.#complete(flight, { row: req.row, url: req.url, status: 0, errorKind: 'network', error: err instanceof Error ? err.message : String(err) }),
      );
    };
    // A request can leave well after its dispatch (a new connection first needs a connect,
    // and a busy event loop delays that): the send order re-spends the host's and IP's windows
    // from the moment it really left, and holds a later request on the same IP (send-gate.ts).
    flight.sendId = this.#sends.send(req.url, req.host, req.ip, begin);
  }

  /**
   * A robots.txt hop left: journal the start, and have the frontier's windows count from now
   * rather than from the dispatch call that asked for it (that call may have gone on to other
   * hosts first). Applied right after the current `dispatch` returns (`#flushStarts`), never
   * from inside it.
   */
  #robotsStarted(group: string, url: string): void {
    const ip = this.#names.addressOf(url);
    const at = this.#clock();
    this.#append({ t: 'd', h: group, ip, at, r: 1, u: url });
    this.#starts.push({ group, ip, at });
    // In cluster mode the node's loop calls dispatch: apply right after it returns.
    if (this.#node !== undefined && this.#starts.length === 1) queueMicrotask(() => this.#flushStarts());
  }

  readonly #starts: { group: string; ip: string | undefined; at: number }[] = [];

  /**
   * A robots.txt answer, before the robots cache acts on it: journaled first, as an outcome is
   * before its report, so a kill after the answer took effect cannot lose it (`#replay` puts
   * it back). A failed append ends the run (`run()` throws it; a full disk as anywhere else)
   * and the answer is not acted on: the robots gate swallows a load's failure, and would
   * otherwise ask the server again and again.
   */
  #robotsAnswered(answer: RobotsSnapshot): void {
    // Any answer of a server is the network working (a robots.txt failure says nothing of whether the host answered before).
    if (answer.lastStatus > 0) this.#connectivity.answered(answer.origin);
    this.#slotRobots?.answered(answer.origin); // cluster mode: carried in the origin's slot checkpoint
    if (this.#data?.journaling !== true) return; // in memory, or cluster mode (see cluster-mode.ts)
    try {
      this.#append({ t: 'r', ...answer });
    } catch (err) {
      if (this.#phase === 'running') {
        this.#noteDiskFull(err);
        this.#driverError ??= err;
        this.#abortNow(this.#reason ?? 'stopped');
      }
      throw err;
    }
  }

  #flushStarts(): void {
    // Called around every dispatch; robots.txt starts are rare, so no array is made without one.
    if (this.#starts.length === 0) return;
    for (const s of this.#starts.splice(0)) this.#frontierOf(s.group)?.recordStart(s.group, s.ip, s.at, true);
  }

  /** The frontier holding host group `group`: the one frontier, or in cluster mode its slot's (if this node owns it). */
  #frontierOf(group: string): Frontier | undefined {
    return this.#node !== undefined ? this.#node.frontierOf(group) : this.#frontier;
  }

  /**
   * What a fetch's outcome says of the crawl's own network (`Connectivity`): an HTTP answer
   * (the server's, not a status the engine makes of a failure) says it works; a connection
   * that could not be made or a name that failed to resolve (not "no such name": a resolver
   * answered that) says it may not. Returns `Outcome.offline` for the outcome: true for an
   * unreachable one while the crawl is offline, so it spends no retry.
   */
  #heard(url: string, o: Outcome, now: number): true | undefined {
    const net = this.#connectivity;
    const origin = originKey(url) ?? url;
    if (o.status > 0) net.answered(origin);
    else if (isUnreachable(0, o.errorKind) && !(o.errorKind === 'dns' && this.#names.notFound(url))) net.unreachable(origin, now);
    else return undefined;
    return net.spares(o.status, o.errorKind, now) ? true : undefined;
  }

  /**
   * Whether probe `p` may be asked: in the scope and allowed by robots.txt. One that may not is
   * answered at once with no reply, its body a template as without a probe.
   */
  #mayAsk(p: SoftProbe): boolean {
    if (this.#scope.check(p.url) === undefined && this.#gate.permits(p.url)) return true;
    this.#soft.giveUp(p);
    return false;
  }

  /** The status the frontier is told: soft-404s are gone; so are permanent transport failures. */
  #frontierStatus(req: FetchRequest, o: Outcome, soft404: boolean): number {
    if (soft404) return 404;
    if (o.status !== 0) return o.status;
    // A refused address is a setting, not the server's word: transient here, and the retry is
    // refused at dispatch (`RobotsGate#refuses`) as `Refused`, which a resume re-evaluates.
    if (o.errorKind === 'url') return 410;
    if (o.errorKind === 'dns' && this.#names.notFound(req.url)) return 410;
    return 0;
  }

  #complete(flight: Flight, o: Outcome): void {
    const req = flight.req;
    if (this.#flights.get(req.row) !== flight) return; // dropped by an abort
    if (this.#aborting) {
      this.#flights.delete(req.row);
      this.#driverWaker.notify();
      return;
    }
    if (flight.sendId !== undefined) this.#sends.done(flight.sendId);
    const shaped = this.#shape(req, o, flight.outside);
    flight.reported = shaped.reported;
    flight.page = shaped.page;
    flight.note = shaped.note;
    if (this.listenerCount('fetched') > 0) this.emit('fetched', flight.page);
    this.#outputs.push(flight);
    this.#outputWaker.notify();
    this.#notifyQuiet();
  }

  /**
   * The engine's rules over a fetched outcome: counts, scope over its links and redirect
   * target (those outside go to `outside`), redirect hops, soft-404; returns the outcome as the
   * frontier is told it and the page the consumer gets.
   */
  #shape(req: FetchRequest, fetched: Outcome, outside: Flight['outside']): { reported: Outcome; page: Page; note: ProbeNote | undefined } {
    // A 304 has no body to read as a sitemap: the frontier says whether the URL's last one was
    // (`FetchRequest.sitemap`) — an unchanged feed in a recrawl is no page for maxPages.
    const o = isUnchangedSitemap(req, fetched) ? { ...fetched, sitemap: true } : fetched;
    const now = this.#clock();
    const c = this.#c;
    const s = o.status;
    const offline = this.#heard(req.url, o, now);
    if (s === 0) c.errors++;
    else if (s === 429) c.s429++;
    else if (s >= 500) c.s5xx++;
    else if (s >= 400) c.s4xx++;
    else if (s >= 300) c.s3xx++;
    else if (s >= 200) c.s2xx++;
    if (o.body !== undefined) c.bytes += o.body.length;
    let soft404 = false;
    // A soft-404 probe's answer settles its question and is no page of the site (`site`, below).
    const heard = this.#probes.hear(req.url, o);
    let note: ProbeNote | undefined;
    let ask: SoftProbe | undefined;
    if (heard?.final === true) {
      this.#tally.soft404Probe(heard.cleared);
      note = heard.note;
      // Labelled for the consumer: the site's not-found page, served for the made-up URL too.
      soft404 = heard.template;
      // A 2xx read as no page (told 404), as the progress counts a soft-404.
      if (!heard.served && s >= 200 && s < 300) c.soft404++;
    }
    // A body read as a sitemap is not the site's not-found page (identical sitemaps, empty
    // pages of a paged index, are copies, not a template): never a soft-404, never a page.
    if (heard === undefined && s >= 200 && s < 300 && o.contentFp !== undefined && o.truncated !== true && o.sitemap !== true) {
      // With the page's rel=canonical: copies of one page (a post's permalink to its topic page)
      // share its fingerprint as a not-found template's URLs do, and the canonical tells them apart.
      soft404 = this.#soft.observe(req.host, o.contentFp, req.key, 0, { url: req.url, canonical: o.canonical });
      if (!soft404) {
        // A probe that may not be asked is answered at once: the body is then read as without one.
        // (One observation makes one probe at most; any other is given up, never left holding its shape.)
        const taken = this.#soft.takeProbes();
        for (let i = 1; i < taken.length; i++) this.#soft.giveUp(taken[i]!);
        ask = taken.length > 0 && this.#mayAsk(taken[0]!) ? taken[0] : undefined;
        if (ask === undefined) soft404 = this.#soft.isTemplate(req.host, o.contentFp);
      }
      if (soft404) c.soft404++;
    }
    // A page whole (not cut, no sitemap) is the learners' evidence, whatever the soft-404 verdict:
    // a login form served byte for byte alike is a template too.
    // A probe's made-up URL is no page of the site: its answer settles its question (above) and
    // teaches no lesson, its links are not followed — unless it served a page other than the site's
    // not-found one (the number made up is an item the site has: a page like any).
    const site = heard === undefined || (heard.final && heard.served);
    const whole = site && s >= 200 && s < 300 && o.truncated !== true && o.sitemap !== true;
    if (whole && this.#walls !== undefined) this.#wallLesson(req.url, o);
    if (whole && this.#anchors !== undefined) this.#anchorLesson(req.url, o);
    const missed = this.#checkRewrite(req.url, s, soft404);
    let links = site ? o.links : undefined;
    const target = o.location === undefined ? undefined : (canonicalize(o.location, undefined, this.options.canonPolicy) ?? undefined);
    if (site && this.#copies !== undefined && KnownCopies.hasWordedPair(req.url)) this.#copyLesson(req, o, whole && !soft404, target);
    // Not a soft-404: a dead link's page (a not-found template that says noindex, nofollow) tells
    // nothing of the live pages of its shape.
    if (whole && !soft404 && this.#noindex !== undefined) this.#noindexLesson(req.url, o);
    if (site && this.#deadEndRedirects !== undefined) this.#deadEndLesson(req, s, target, whole && !soft404);
    // Before the scope check: a link taken to a moved origin or without a learned key is checked
    // as it will be keyed.
    if (site && (this.#params !== undefined || this.#aliases !== undefined)) links = this.#rewriteLinks(req, o, target, links, soft404);
    // After the rewrite: a copy's links are compared with the rows its parent's made, rewritten alike.
    if (site && this.#parentRedirects !== undefined) this.#parentRedirectLesson(req, s, target, whole && !soft404, o, links);
    if (site && this.#namedCopies !== undefined) this.#namedCopyLesson(req, s, target, whole && !soft404, o, links);
    if (whole && !soft404 && (this.#parentRedirects !== undefined || this.#namedCopies !== undefined)) links = this.#namedPageLink(req, o, links);
    if (links !== undefined && this.#echo !== undefined && !soft404 && s >= 200 && s < 300) {
      const echoes = this.#echo.observe(req.url, links);
      if (echoes !== undefined) {
        links = links.filter((l) => !echoes.has(l.url));
        this.#tally.echoLinks(echoes.size);
      }
    }
    if (links !== undefined && this.#paging !== undefined && !soft404 && s >= 200 && s < 300 && o.truncated !== true) {
      const past = this.#paging.observe(req.url, links, o.body);
      if (past !== undefined) {
        links = links.filter((l) => !past.has(l.url));
        this.#tally.pagingEnds(past.size);
      }
    }
    if (links !== undefined) {
      if (!soft404) links = this.#refreshRule(req, links);
      const inside: Link[] = [];
      for (const l of links) {
        let out = this.#scope.check(l.url);
        // A seed's refresh target is its redirect: out of the scope, it becomes a seed.
        if (out !== undefined && l.refresh === true && l.nofollow !== true && s >= 200 && s < 300 && !soft404 && this.#seedRedirect(req, l.url, 'refresh')) {
          out = this.#scope.check(l.url);
          // In a cluster the target travels as a seed (`#seedRedirect`), not as this page's link.
          if (this.options.cluster !== undefined) continue;
        }
        if (out === undefined) inside.push(l);
        else if (!l.nofollow) outside.push({ url: l.url, reason: out });
      }
      links = inside.length === links.length ? links : inside;
      // After the scope, before the frontier hears of this page's links: did it bring any new?
      if (this.#views !== undefined && !soft404 && whole) this.#viewLesson(req, o.canonical, links);
      // After the scope: links to a spot on this page under a shape learned to serve it.
      if (this.#anchors !== undefined && !soft404 && whole) {
        const copies = this.#anchors.noteLinks(req.url, { simhash: o.simhash, mainFp: o.churnFp }, links);
        if (copies !== undefined) {
          links = links.filter((l) => !copies.has(l.url));
          this.#tally.anchorCopies(copies.size);
        }
      }
      for (const l of links) if (!l.nofollow) this.#directory.register(l.url);
      if (this.#hints !== undefined) for (const l of links) if (l.lastmod !== undefined) this.#hints.note(l.url, l.lastmod);
    }
    // Last: the probe is no link of the page's for the lessons above, nor the consumer's. It goes
    // first on its host, at this page's depth (`Link.probe`).
    if (ask !== undefined) {
      this.#probes.ask(ask);
      this.#directory.register(ask.url);
      links = [...(links ?? []), { url: ask.url, probe: true }];
      note = { pb: ask.url, ps: ask.shape };
    }
    let location: string | undefined;
    let missedOutside: Flight['outside'][number] | undefined;
    let capped: string | undefined;
    // A made-up URL's redirect is no link the site gave (most lead to its home page): not followed.
    if (o.location !== undefined && heard === undefined) {
      location = target;
      const max = this.options.maxRedirects;
      if (location !== undefined && s >= 300 && s < 400 && !this.#hops.mayFollow(req.url)) {
        capped = `redirect not followed: ${max === 1 ? 'one hop' : `${max} hops`} already led here (maxRedirects)`;
        location = undefined;
      }
      if (location !== undefined && isSelfRedirect({ status: s, url: req.url, location })) {
        // A cookie check: the frontier retries it (the outcome table), and the retry carries
        // the cookie the answer set. With no cookie to send it would only loop: it ends here.
        this.#tally.selfRedirect();
        if (this.#cookies?.has(req.url) !== true) {
          capped = `redirect to itself, and no cookie to send with a retry (a loop${this.#cookies === undefined ? '; cookies are off' : ''})`;
          location = undefined;
        }
      }
      let out = location === undefined ? undefined : this.#scope.check(location);
      if (location !== undefined && out !== undefined && this.#seedRedirect(req, location, 'redirect')) {
        out = this.#scope.check(location);
        // In a cluster the target travels as a seed (`#seedRedirect`), not as this page's link.
        if (this.options.cluster !== undefined) location = undefined;
      }
      if (location !== undefined && out !== undefined) {
        outside.push({ url: location, reason: out });
        location = undefined;
      }
      if (location !== undefined) this.#directory.register(location);
    }
    if (missed !== undefined) {
      // The link as found takes the missed URL's place (`Outcome.location` on a 4xx): at its
      // depth, and judged by the scope as the link itself would have been.
      const out = this.#scope.check(missed);
      if (out === undefined) {
        location = missed;
        this.#directory.register(missed);
      } else {
        missedOutside = { url: missed, reason: out };
      }
    }
    // Every field named rather than `{ ...o }`: outcomes come in many shapes (a fetcher sets
    // the optional fields it has), and spreading one was the engine's costliest line per page.
    // The type makes a field added to Outcome a compile error here until it is carried.
    const reported: { [K in keyof Required<Outcome>]: Outcome[K] } = {
      row: req.row,
      url: req.url,
      // A probe's 2xx reply that is no page (the not-found page; a cut or empty body) is told 404,
      // as a soft-404 is: the made-up URL is never a page to count or recrawl.
      status: heard?.final === true && !heard.served && s >= 200 && s < 300 ? 404 : this.#frontierStatus(req, o, soft404),
      retryAfter: o.retryAfter,
      etag: o.etag,
      lastModified: o.lastModified,
      serverDate: o.serverDate,
      contentType: o.contentType,
      location,
      // A round trip back to a URL that redirected here is worth another fetch only with a cookie to send.
      reopenLocation: location !== undefined && s >= 300 && s < 400 && location !== req.url && this.#cookies?.has(location) === true ? true : undefined,
      contentFp: o.contentFp,
      simhash: o.simhash,
      churnFp: o.churnFp,
      links: soft404 ? undefined : links,
      linksCapped: o.linksCapped,
      latencyMs: o.latencyMs,
      truncated: o.truncated,
      cutAt: o.cutAt,
      sitemap: o.sitemap,
      soft404: soft404 && heard === undefined ? true : undefined,
      robotsDisallowed: o.robotsDisallowed,
      error: o.error,
      errorKind: o.errorKind,
      offline,
      // The machine the frontier's address window hears from: the connection's, else the
      // pinned one (a fetcher that does not say where it connected went there).
      ip: o.ip ?? req.ip,
      fetchMs: o.fetchMs,
      body: undefined,
      canonical: o.canonical,
      noindex: o.noindex,
      nofollow: o.nofollow,
      loginForm: o.loginForm,
      selfLinked: o.selfLinked,
      exchange: o.exchange,
    };
    if (soft404) outside.length = 0;
    if (missedOutside !== undefined) outside.push(missedOutside);
    // A probe is counted as told, never as a failure of its host (but one that served a page).
    if (heard?.final === true && !heard.served && s >= 200 && s < 300) this.#tally.outcome(req, 404, false, undefined, undefined, true);
    else this.#tally.outcome(req, s, soft404 && heard === undefined, o.errorKind, o.error, heard !== undefined && !site);
    if (o.linksCapped === true && !soft404) this.#tally.linksCapped(req.url);
    if (o.truncated === true && s >= 200 && s < 300) {
      // A sitemap cut past the page cap is its own line; one cut at the page cap (a feed, a
      // .xml.gz, a third sitemap while two are read) is a body past --max-body like any page.
      if (o.sitemap === true && o.cutAt !== undefined && o.cutAt !== 'cap') this.#tally.sitemapCut(req.url);
      else this.#tally.bodyCut(req.url);
    }
    if (o.sitemap === true && ((s >= 200 && s < 300) || s === 304)) this.#tally.sitemap();
    const page = makePage(req, capped === undefined || o.error !== undefined ? o : { ...o, error: capped }, soft404, now, heard === undefined ? 'no' : site ? 'page' : 'none');
    return { reported, page, note };
  }

  /**
   * A page's lessons — on the origin it moved to (`OriginAliases`, from a permanent redirect or a
   * page served), on how its origin spells paths (`PathCase`) and on query keys its site ignores
   * (`ParamLearner`) — then its links taken to the origins theirs moved to and without the keys
   * learned for their sections, before the frontier keys them, so a copy is never a row. The
   * spellings an unlearned spelling lesson had taken away from links join a page's links here.
   */
  #rewriteLinks(req: FetchRequest, o: Outcome, location: string | undefined, found: readonly Link[] | undefined, soft404: boolean): readonly Link[] | undefined {
    const aliases = this.#aliases;
    const params = soft404 ? undefined : this.#params;
    const views = soft404 ? undefined : this.#views;
    let links = found;
    if (aliases !== undefined) {
      aliases.observe(req.url, o.status, location);
      this.#slashes?.observe(req.url, o.status, location);
      // A cut page's fingerprints are not the page's: it neither proves nor refutes a lesson. Only a
      // 2xx's body is fingerprinted; another status's body is read (and may be cut) only when the
      // fetcher records for an archive, and its status teaches the same either way.
      if (o.truncated !== true || o.status < 200 || o.status >= 300) {
        const page = { contentFp: o.contentFp, simhash: o.simhash, churnFp: o.churnFp, canonical: o.canonical };
        this.#spellingsLifted(this.#cases?.observe(req.url, soft404 ? 404 : o.status, page));
        this.#spellingsLifted(this.#indexFiles?.observe(req.url, soft404 ? 404 : o.status, page));
      }
      // The spellings a lesson unlearned (here or earlier) took away from links: this page's links
      // now, judged as any of its links (a page without links to pass on leaves them owed).
      if (links !== undefined && o.status >= 200 && o.status < 300 && !soft404) {
        const owed = [...(this.#cases?.takeOwed() ?? []), ...(this.#indexFiles?.takeOwed() ?? [])];
        if (owed.length > 0) links = [...links, ...owed.map((url) => ({ url }))];
      }
    }
    if (params !== undefined && o.status >= 200 && o.status < 300 && o.truncated !== true) params.observe(req.url, o.canonical, o.simhash);
    if (links === undefined) return links;
    let out: Link[] | undefined;
    let moved = 0;
    let stripped = 0;
    let viewed = 0;
    let spelled = 0;
    let indexed = 0;
    for (let i = 0; i < links.length; i++) {
      let url = links[i]!.url;
      const a = aliases?.rewrite(url);
      if (a !== undefined) {
        url = a;
        moved++;
      }
      const sl = this.#slashes?.rewrite(url);
      if (sl !== undefined) {
        if (a === undefined) moved++;
        url = sl;
      }
      const cs = this.#cases?.rewrite(url);
      if (cs !== undefined) {
        url = cs;
        spelled++;
      }
      const ix = this.#indexFiles?.rewrite(url);
      if (ix !== undefined) {
        url = ix;
        indexed++;
      }
      const p = params?.rewrite(url);
      if (p !== undefined) {
        url = p;
        stripped++;
      }
      const v = views?.takeLink(url, req.url);
      if (v !== undefined) {
        url = v;
        viewed++;
      }
      if (url === links[i]!.url) continue;
      out ??= links.slice();
      out[i] = { ...links[i]!, url };
      // A view's rewrite leads to the page its site names canonical, most often fetched already:
      // not remembered for `#checkRewrite` (it would crowd out the other learners' entries).
      if (v !== undefined && a === undefined && sl === undefined && cs === undefined && ix === undefined && p === undefined) continue;
      if (!this.#rewritten.has(url)) {
        this.#rewritten.set(url, links[i]!.url);
        if (this.#rewritten.size > MAX_REWRITTEN) evictOldest(this.#rewritten);
      }
    }
    if (moved > 0) this.#tally.aliasRewrites(moved);
    if (spelled > 0) this.#tally.caseRewrites(spelled);
    if (indexed > 0) this.#tally.indexRewrites(indexed);
    if (stripped > 0) this.#tally.paramRewrites(stripped);
    if (viewed > 0) this.#tally.viewRewrites(viewed);
    return out ?? links;
  }

  /**
   * A fetch of a URL a learner rewrote a link to: a 404, 410 or soft-404 there refutes the lesson
   * (the origin did not move whole; the keys matter there), which is unlearned and banned.
   * Returns the link as found, which `#shape` hands the frontier in the missed URL's place (at
   * its depth, in the journal with the outcome: a wrong lesson costs a fetch, not a page); the
   * summary lists such links (`CrawlSummary.rewriteMisses`).
   */
  #checkRewrite(url: string, status: number, soft404: boolean): string | undefined {
    const original = this.#rewritten.get(url);
    if (original === undefined) return undefined;
    this.#rewritten.delete(url);
    if (!(soft404 || status === 404 || status === 410)) return undefined;
    this.#aliases?.refuted(original, url);
    this.#slashes?.refuted(original, url);
    this.#spellingsLifted(this.#cases?.refuted(original, url));
    this.#spellingsLifted(this.#indexFiles?.refuted(original, url));
    this.#params?.refuted(original, url);
    const views = this.#views?.refuted(original, url);
    if (views !== undefined) this.#requeueRefused((u) => ViewKeys.carries(u, views.keys, views.section), true);
    this.#tally.rewriteMiss(original);
    return original;
  }

  /**
   * A spelling lesson (`PathCase`) unlearned: the spellings it refused at dispatch are queued
   * again (`#requeueRefused`); those it took away from links are owed (`PathCase.takeOwed`).
   */
  #spellingsLifted(lesson: CaseLesson | undefined): void {
    if (lesson === undefined || lesson.learned) return;
    const prefix = `${lesson.origin}/`;
    this.#requeueRefused((u) => u.startsWith(prefix), true);
  }

  /** The journal's record of a page the consumer took (nothing without a data directory). */
  #journalOutcome(flight: Flight, now = this.#clock()): void {
    if (this.#data?.journaling !== true || flight.reported === undefined) return;
    this.#unfinished.delete(flight.req.url);
    const outside = flight.outside.map((x) => x.url);
    this.#append(outcomeRecord(flight.key, flight.req.host, flight.req.dispatchedAtMs, now, flight.reported, outside, flight.note));
  }

  /** The consumer took the page: record the outcome, report it, free the slot. */
  #ack(flight: Flight): void {
    const req = flight.req;
    if (this.#flights.get(req.row) !== flight || flight.reported === undefined) return;
    const now = this.#clock();
    this.#journalOutcome(flight, now);
    this.#frontier!.report(flight.reported, now);
    if (flight.page?.probe === true) {
      // A probe's reply is journaled now; one the frontier ended without a reply is given up.
      if (flight.note !== undefined) this.#probes.forget(req.url);
      else if (this.#frontier!.liveCount([req.url]) === 0) this.#probes.abandon(req.url);
    }
    for (const x of flight.outside) if (this.#refuse(x.url, req.depth + 1, now)) this.#tally.outOfScope(x.reason);
    this.#hops.count(req.url, flight.reported);
    if (countsAsPage(flight.reported)) this.#ok++;
    this.#completed++;
    this.#c.completed++;
    this.#flights.delete(req.row);
    this.#driverWaker.notify();
  }

  /**
   * The page's refresh target as the frontier is to take it (`Link.refresh`: at the page's own
   * depth). One per page — the first marked, whatever the fetcher marked — and none once
   * `maxRedirects` refreshes or redirects in a row led to the page: the target is then an
   * ordinary link, one deeper (its chain counted on, `RedirectHops.passOn`), so a run of
   * refreshing URLs ends at the depth cap. In a cluster, none to another host group (the hop
   * counts are each node's own, and a host group's pages are one slot's, on one node) — but a
   * seed's target out of the scope keeps it, for the seed-redirect rule. Not called for a
   * soft-404 (its links are dropped).
   */
  #refreshRule(req: FetchRequest, links: readonly Link[]): readonly Link[] {
    // Most pages have none: one scan, nothing allocated.
    if (!links.some((l) => l.refresh === true)) return links;
    const target = refreshTargetOf({ links });
    if (target === undefined) return links.map(unmarkRefresh);
    const mayFollow = this.#hops.mayFollow(req.url);
    let keep = mayFollow;
    if (keep && this.options.cluster !== undefined && !this.#seedRefreshOut(req, target)) {
      try {
        keep = hostGroupKey(target, this.options.grouping) === req.host;
      } catch {
        keep = false;
      }
    }
    if (!mayFollow) this.#hops.passOn(req.url, target);
    let marked = false;
    return links.map((l) => {
      if (l.refresh !== true) return l;
      if (keep && !marked && l.url === target && l.nofollow !== true) {
        marked = true;
        return l;
      }
      return unmarkRefresh(l);
    });
  }

  /**
   * Whether `target`, `req`'s refresh target, is out of the scope from a seed's page: the
   * seed-redirect rule (`#seedRedirect`) judges it, whatever its host group — in a cluster the
   * target then travels as a seed, at depth 0, so the per-node hop counts do not matter.
   */
  #seedRefreshOut(req: FetchRequest, target: string): boolean {
    return req.depth === 0 && this.#scope.check(target) !== undefined;
  }

  /** Seeds given while running (`add`, a seed's redirect): among the options' seeds (saved with the settings) and in the scope. */
  #rememberSeeds(list: readonly string[]): void {
    this.#options = Object.freeze({ ...this.#options, seeds: Object.freeze([...this.#options.seeds, ...list.filter((u) => !this.#options.seeds.includes(u))]) });
    this.#seedSet = undefined;
    for (const u of canonicalSeeds(list, this.options.canonPolicy)) this.#scope.addSeed(u);
  }

  /**
   * A seed's redirect leads out of the scope (`http://example.com/` → `https://www.example.com/`
   * under `scope: 'origin'` or `'host'`): its target becomes a seed — in the scope, among the
   * saved seeds (so a resume keeps it), and the same for the next hop of its chain — as
   * Heritrix treats seed redirects; before, such a crawl fetched nothing but the redirect.
   * include/exclude patterns still apply to the target. Returns whether the target was added.
   * In a cluster the seeds are the crawl's (every node's scope seeds, read from Redis), and the
   * target is sent as a seed (`ClusterNode#addSeeds`: recorded among the scope seeds, then
   * routed): its slot's owner re-reads the scope seeds before it applies a seed
   * (`beforeSeeds`), so the target's own links are judged in the widened scope wherever it is
   * fetched.
   */
  #seedRedirect(req: FetchRequest, target: string, how: SeedRedirect['how']): boolean {
    const added = this.#takeSeedRedirect(req, target);
    if (added) this.#tally.seedRedirect({ from: req.url, to: target, how });
    return added;
  }

  /** `#seedRedirect`'s rule and its effect; returns whether the target was added. */
  #takeSeedRedirect(req: FetchRequest, target: string): boolean {
    if (req.depth !== 0) return false;
    const cluster = this.options.cluster !== undefined;
    const seeds = cluster ? this.#crawlSeeds : (this.#seedSet ??= new Set(canonicalSeeds(this.options.seeds, this.options.canonPolicy)));
    // A target the patterns refuse stays out: it is no seed the crawl could take.
    if (!seeds.has(req.url) || seeds.has(target) || this.#scope.patternReason(target) !== undefined) return false;
    if (cluster) {
      const node = this.#node;
      if (node === undefined || !node.acceptsSeeds) return false;
      this.#takeScopeSeeds([target]);
      // A failed send ends the run through the node's run() (as `add`'s do).
      void node.addSeeds([target]).catch(() => undefined);
      return true;
    }
    this.#rememberSeeds([target]);
    try {
      if (this.#data !== undefined) writeCrawlSettings(this.#data.path, this.options, [], new Date());
    } catch {
      // A full disk: the next checkpoint meets it too and ends the run (DiskFullError); until
      // then the target is in this run's scope, and a resume asks the seed again.
    }
    return true;
  }

  /**
   * Keeps an out-of-scope URL in the frontier as `Refused` (so a resume under a wider scope
   * can fetch it) without registering its origin: nothing is resolved or asked of robots.txt
   * for it. Returns whether it was new.
   */
  #refuse(url: string, depth: number, now: number): boolean {
    let host: string;
    try {
      host = hostGroupKey(url, this.options.grouping);
    } catch {
      return false;
    }
    return this.#frontier!.refuse({ url, host, depth, cash: 0 }, now);
  }

  #append(r: JournalRecord): void {
    this.#data?.append(r);
    this.#unsaved++;
  }

  #abortNow(reason: StopReason): void {
    this.#reason ??= reason;
    this.#stopping = true;
    this.#aborting = true;
    this.#stop.abort();
    this.#sends.clear();
    // Pages not yet taken are dropped: their rows stay in flight, so the checkpoint re-queues them.
    for (const f of this.#outputs) this.#flights.delete(f.req.row);
    this.#outputs.length = 0;
    // Fetches still running resolve as aborted and are dropped in #complete; stop waiting for them.
    // Their starts stay known to the next run (the consumer may hold outputs of one: a full disk).
    if (this.#data !== undefined) for (const f of this.#flights.values()) this.#keepStart(f.req.url, f.req.dispatchedAtMs);
    this.#flights.clear();
    // Except the page the loop body holds: it may be writing it now, and when the body returns
    // its outcome must be journaled like any other, or a resume fetches and writes it again
    // (issue 23: a second Ctrl-C during a WARC write duplicated the page). If the body throws
    // or breaks instead, the flight stays in flight and the checkpoint re-queues it.
    const taken = this.#taken;
    if (taken !== undefined) this.#flights.set(taken.req.row, taken);
    this.#driverWaker.notify();
    this.#outputWaker.notify();
    this.#notifyQuiet();
  }

  /**
   * The one place the engine decides what a caught error means for the run: a `DiskFullError`
   * ends it — the first one is kept (`#diskFull`: the error `run()` throws, and no further
   * checkpoint), the reason becomes `diskFull` — and anything else is the caller's to handle.
   * Returns whether `err` was a full disk; every catch that can meet one passes its error here.
   */
  #noteDiskFull(err: unknown): err is DiskFullError {
    if (!(err instanceof DiskFullError)) return false;
    this.#diskFull ??= err;
    this.#reason = 'diskFull';
    return true;
  }

  #attachSignals(): () => void {
    const o = this.options;
    const offs: (() => void)[] = [];
    if (o.signal) {
      const onAbort = (): void => void this.abort();
      if (o.signal.aborted) queueMicrotask(onAbort);
      else o.signal.addEventListener('abort', onAbort, { once: true });
      offs.push(() => o.signal?.removeEventListener('abort', onAbort));
    }
    if (o.handleSignals) {
      let count = 0;
      const onSignal = (): void => {
        count++;
        if (count === 1) void this.stop();
        else void this.abort();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      offs.push(() => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      });
    }
    return () => {
      for (const off of offs) off();
    };
  }

  #finish(): void {
    if (this.#phase !== 'running') return;
    this.#phase = 'ended';
    this.#sends.watch(false);
    this.#reason ??= 'stopped';
    try {
      if (this.#diskFull === undefined && this.#outputsUnsynced === undefined && this.#opened && this.options.dataDir !== undefined && this.#frontier !== undefined) this.#checkpoint();
    } catch (err) {
      if (!this.#noteDiskFull(err)) throw err;
    }
    try {
      this.#data?.sync();
    } catch (err) {
      // The journal's records so far are written; only their fsync failed on the full disk.
      if (!this.#noteDiskFull(err)) throw err;
    }
    const summary = this.summary();
    this.#summary = summary;
    this.emit('end', summary);
    this.#notifyQuiet();
    // The final checkpoint itself met the full disk: the run ends with that error too.
    if (this.#diskFull !== undefined) throw this.#diskFull;
  }

  // ───────────────────────────── checkpoints and progress ─────────────────────────────

  /**
   * The robots.txt fetch as the gate makes it, observed: each answer is emitted as a `robots`
   * event (WARC archiving, logs) and, when `robotsSitemaps` is on, its `Sitemap:` lines are
   * queued as seeds (single-process) or sent to the crawl through the node (cluster mode).
   */
  #observedRobotsFetch(base: RobotsFetch): RobotsFetch {
    return async (url, signal) => {
      const startedAtMs = this.#clock();
      const result = await base(url, signal);
      if (this.listenerCount('robots') > 0) this.emit('robots', { url, startedAtMs, result });
      const found = this.options.robotsSitemaps ? robotsSitemaps(url, result) : [];
      if (found.length > 0) {
        if (this.options.cluster === undefined) this.#sitemapQueue.push(...found);
        else this.#sendSitemaps(found);
      }
      return result;
    };
  }

  /**
   * Cluster mode: the sitemaps a robots.txt answer names go to the crawl through the node, the
   * scope-checked ones routed to their slots without being recorded as scope seeds (as in a
   * single-process run they are seeded and do not widen the scope); the others are recorded in
   * `refusedSeeds`. Queued synchronously within the answer (`ClusterNode.routeFound`), while
   * its origin's slot still holds the URLs waiting on it, so the queue holds the campaign's end
   * from before the slot can be idle — and before the gate records the answer, so any slot
   * checkpoint holding the answer is written after the outbox carrying them is flushed. That
   * includes an answer landing while the node leaves (its final checkpoints hold the answer,
   * and the next owner never asks again).
   */
  #sendSitemaps(found: readonly string[]): void {
    const node = this.#node;
    if (node === undefined) return;
    const seeds = this.#clusterSeeds(found);
    if (seeds.length > 0) node.routeFound(seeds);
  }

  /** Seeds the Sitemap lines robots.txt answers queued (single-process mode), if any. */
  #seedQueuedSitemaps(): void {
    if (this.#sitemapQueue.length > 0) this.#seed(this.#sitemapQueue.splice(0));
  }

  #checkpoint(): void {
    const data = this.#data;
    const f = this.#frontier;
    if (data === undefined || f === undefined) return;
    // The consumer's outputs of the pages this checkpoint marks done reach the disk first; once
    // that failed, no checkpoint of this run may follow (`#outputsUnsynced`).
    if (this.#outputsUnsynced !== undefined) throw this.#outputsUnsynced;
    try {
      this.options.beforeCheckpoint?.();
    } catch (err) {
      this.#outputsUnsynced = err;
      throw err;
    }
    const generation = this.#generation + 1;
    const startedMs = performance.now();
    // A checkpoint holding a robots.txt answer holds the seeds of its Sitemap lines too: queued
    // as the answer arrived, they are seeded now if the loop has not yet (a stop between the two).
    this.#seedQueuedSitemaps();
    // With a disk tier: the resident rows and the tier's committed manifest, not every URL.
    const image = f.checkpointIncremental();
    const bytes = data.checkpoint(
      image,
      {
        generation,
        ...(this.#crawlId === undefined ? {} : { crawl: this.#crawlId }),
        completed: this.#completed,
        ok: this.#ok,
        grouping: this.options.grouping,
        politeness: { ...this.policy },
        groups: this.#directory.export(),
        inFlight: [...this.#flights.values()].map((x) => x.req.url),
        ...this.#fetchStarts(),
        robotsOutages: this.#robotsOutages(f),
        robots: this.#gate.exportRobots(),
        robotsUnreachable: this.#gate.exportOutages(),
        robotsMaxAttempts: this.#robotsGiveUp,
        ...this.#lessons(),
        // A probe whose row is gone (never queued, refused, parked, ended) is no longer awaited.
        ...(this.#probes.size > 0 ? { softProbes: this.#probes.export((url) => f.liveCount([url]) > 0) } : {}),
      },
      this.options.journalSyncEvery,
    );
    this.#generation = generation;
    this.#unsaved = 0;
    this.#checkpointedAtMs = this.#clock();
    this.#c.checkpoints++;
    this.emit('checkpoint', { generation, bytes, urls: image.rows, ms: performance.now() - startedMs });
  }

  /** Remembers a fetch start whose outcome will not be journaled in this run (`#unfinished`). */
  #keepStart(url: string, at: number): void {
    const starts = this.#unfinished.get(url);
    if (starts === undefined) this.#unfinished.set(url, [at]);
    else if (!starts.includes(at)) starts.push(at);
  }

  /**
   * The fetch starts a checkpoint keeps (`EngineState.fetchStarts`): every flight's and the
   * unfinished ones, at most `MAX_FETCH_STARTS` (the newest URLs' kept). Absent when none, so a
   * checkpoint without them is the bytes it was.
   */
  #fetchStarts(): { fetchStarts?: [string, number][] } {
    const out: [string, number][] = [];
    for (const [url, starts] of this.#unfinished) for (const at of starts) out.push([url, at]);
    for (const f of this.#flights.values()) {
      if (!this.#unfinished.get(f.req.url)?.includes(f.req.dispatchedAtMs)) out.push([f.req.url, f.req.dispatchedAtMs]);
    }
    return out.length === 0 ? {} : { fetchStarts: out.slice(-MAX_FETCH_STARTS) };
  }

  /**
   * The learners' lessons as the engine state keeps them, each list only when it holds some: a
   * checkpoint without lessons is the bytes it was.
   */
  #lessons(): { params?: ParamRecord[]; paramNumbers?: ParamNumbersRecord[]; views?: ViewRecord[]; walls?: WallRecord[]; copies?: CopyRecord[]; anchors?: AnchorRecord[]; noindex?: NoindexRecord[]; parentRedirects?: ShapeRecord[]; deadEndRedirects?: ShapeRecord[]; namedCopies?: ShapeRecord[]; aliases?: AliasRecord[]; slashes?: SlashRecord[]; cases?: CaseRecord[]; indexFiles?: CaseRecord[] } {
    const params = this.#params?.export() ?? [];
    const paramNumbers = this.#params?.exportNumbers() ?? [];
    const views = this.#views?.export() ?? [];
    const walls = this.#walls?.export() ?? [];
    const copies = this.#copies?.export() ?? [];
    const anchors = this.#anchors?.export() ?? [];
    const noindex = this.#noindex?.export() ?? [];
    const parentRedirects = this.#parentRedirects?.export() ?? [];
    const deadEndRedirects = this.#deadEndRedirects?.export() ?? [];
    const namedCopies = this.#namedCopies?.export() ?? [];
    const aliases = this.#aliases?.export() ?? [];
    const slashes = this.#slashes?.export() ?? [];
    const cases = this.#cases?.export() ?? [];
    const indexFiles = this.#indexFiles?.export() ?? [];
    return {
      ...(params.length > 0 ? { params } : {}),
      ...(paramNumbers.length > 0 ? { paramNumbers } : {}),
      ...(views.length > 0 ? { views } : {}),
      ...(walls.length > 0 ? { walls } : {}),
      ...(copies.length > 0 ? { copies } : {}),
      ...(anchors.length > 0 ? { anchors } : {}),
      ...(noindex.length > 0 ? { noindex } : {}),
      ...(parentRedirects.length > 0 ? { parentRedirects } : {}),
      ...(deadEndRedirects.length > 0 ? { deadEndRedirects } : {}),
      ...(namedCopies.length > 0 ? { namedCopies } : {}),
      ...(aliases.length > 0 ? { aliases } : {}),
      ...(slashes.length > 0 ? { slashes } : {}),
      ...(cases.length > 0 ? { cases } : {}),
      ...(indexFiles.length > 0 ? { indexFiles } : {}),
    };
  }

  /** The robots.txt outages of hosts held back by one, as a checkpoint records them. */
  #robotsOutages(f: Frontier): RobotsOutageRecord[] {
    const out: RobotsOutageRecord[] = [];
    for (const s of f.hostSnapshots()) {
      if ((s.flags & HostFlags.RobotsUnreachable) === 0) continue;
      const o = this.#gate.outage(s.name);
      if (o !== undefined) out.push([s.name, o.retryAtMs, o.status, o.failures]);
    }
    return out;
  }

  #progress(now: number, advance: boolean, hosts: readonly HostStatus[] = this.hostStates()): Progress {
    const frontiers = this.#openFrontiers();
    const c = this.#c;
    const dt = (now - this.#lastProgress.atMs) / 1000;
    const rate = dt > 0 ? (c.completed - this.#lastProgress.completed) / dt : 0;
    if (advance) this.#lastProgress = { atMs: now, completed: c.completed };
    return {
      elapsedMs: this.#runStartMs === 0 ? 0 : now - this.#runStartMs,
      fetched: this.#completed,
      fetchedThisRun: c.completed,
      pagesOk: this.#ok,
      pagesPerSec: rate,
      inFlight: this.#node?.inFlightFetches() ?? this.#flights.size,
      queued: frontiers.reduce((n, f) => n + f.pending(), 0),
      urls: frontiers.reduce((n, f) => n + f.len(), 0),
      hosts: countHosts(hosts),
      status2xx: c.s2xx,
      status3xx: c.s3xx,
      status4xx: c.s4xx,
      status429: c.s429,
      status5xx: c.s5xx,
      errors: c.errors,
      soft404: c.soft404,
      robotsRequests: this.#gate.requests,
      bytes: c.bytes,
      checkpoints: c.checkpoints,
      wakeups: this.#driverWaker.wakeups,
      offlineSinceMs: this.offlineSinceMs(),
    };
  }

  /**
   * Since when the crawl has been offline (ms on the engine's clock), 0 when it is not: a host
   * that had answered could not be reached (connection failed, name did not resolve) and no
   * server has answered since — the crawler's own network or resolver is the likely cause. For
   * an hour from then an unreachable host spends no retries and no robots.txt tries
   * (`Connectivity`, one per process: in cluster mode it covers every slot the node runs).
   */
  offlineSinceMs(): number {
    return this.#connectivity.sinceMs;
  }

  /** Whether anyone listens for progress (it costs an O(hosts) walk per tick). */
  #reporting(): boolean {
    return this.options.onProgress !== undefined || this.listenerCount('progress') > 0;
  }

  #emitProgress(now: number): void {
    const hosts = this.hostStates();
    const p = this.#progress(now, true, hosts);
    this.#hostsOfProgress = hosts;
    try {
      this.options.onProgress?.(p);
      this.emit('progress', p);
    } finally {
      this.#hostsOfProgress = undefined;
    }
  }
}

/** The canonical URLs this engine's own options widen the scope by: its seeds and the sitemaps given as starting points. */
function scopeSeedsOf(o: Readonly<EngineOptions>): string[] {
  return canonicalSeeds([...o.seeds, ...o.sitemaps], o.canonPolicy);
}

/** The canonical forms of the seeds that are http(s) URLs. */
function canonicalSeeds(seeds: readonly string[], policy: EngineOptions['canonPolicy']): string[] {
  const out: string[] = [];
  for (const raw of seeds) {
    const url = canonicalize(raw, undefined, policy);
    if (url !== null) out.push(url);
  }
  return out;
}

