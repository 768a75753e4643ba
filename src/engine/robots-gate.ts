/**
 * `RobotsGate`: the frontier's robots seam. It owns the crawl's `RobotsCache` and the way a
 * robots.txt request reaches a server, in one direction:
 *
 *   frontier.dispatch → gate.request(group) → RobotsCache.check → gate.paced (this file)
 *     → SendGate (per-IP send order) → onStart (journal, host windows) → fetch
 *
 * A group is *ready* when every origin's hostname is answered (dns-seam.ts) and every
 * origin's robots.txt is known (fetched, 4xx, or given up after `maxAttempts` unreachable
 * answers in a row, which then disallows everything, RFC 9309 §2.3.1.4; continuous mode
 * passes Infinity and leaves the long-outage rule to RobotsCache). When the frontier asks for
 * a not-ready group it is at a moment the host and its IP may be fetched, so the gate starts
 * *one* request: a DNS resolution (not a fetch: the host waits a short poll) or one
 * robots.txt hop (a fetch start: `started: true`, and the frontier spends the host and IP
 * windows for it). A redirected robots.txt hop waits for the next such moment, so every
 * request the server sees is paced like a content fetch. An unreachable robots.txt parks the
 * host until its retry time, and a Retry-After on it (429, 503) holds the whole group until
 * the time it names — content fetches too, even while a cached copy of the rules applies.
 * Every answer goes to `onAnswer` before the cache acts on it (the engine journals it). A
 * hostname that does not resolve, or resolves only to refused addresses, needs no robots.txt:
 * its content fetch fails with a clear outcome instead.
 *
 * Never: fetch a content URL, resolve a name itself (the DNS seam does), or let a group's
 * content dispatch before its robots.txt is answered.
 */
import { type Fetcher, HttpFetcher } from '../fetch/http.js';
import { RobotsCache, type RobotsFetch, type RobotsFetchResult, type RobotsSnapshot } from '../fetch/robots-cache.js';
import { productToken } from '../fetch/robots.js';
import type { RobotsRequest, RobotsSeam } from '../frontier/index.js';
import { splitOrigin } from '../url/host.js';
import type { AnchorCopies, DeadEndRedirects, KnownCopies, NamedCopies, LoginWalls, NoindexShapes, ParamLearner, ParentRedirects, PathCase, ShapeLessons, SlashRules, ViewKeys } from '../dedup/index.js';
import type { DnsSeam } from './dns-seam.js';
import type { HostDirectory } from './host-directory.js';
import type { Scope } from './scope.js';
import type { SendGate } from './send-gate.js';
import type { Tally } from './tally.js';

const HOUR_MS = 3_600_000;

/**
 * The fetch of one robots.txt hop for `fetcher`: the HTTP fetcher's own robots fetch, a
 * custom fetcher's `robotsFetch()` when it has one, else its `fetch` with a synthetic request
 * pinned to the address `addressOf` gives.
 */
export function robotsFetchOf(fetcher: Fetcher, addressOf: (url: string) => string | undefined, clock: () => number): RobotsFetch {
  if (fetcher instanceof HttpFetcher) return fetcher.robotsFetch();
  const maybe = (fetcher as { robotsFetch?: () => RobotsFetch }).robotsFetch;
  if (typeof maybe === 'function') return maybe.call(fetcher);
  return (url, signal) => fetcher.fetch({ row: -1, key: new Uint32Array(4), url, host: '', ip: addressOf(url), depth: 0, dispatchedAtMs: clock() }, signal);
}

/**
 * A promise that `start` settles through the `resolve` it is given, or that resolves to
 * `aborted` when `signal` aborts first. The abort listener goes when the promise settles
 * either way: one load's signal lives through every hop of its robots.txt (up to six with
 * RFC 9309's five redirects), two waits a hop, and listeners left behind piled up to Node's
 * MaxListenersExceededWarning on a chain the RFC allows.
 */
function untilAborted<T>(signal: AbortSignal, aborted: T, start: (resolve: (value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve) => {
    const onAbort = (): void => resolve(aborted);
    signal.addEventListener('abort', onAbort, { once: true });
    start((value) => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
  });
}

/** One robots.txt load in progress. */
interface Load {
  readonly group: string;
  readonly startedAtMs: number;
  hops: number;
  /** Set while a redirect hop waits for the frontier's next slot. */
  release: (() => void) | undefined;
}

/** Options of `RobotsGate`. */
export interface RobotsGateOptions {
  readonly directory: HostDirectory;
  /** DNS answers per hostname (a name that cannot be fetched needs no robots.txt). */
  readonly names: DnsSeam;
  /** The per-IP send order every robots.txt hop leaves through, like a content request. */
  readonly sends: SendGate;
  /** The crawl's scope, asked again at dispatch (settings may have narrowed on resume). */
  readonly scope: Scope;
  /** Counts refusals and robots.txt disallows per reason. */
  readonly tally: Tally;
  /** Query keys learned ignorable: a queued copy of a page fetched this run is refused. */
  readonly params?: ParamLearner | undefined;
  /** Query keys learned to select a view of the page the site names canonical: a queued URL carrying one is refused. */
  readonly views?: ViewKeys | undefined;
  /** Whether a URL has a row in the frontier (a view is refused only while the page without its keys has one). */
  readonly knows?: ((url: string) => boolean) | undefined;
  /** Paths learned to answer one login form whatever is asked: their queued URLs are refused. */
  readonly walls?: LoginWalls | undefined;
  /** Query pairs learned to name a page the crawl knows as theirs: a queued URL carrying one is refused. */
  readonly copies?: KnownCopies | undefined;
  /** URL shapes whose anchored links are copies of their page: such a link queued is refused. */
  readonly anchors?: AnchorCopies | undefined;
  /** URL shapes learned to say noindex and nofollow: their queued URLs are refused. */
  readonly noindex?: NoindexShapes | undefined;
  /** URL shapes learned to redirect into (or copy) their parent page: their queued URLs are refused once the parent page was fetched. */
  readonly parentRedirects?: ParentRedirects | undefined;
  /** URL shapes learned to redirect where the crawl does not go: their queued URLs are refused. */
  readonly deadEndRedirects?: DeadEndRedirects | undefined;
  /** URL shapes learned to serve copies of other pages they name canonical: their queued URLs are refused. */
  readonly namedCopies?: NamedCopies | undefined;
  /** Sections' slash rules: a queued URL that would redirect to a page fetched this run is refused. */
  readonly slashes?: SlashRules | undefined;
  /** Origins learned to ignore the case of paths: a queued spelling of a page served this run under another is refused. */
  readonly cases?: PathCase | undefined;
  /** Origins learned to serve a directory's index file as the directory: a queued other spelling of a page served this run is refused. */
  readonly indexFiles?: PathCase | undefined;
  /** Obey robots.txt; when false the gate only waits for DNS. */
  readonly enabled: boolean;
  /** Fetches one robots.txt hop (no redirects followed); see `robotsFetchOf`. */
  readonly fetch: RobotsFetch;
  /** The User-Agent; robots.txt groups are matched against its product token. */
  readonly agent: string;
  readonly ttlMs: number;
  /** First retry of an unreachable robots.txt, ms (doubles per failure up to max(this, 1 h)). */
  readonly retryMs: number;
  readonly maxAttempts: number;
  /**
   * Whether a robots.txt failure (status 0 of a kind) now is spared because the crawl is offline
   * (src/engine connectivity.ts `Connectivity.spares`): it then does not count towards
   * `maxAttempts`, nor lengthens its retry back-off — the crawler's own network is down, not the host.
   */
  readonly spares: (status: number, errorKind: string | undefined) => boolean;
  readonly maxCrawlDelayMs: number;
  readonly clock: () => number;
  /** A robots.txt hop is handed to the fetcher now (journal it, time it). */
  readonly onStart: (group: string, robotsUrl: string) => void;
  /** A robots.txt answer, as the cache will hold it, before it does (journal it). */
  readonly onAnswer: (answer: RobotsSnapshot) => void;
  /** A group's robots.txt load or DNS resolution finished (the host may go now). */
  readonly onSettled: (group: string) => void;
  /** Aborts every load when the engine stops. */
  readonly signal: AbortSignal;
}

/** Shortest and longest wait between the frontier's polls of a pending group, ms. */
const POLL_MIN_MS = 10;
const POLL_MAX_MS = 1000;

/** An origin whose robots.txt the gate gave up on, and what its last attempt got. */
export interface RobotsGiveUp {
  readonly origin: string;
  /** Status of the last attempt (0 = no response). */
  readonly status: number;
  readonly failures: number;
  /** Why the last attempt failed, when there was no response. */
  readonly error: string | undefined;
}

/** The robots seam over a `HostDirectory`, a `DnsSeam` and a `RobotsCache` it owns. */
export class RobotsGate implements RobotsSeam {
  private readonly loads = new Map<string, Load>();
  private readonly loadBySignal = new WeakMap<AbortSignal, Load>();
  private readonly cache: RobotsCache | undefined;
  private readonly agentToken: string;
  /**
   * The shape lessons the dispatch asks, in order, each with its tally count: the first whose
   * learned shape covers a URL decides (`refuses`).
   */
  private readonly shapeLessons: readonly (readonly [ShapeLessons, () => void])[];
  /** Robots.txt requests started (each hop counts). */
  requests = 0;
  /** isAllowed asked for an origin the directory never registered (should stay 0). */
  misses = 0;

  constructor(private readonly o: RobotsGateOptions) {
    this.agentToken = productToken(o.agent);
    const { noindex, parentRedirects, deadEndRedirects, namedCopies, tally } = o;
    const lessons: [ShapeLessons | undefined, () => void][] = [
      [noindex, () => tally.noindexSkipped()],
      [parentRedirects, () => tally.parentRedirect()],
      [deadEndRedirects, () => tally.deadEndRedirect()],
      [namedCopies, () => tally.namedCopy()],
    ];
    this.shapeLessons = lessons.filter((l): l is [ShapeLessons, () => void] => l[0] !== undefined);
    this.cache = o.enabled
      ? new RobotsCache({
          fetch: (url, signal) => this.paced(url, signal),
          agent: o.agent,
          now: o.clock,
          ttlMs: o.ttlMs,
          retryBaseMs: o.retryMs,
          retryMaxMs: Math.max(o.retryMs, HOUR_MS),
          onAnswer: o.onAnswer,
          // The crawler's own network down is no failure of the host's (src/engine connectivity.ts).
          countFailure: (r) => !o.spares(r.status, r.errorKind),
        })
      : undefined;
  }

  /**
   * One robots.txt hop of a load this gate started: a redirect hop first waits for the
   * frontier's next slot for the group (`request`), then every hop leaves through the per-IP
   * send order and is announced (`onStart`) the moment it is handed to the fetcher.
   */
  private async paced(url: string, signal: AbortSignal): Promise<RobotsFetchResult> {
    const load = this.loadBySignal.get(signal);
    if (load === undefined) {
      this.requests++;
      return this.o.fetch(url, signal);
    }
    if (load.hops > 0) {
      await untilAborted(signal, undefined, (resolve) => {
        load.release = () => resolve(undefined);
      });
      if (signal.aborted) return { status: 0, error: 'aborted' };
    }
    load.hops++;
    const group = load.group;
    const sends = this.o.sends;
    try {
      return await untilAborted<RobotsFetchResult>(signal, { status: 0, error: 'aborted' }, (resolve) => {
        sends.send(url, group, this.o.names.addressOf(url), () => {
          this.requests++;
          this.o.onStart(group, url);
          this.o.fetch(url, signal).then(resolve, (err: unknown) => resolve({ status: 0, error: err instanceof Error ? err.message : String(err) }));
        });
      });
    } finally {
      sends.finished(url);
    }
  }

  /** Until when a robots.txt Retry-After holds the origin (0: it does not). */
  private heldUntilMs(origin: string): number {
    return this.cache === undefined ? 0 : this.cache.heldUntilMs(`${origin}/`);
  }

  private givenUp(origin: string): boolean {
    const e = this.cache?.entry(origin);
    return e !== undefined && e.state === 'unreachable' && e.robots === undefined && e.failures >= this.o.maxAttempts;
  }

  /** Whether the origin's robots.txt is settled for now (known, or given up). */
  private robotsKnown(origin: string): boolean {
    const cache = this.cache;
    if (cache === undefined) return true;
    // Given up stays given up for the campaign, even once the entry is due for a refresh.
    if (this.givenUp(origin)) return true;
    const v = cache.peek(`${origin}/`);
    if (v === undefined) return false;
    return v.reason !== 'unreachable';
  }

  ready(group: string): boolean {
    for (const origin of this.o.directory.originsOf(group)) {
      const name = this.o.names.nameState(this.o.directory.hostnameOf(origin));
      if (name === 'pending') return false;
      if (name === 'unfetchable') continue;
      if (!this.robotsKnown(origin) || this.heldUntilMs(origin) > 0) return false;
    }
    return true;
  }

  request(group: string, nowMs: number): RobotsRequest {
    let pollAt = Infinity;
    let retryAt = Infinity;
    for (const origin of this.o.directory.originsOf(group)) {
      const hostname = this.o.directory.hostnameOf(origin);
      const name = this.o.names.nameState(hostname);
      if (name === 'pending') {
        this.o.names.resolve(hostname, group);
        const since = this.o.names.resolvingSince(hostname) ?? nowMs;
        pollAt = Math.min(pollAt, nowMs + clampPoll(nowMs - since));
        continue;
      }
      if (name === 'unfetchable') continue;
      const held = this.heldUntilMs(origin);
      if (held > 0) {
        // A Retry-After on its robots.txt: nothing goes to the origin before it ends.
        retryAt = Math.min(retryAt, held);
        continue;
      }
      if (this.robotsKnown(origin)) continue;
      const load = this.loads.get(origin);
      if (load !== undefined) {
        if (load.release !== undefined) {
          const release = load.release;
          load.release = undefined;
          release();
          return { started: true };
        }
        pollAt = Math.min(pollAt, nowMs + clampPoll(nowMs - load.startedAtMs));
        continue;
      }
      const cache = this.cache!;
      const stale = cache.peek(`${origin}/`);
      if (stale !== undefined && stale.reason === 'unreachable') {
        // Unreachable and not yet due for a retry (peek answers only while the entry is fresh).
        retryAt = Math.min(retryAt, stale.retryAtMs ?? nowMs + POLL_MAX_MS);
        continue;
      }
      this.start(group, origin, nowMs);
      return { started: true };
    }
    if (pollAt < Infinity) return { started: false, retryAtMs: Math.min(pollAt, retryAt) };
    if (retryAt < Infinity) return { started: false, retryAtMs: retryAt, unreachable: true };
    return { started: false, retryAtMs: nowMs + POLL_MIN_MS };
  }

  private start(group: string, origin: string, nowMs: number): void {
    const controller = new AbortController();
    const outer = this.o.signal;
    const onAbort = (): void => controller.abort();
    outer.addEventListener('abort', onAbort, { once: true });
    const load: Load = { group, startedAtMs: nowMs, hops: 0, release: undefined };
    this.loads.set(origin, load);
    this.loadBySignal.set(controller.signal, load);
    void this.cache!
      .check(`${origin}/`, controller.signal)
      .catch(() => undefined)
      .finally(() => {
        outer.removeEventListener('abort', onAbort);
        this.loads.delete(origin);
        this.o.onSettled(group);
      });
  }

  /**
   * Whether a setting refuses `url`: out of scope, a copy of a page fetched this run (query
   * keys learned ignorable, `EngineOptions.learnParams`), a redirect to a page fetched this run
   * (a section's slash rule, `EngineOptions.learnAliases`), a view of a page the site names
   * canonical (`ViewKeys`, under `learnParams`; not a seed, nor one URL in 32 picked as a check),
   * a URL whose path answers one login form whatever is asked (`LoginWalls`, under `learnParams`;
   * not a seed, `depth` 0; every 32nd let through as a check), a URL whose query pair names a page
   * the crawl knows as its page (`KnownCopies`, under `learnParams`; not a seed, nor one URL in 32
   * picked as a check), a URL whose shape says noindex and nofollow (`NoindexShapes`, under
   * `learnNoindex`; not a seed, nor a URL `fetched` before; some let through as checks), a URL
   * whose shape redirects into its parent page once the crawl fetched that page
   * (`ParentRedirects`, under `learnAliases`; the same exceptions), a URL whose shape redirects
   * where the crawl does not go (`DeadEndRedirects`, under `learnAliases`; the same exceptions), a
   * URL whose shape serves copies of pages it names canonical (`NamedCopies`, under
   * `learnAliases`; the same exceptions) — of these four shape lessons the first whose learned
   * shape covers the URL decides, its checks included — another spelling of a page served this run
   * on an origin that ignores letter case or serves a directory's index file as the directory
   * (`PathCase`, under `learnAliases`; some let through as checks), a name that does not exist, an
   * address the policy refuses. Counted once per URL (the frontier keeps it `Refused`).
   */
  refuses(url: string, depth: number, fetched = false): boolean {
    const out = this.o.scope.check(url);
    if (out !== undefined) {
      this.o.tally.outOfScope(out);
      return true;
    }
    if (this.o.params?.duplicateOf(url) !== undefined) {
      this.o.tally.paramCopy();
      return true;
    }
    if (this.o.views?.refuses(url, depth, this.o.knows) === true) {
      this.o.tally.viewCopy();
      return true;
    }
    // A seed the user named is fetched whatever the path's wall says.
    if (depth > 0 && this.o.walls?.refuse(url) === true) {
      this.o.tally.loginWalled();
      return true;
    }
    if (this.o.copies?.refuses(url, depth) === true) {
      this.o.tally.knownCopy();
      return true;
    }
    if (this.o.anchors?.refuses(url, depth) === true) {
      this.o.tally.anchorCopies();
      return true;
    }
    // The shape lessons: the first whose learned shape covers the URL decides, its checks included
    // — were the next asked after one let a check through, a URL two lessons learned would be
    // fetched only where both did (one in a thousand, not one in 32), a wrong lesson caught late.
    for (const [lesson, counted] of this.shapeLessons) {
      if (lesson.covers(url) === undefined) continue;
      if (!lesson.refuses(url, depth, fetched)) break;
      counted();
      return true;
    }
    if (this.o.cases?.refuses(url) === true) {
      this.o.tally.caseCopy();
      return true;
    }
    if (this.o.indexFiles?.refuses(url) === true) {
      this.o.tally.indexCopy();
      return true;
    }
    if (this.o.slashes?.duplicateOf(url) !== undefined) {
      this.o.tally.aliasCopy();
      return true;
    }
    const parts = splitOrigin(url);
    if (parts === undefined) return false;
    const refusal = this.o.names.refusal(parts.host);
    if (refusal === undefined) return false;
    this.o.tally.refused(refusal.reason, parts.host, refusal.detail);
    return true;
  }

  /**
   * Whether a robots.txt the crawl has read and parsed disallows `url` by its rules (counts
   * nothing): the fresh entry's rules, a copy kept through an outage included, else the copy an
   * expired entry still holds (as `allowed` judges). An origin whose robots.txt is not read yet,
   * unreachable with no copy (disallowed only for now), given up on, or with none is not: this
   * asks what the site says, not whether the crawl may go there at this moment
   * (`DeadEndRedirects`' question about a redirect's target). False for a URL that is not http(s).
   */
  disallowsByRules(url: string): boolean {
    const cache = this.cache;
    if (cache === undefined || splitOrigin(url) === undefined) return false;
    const v = cache.peek(url);
    if (v !== undefined) return v.reason === 'rules' && !v.allowed;
    const robots = cache.entry(url)?.robots;
    return robots !== undefined && !robots.isAllowed(url, this.agentToken);
  }

  /** Whether robots.txt, as known now, lets `url` be fetched (counts nothing: a question asked before queuing, as for a soft-404 probe). */
  permits(url: string): boolean {
    return this.allowed(url);
  }

  isAllowed(url: string): boolean {
    const allowed = this.allowed(url);
    if (!allowed) this.o.tally.disallowed();
    return allowed;
  }

  private allowed(url: string): boolean {
    const cache = this.cache;
    if (cache === undefined) return true;
    const parts = splitOrigin(url);
    if (parts === undefined) return false;
    const origin = parts.origin;
    if (this.o.names.nameState(this.o.directory.hostnameOf(origin) || parts.host) === 'unfetchable') return true;
    if (this.givenUp(origin)) return false;
    const v = cache.peek(url);
    if (v !== undefined) return v.allowed;
    // The entry went stale between ready() and here: judge by the copy it still holds.
    const e = cache.entry(url);
    if (e?.robots !== undefined) return e.robots.isAllowed(url, this.agentToken);
    if (e?.state === 'unavailable') return true;
    this.misses++;
    return false;
  }

  crawlDelayMs(group: string): number | undefined {
    const cache = this.cache;
    if (cache === undefined) return undefined;
    let delay: number | undefined;
    for (const origin of this.o.directory.originsOf(group)) {
      const d = cache.crawlDelayMs(`${origin}/`);
      if (d !== undefined && Number.isFinite(d) && (delay === undefined || d > delay)) delay = d;
    }
    return delay === undefined ? undefined : Math.min(delay, this.o.maxCrawlDelayMs);
  }

  /** Whether a robots.txt load or a DNS resolution for the group is under way. */
  pending(group: string): boolean {
    for (const origin of this.o.directory.originsOf(group)) {
      if (this.loads.has(origin) || this.o.names.resolvingSince(this.o.directory.hostnameOf(origin)) !== undefined) return true;
    }
    return false;
  }

  /** robots.txt retry time, last status and failures in a row of a group's unreachable origin, if any. */
  outage(group: string): { retryAtMs: number; status: number; failures: number; error: string | undefined; rulesKept: boolean } | undefined {
    const cache = this.cache;
    if (cache === undefined) return undefined;
    for (const origin of this.o.directory.originsOf(group)) {
      const e = cache.entry(origin);
      if (e?.state === 'unreachable') return { retryAtMs: e.refreshAtMs, status: e.lastStatus, failures: e.failures, error: e.lastError, rulesKept: e.robots !== undefined };
    }
    return undefined;
  }

  /**
   * The first origin of a group whose robots.txt the gate gave up on (unreachable
   * `maxAttempts` times in a row, no copy ever read): its URLs were written off, and a host
   * left with nothing else to fetch should say so rather than just "nothing to fetch".
   */
  gaveUp(group: string): RobotsGiveUp | undefined {
    for (const origin of this.o.directory.originsOf(group)) {
      if (!this.givenUp(origin)) continue;
      const e = this.cache!.entry(origin)!;
      return { origin, status: e.lastStatus, failures: e.failures, error: e.lastError };
    }
    return undefined;
  }

  /** Fresh robots.txt entries for a checkpoint (none with robots off). */
  exportRobots(): RobotsSnapshot[] {
    return this.cache?.exportFresh() ?? [];
  }

  /** Unreachable robots.txt entries (retry time, failures, Retry-After hold) for a checkpoint. */
  exportOutages(): RobotsSnapshot[] {
    return this.cache?.exportOutages() ?? [];
  }

  /** Fresh and unreachable robots.txt entries of `origins` (a cluster slot's), for its checkpoint. */
  exportOrigins(origins: Iterable<string>): RobotsSnapshot[] {
    return this.cache?.exportOrigins(origins) ?? [];
  }

  /** Forgets the robots.txt entries of `origins` (a cluster slot handed off: its next owner holds them). */
  forget(origins: Iterable<string>): void {
    const cache = this.cache;
    if (cache !== undefined) for (const origin of origins) cache.invalidate(`${origin}/`);
  }

  /** Takes back a checkpoint's robots.txt entries (an older one this process holds is replaced); returns how many are still in force. */
  importRobots(snapshots: readonly RobotsSnapshot[]): number {
    return this.cache?.importFresh(snapshots) ?? 0;
  }

  /** Puts a journaled robots.txt answer back (replacing the checkpoint's); false when expired or robots are off. */
  restoreAnswer(answer: RobotsSnapshot): boolean {
    return this.cache?.restore(answer) ?? false;
  }

  /**
   * Origins whose robots.txt load has a request out or on its way to the send order — not one
   * parked until the frontier's next slot for a redirect hop (that one sends nothing until then).
   */
  *sendingOrigins(): IterableIterator<string> {
    for (const [origin, load] of this.loads) if (load.release === undefined) yield origin;
  }

  /** robots.txt loads in progress. */
  get loading(): number {
    return this.loads.size;
  }
}

function clampPoll(ageMs: number): number {
  return Math.min(POLL_MAX_MS, Math.max(POLL_MIN_MS, ageMs));
}
