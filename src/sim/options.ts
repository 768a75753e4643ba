/**
 * The simulated web's configuration: one table for the web as a whole (`SimWebOptions`) and
 * one for the mix of behaviours spread over its hosts and pages (`SimMix`), both validated by
 * `defineOptions`. Shares are fractions of hosts (or of pages, where named so); a share above
 * zero always yields at least one host with that behaviour, so a small test web still has one
 * of everything it asked for.
 */
import { InvalidArgumentError } from '../errors/index.js';
import {
  type FieldSpec,
  booleanField,
  customField,
  defineOptions,
  describeValue,
  functionField,
  numberField,
} from '../options/index.js';
import type { SimRequest } from './types.js';

/** The behaviours spread over the web's hosts and pages. Every share is in [0, 1]. */
export interface SimMix {
  /** Hosts whose robots.txt answers 404 (allow all). */
  readonly robotsMissing: number;
  /** Hosts whose robots.txt answers 5xx forever (complete disallow, RFC 9309 §2.3.1.4). */
  readonly robotsError: number;
  /** Hosts whose robots.txt answers 503 for its first `robotsFlakyFailures` requests, then rules. */
  readonly robotsFlaky: number;
  /** How many robots.txt requests a flaky host fails before it recovers. */
  readonly robotsFlakyFailures: number;
  /**
   * Retry-After (whole seconds) on a flaky host's robots.txt 503s; 0 sends none. The judge
   * holds every request to the host until it ends, robots.txt and pages alike.
   */
  readonly robotsFlakyRetryAfterSeconds: number;
  /** Hosts whose robots.txt is a 301 to `/robots-main.txt` (same host) holding the rules. */
  readonly robotsRedirect: number;
  /** Hosts whose robots.txt is 64 KiB of binary noise with no rule in it (allow all). */
  readonly robotsBinary: number;
  /** Hosts whose robots.txt is 5 MiB: the rules first, then comment padding. */
  readonly robotsHuge: number;
  /** Hosts (with readable rules) that add a group for the agent token, overriding `*`. */
  readonly agentGroup: number;
  /** Hosts (with readable rules) that publish a Crawl-delay. */
  readonly crawlDelay: number;
  /** Crawl-delay values to choose from, seconds. */
  readonly crawlDelaySeconds: readonly number[];
  /** Hosts that wait before answering every request. */
  readonly slow: number;
  /** Base first-byte delay of a slow host, ms (each slow host gets 0.5×–1.5× this). */
  readonly slowMs: number;
  /** Hosts with scripted 429/503 bursts carrying Retry-After. */
  readonly throttled: number;
  /** Retry-After values to choose from, seconds (sent as delta-seconds or as an HTTP-date). */
  readonly retryAfterSeconds: readonly number[];
  /** Hosts where some pages fail (500, 502, 503, reset) on their first one or two requests. */
  readonly erroring: number;
  /** Share of an erroring host's pages that fail at first. */
  readonly errorPages: number;
  /** Hosts with redirects (301/302/307/308, a two-hop chain, a cross-host hop) and loops. */
  readonly redirects: number;
  /** Hosts answering 200 with one template body for every unknown path (soft-404 farms). */
  readonly soft404: number;
  /** Hosts with an infinite calendar under `/calendar/`. */
  readonly calendarTrap: number;
  /** Hosts with a shop under `/shop/` whose every link carries a fresh session id. */
  readonly sessionTrap: number;
  /** Query parameter name of the session-id trap. */
  readonly sessionParam: string;
  /** Hosts linking a decompression bomb and an oversized body under `/download/`. */
  readonly hostile: number;
  /** Extra host names linked from pages that the resolver does not know (as a share of `hosts`). */
  readonly unresolvable: number;
  /** Share of pages whose text changes over time (Poisson). */
  readonly changingPages: number;
  /** Change rates to choose from for changing pages, changes per simulated hour. */
  readonly changeRatesPerHour: readonly number[];
  /** Share of pages with a rotating ad line (cosmetic changes, Poisson). */
  readonly cosmeticPages: number;
  /** Rate of the ad rotation, rotations per simulated hour. */
  readonly cosmeticRatePerHour: number;
  /** Share of non-root pages that mirror another page's text (near-duplicates). */
  readonly nearDuplicates: number;
  /** Share of pages carrying one broken link (404, or the template on a soft-404 farm). */
  readonly brokenLinks: number;
}

/** A mix with every behaviour off: plain hosts with readable robots.txt and static pages. */
export const PLAIN_MIX: Readonly<SimMix> = Object.freeze({
  robotsMissing: 0,
  robotsError: 0,
  robotsFlaky: 0,
  robotsFlakyFailures: 2,
  robotsFlakyRetryAfterSeconds: 0,
  robotsRedirect: 0,
  robotsBinary: 0,
  robotsHuge: 0,
  agentGroup: 0,
  crawlDelay: 0,
  crawlDelaySeconds: [1],
  slow: 0,
  slowMs: 300,
  throttled: 0,
  retryAfterSeconds: [1],
  erroring: 0,
  errorPages: 0.3,
  redirects: 0,
  soft404: 0,
  calendarTrap: 0,
  sessionTrap: 0,
  sessionParam: 'sid',
  hostile: 0,
  unresolvable: 0,
  changingPages: 0,
  changeRatesPerHour: [0.1],
  cosmeticPages: 0,
  cosmeticRatePerHour: 1,
  nearDuplicates: 0,
  brokenLinks: 0,
});

const share = (d: number): FieldSpec<number> => numberField({ min: 0, max: 1, default: d });

const positiveList = (defaultValue: readonly number[]): FieldSpec<readonly number[]> =>
  customField(
    'a non-empty array of finite numbers > 0',
    (v): v is readonly number[] =>
      Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number' && Number.isFinite(x) && x > 0),
    () => Object.freeze([...defaultValue]),
  );

const ROBOTS_MODES = ['robotsMissing', 'robotsError', 'robotsFlaky', 'robotsRedirect', 'robotsBinary', 'robotsHuge'] as const;

/** Validates and defaults a `SimMix` (absent keys take the realistic defaults). */
export const resolveSimMix = defineOptions<SimMix>(
  'SimMix',
  {
    robotsMissing: share(0.1),
    robotsError: share(0.03),
    robotsFlaky: share(0.05),
    robotsFlakyFailures: numberField({ min: 1, max: 100, integer: true, default: 2 }),
    robotsFlakyRetryAfterSeconds: numberField({ min: 0, max: 3600, integer: true, default: 0 }),
    robotsRedirect: share(0.05),
    robotsBinary: share(0.02),
    robotsHuge: share(0.02),
    agentGroup: share(0.1),
    crawlDelay: share(0.2),
    crawlDelaySeconds: positiveList([0.5, 1, 2]),
    slow: share(0.1),
    slowMs: numberField({ min: 0, max: 60_000, default: 300 }),
    throttled: share(0.1),
    retryAfterSeconds: positiveList([1, 2]),
    erroring: share(0.1),
    errorPages: share(0.3),
    redirects: share(0.2),
    soft404: share(0.05),
    calendarTrap: share(0.05),
    sessionTrap: share(0.05),
    sessionParam: customField(
      'a query parameter name (letters, digits, _ or -)',
      (v): v is string => typeof v === 'string' && /^[A-Za-z0-9_-]+$/.test(v),
      () => 'sid',
    ),
    hostile: share(0.02),
    unresolvable: share(0.02),
    changingPages: share(0.3),
    changeRatesPerHour: positiveList([0.02, 0.2, 1]),
    cosmeticPages: share(0.2),
    cosmeticRatePerHour: numberField({ above: 0, max: 3600, default: 2 }),
    nearDuplicates: share(0.1),
    brokenLinks: share(0.05),
  },
  (m) => {
    const total = ROBOTS_MODES.reduce((s, k) => s + m[k], 0);
    if (total > 1 + 1e-9) return `the robots shares (${ROBOTS_MODES.join(', ')}) sum to ${total}, more than 1`;
    if (m.retryAfterSeconds.some((s) => !Number.isInteger(s))) {
      return `retryAfterSeconds must be whole seconds (Retry-After has no fractions), received ${describeValue(m.retryAfterSeconds)}`;
    }
    return undefined;
  },
);

/** Options of `createSimWeb`. */
export interface SimWebOptions {
  /** Seed of every generated thing (integer). Same seed and options → same web. */
  readonly seed: number;
  /** Number of virtual hosts, named `h0.<domain>` … `h<n-1>.<domain>`. */
  readonly hosts: number;
  /** Content pages per host, the root `/` included. */
  readonly pagesPerHost: number;
  /**
   * Number of loopback addresses to listen on, at most 1000: 127.0.0.2 … 127.0.0.251, then
   * 127.0.1.2 … (Linux routes all of 127/8 to the loopback interface).
   */
  readonly ips: number;
  /** TCP port shared by every listener; 0 picks one free on all of them at `start()`. */
  readonly port: number;
  /** Domain under which hosts are named. */
  readonly domain: string;
  /** Product token of the crawler under test, for agent-specific robots groups. */
  readonly agentToken: string;
  /** Configured minimum start-to-start interval per host, ms (raised by Crawl-delay). */
  readonly hostIntervalMs: number;
  /** Minimum start-to-start interval per IP address, ms. */
  readonly ipIntervalMs: number;
  /**
   * How long the server keeps an idle connection open, ms (announced as `Keep-Alive: timeout=`
   * in whole seconds). Default 5,000: Node's and Apache httpd's default; nginx's is 75,000.
   */
  readonly keepAliveMs: number;
  /** Extra same-host links per page (beyond the tree links to children and parent). */
  readonly linksPerPage: number;
  /** Cross-host links per page. */
  readonly crossLinksPerPage: number;
  /** Simulated time origin (epoch ms): the change processes start here. */
  readonly epochMs: number;
  /** Simulated clock (epoch ms) for page versions and Last-Modified; default: a manual clock at `epochMs`. */
  readonly clock: (() => number) | undefined;
  /** Monotonic clock (ms) for the request log and politeness checks; default `performance.now`. */
  readonly now: () => number;
  /** Wall clock (epoch ms) for the Date header and HTTP-date Retry-After; default `Date.now`. */
  readonly wallClock: () => number;
  /** Compress text responses when the request's Accept-Encoding allows (gzip, br, deflate). */
  readonly compress: boolean;
  /** Called with each request's log entry when its response is finished (or aborted). */
  readonly onRequest: ((entry: SimRequest) => void) | undefined;
  /** Behaviour mix; absent keys take the defaults (see `PLAIN_MIX` for all-off). */
  readonly mix: Readonly<SimMix>;
}

/** What `createSimWeb` accepts: every option optional, and `mix` partial too. */
export type SimWebInit = Partial<Omit<SimWebOptions, 'mix'>> & { readonly mix?: Partial<SimMix> | undefined };

const mixField: FieldSpec<Readonly<SimMix>> = {
  expects: 'a SimMix object',
  check(value, fail) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return fail();
    try {
      return resolveSimMix(value as Partial<SimMix>);
    } catch (err) {
      if (err instanceof InvalidArgumentError) return fail(err.message);
      throw err;
    }
  },
  fallback: () => resolveSimMix({}),
};

/** 2025-01-01T00:00:00Z, the default simulated time origin. */
export const DEFAULT_SIM_EPOCH_MS = Date.UTC(2025, 0, 1);

/** Validates and defaults the options of `createSimWeb`. */
export const resolveSimWebOptions = defineOptions<SimWebOptions>(
  'SimWebOptions',
  {
    seed: numberField({ integer: true, min: 0, max: 0xffffffff, default: 1 }),
    hosts: numberField({ integer: true, min: 1, max: 100_000, default: 20 }),
    pagesPerHost: numberField({ integer: true, min: 1, max: 100_000, default: 20 }),
    ips: numberField({ integer: true, min: 1, max: 1000, default: 4 }),
    port: numberField({ integer: true, min: 0, max: 65535, default: 0 }),
    domain: customField(
      'a lowercase DNS name such as "sim.test"',
      (v): v is string => typeof v === 'string' && /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(v),
      () => 'sim.test',
    ),
    agentToken: customField(
      'a robots.txt product token (letters, _ or -)',
      (v): v is string => typeof v === 'string' && /^[A-Za-z_-]+$/.test(v),
      () => 'meguri',
    ),
    hostIntervalMs: numberField({ min: 0, max: 3_600_000, default: 250 }),
    ipIntervalMs: numberField({ min: 0, max: 3_600_000, default: 50 }),
    keepAliveMs: numberField({ integer: true, min: 1000, max: 3_600_000, default: 5_000 }),
    linksPerPage: numberField({ integer: true, min: 0, max: 1000, default: 4 }),
    crossLinksPerPage: numberField({ integer: true, min: 0, max: 1000, default: 1 }),
    epochMs: numberField({ integer: true, min: 0, default: DEFAULT_SIM_EPOCH_MS }),
    clock: functionField<() => number>() as FieldSpec<(() => number) | undefined>,
    now: functionField<() => number>(() => performance.now()),
    wallClock: functionField<() => number>(() => Date.now()),
    compress: booleanField(true),
    onRequest: functionField<(entry: SimRequest) => void>() as FieldSpec<((entry: SimRequest) => void) | undefined>,
    mix: mixField,
  },
);
