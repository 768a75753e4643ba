/**
 * The data the simulated web hands out: its ground truth (hosts, pages, traps, rules) and its
 * request log. Plain readonly records; every behaviour lives elsewhere in src/sim.
 *
 * Paths in the ground truth are page keys: the request target with tracking parameters
 * (`utm_*`, `gclid`, `fbclid`, `msclkid`) and the session parameter removed and the remaining
 * query pairs sorted by name — the form a canonicalizing crawler requests, and the form the
 * server looks pages up by. They carry no origin because the port is only known after
 * `start()`; `SimWeb.url(host, path)` makes a URL of one.
 */

/** How a host answers `/robots.txt`. */
export type RobotsMode =
  /** 200 with rules. */
  | 'normal'
  /** 404: allow all. */
  | 'missing'
  /** 500 forever: complete disallow. */
  | 'error'
  /** 503 for the first few requests, then 200 with rules. */
  | 'flaky'
  /** 301 to `/robots-main.txt` on the same host, which has the rules. */
  | 'redirect'
  /** 200 with 64 KiB of binary noise: no rules, allow all. */
  | 'binary'
  /** 200 with 5 MiB: the rules, then comment padding. */
  | 'huge';

/** What a request target resolves to on a host. */
export type SimResourceKind =
  | 'robots'
  | 'page'
  | 'redirect'
  | 'loop'
  | 'bait'
  | 'calendar'
  | 'session'
  | 'soft404'
  | 'missing'
  | 'hostile'
  | 'unknown-host'
  | 'misrouted'
  | 'bad-method';

/** A host's rule group as it applies to the configured agent token (RFC 9309 group selection). */
export interface SimRobotsRules {
  /** Allow patterns (RFC 9309 syntax: `*`, trailing `$`). */
  readonly allow: readonly string[];
  /** Disallow patterns. */
  readonly disallow: readonly string[];
  /** Crawl-delay in seconds, when the group has one. */
  readonly crawlDelaySec: number | undefined;
  /** True when the group is the agent-specific one (the `*` group does not apply then). */
  readonly agentSpecific: boolean;
}

/** One scripted throttling burst of a host. */
export interface SimBurst {
  /** Zero-based ordinal of the host's first content request (robots.txt excluded) in the burst. */
  readonly atRequest: number;
  /** Number of consecutive content requests answered with `status`. */
  readonly length: number;
  readonly status: 429 | 503;
  /** Announced wait, whole seconds. */
  readonly retryAfterSec: number;
  /** How Retry-After is written: `seconds` (delta-seconds) or `date` (IMF-fixdate on the wall clock). */
  readonly form: 'seconds' | 'date';
}

/** A redirect the sim serves. */
export interface SimRedirect {
  /** Source page key on the host. */
  readonly from: string;
  readonly status: 301 | 302 | 307 | 308;
  /** Target host name and page key (the target may be another redirect, on a chain). */
  readonly toHost: string;
  readonly toPath: string;
}

/** A family of trap URLs: infinite URL spaces a crawler must contain. */
export interface SimTrapFamily {
  /** `calendar@<host>` or `session@<host>`. */
  readonly id: string;
  readonly kind: 'calendar' | 'session';
  readonly host: string;
  /** Every URL of the family has a path under this prefix. */
  readonly prefix: string;
  /** The page key linked from the host's ordinary pages. */
  readonly entry: string;
  /** Session traps: the parameter that changes on every link. */
  readonly param?: string | undefined;
  /**
   * Session traps: the finite page set a crawler that strips the session parameter fetches
   * (the trap is infinite only for crawlers that keep it). Calendar traps: empty.
   */
  readonly finitePaths: readonly string[];
}

/** A soft-404 farm: one template body served with 200 for every unknown path. */
export interface SimSoft404Farm {
  readonly host: string;
  /** The dead paths the host's pages link to (each answers 200 with the template). */
  readonly paths: readonly string[];
  /** The template body, byte for byte (to compute its fingerprint). */
  readonly template: string;
}

/** A deliberately hostile resource. */
export interface SimHostile {
  readonly host: string;
  readonly path: string;
  /** `bomb`: gzip-encoded, expands to `decodedBytes`. `huge`: an identity body of `decodedBytes`. */
  readonly kind: 'bomb' | 'huge';
  readonly decodedBytes: number;
}

/** Behaviour switches of one host (see `SimMix`). */
export interface SimHostFeatures {
  readonly slowMs: number;
  readonly throttled: boolean;
  readonly erroring: boolean;
  readonly redirects: boolean;
  readonly soft404: boolean;
  readonly calendarTrap: boolean;
  readonly sessionTrap: boolean;
  readonly hostile: boolean;
}

/** Ground truth of one virtual host. */
export interface SimHostTruth {
  readonly name: string;
  readonly index: number;
  /** Loopback address the host is served on (and what `resolve` answers). */
  readonly ip: string;
  readonly robotsMode: RobotsMode;
  /** The rule group that applies to the agent token; undefined when robots.txt has none (missing, error, binary). */
  readonly rules: SimRobotsRules | undefined;
  /** The full robots.txt text for modes that serve one (huge: without its padding). */
  readonly robotsText: string | undefined;
  /** Required start-to-start interval: max(hostIntervalMs, Crawl-delay). */
  readonly requiredIntervalMs: number;
  readonly features: SimHostFeatures;
  readonly bursts: readonly SimBurst[];
  /**
   * The content pages a perfect polite crawler seeded with every host root fetches exactly
   * once: reachable, allowed for the agent token, not in a trap (empty for `robotsMode: 'error'`).
   */
  readonly pages: readonly string[];
  /** Linked paths the host's rules disallow (never to be requested). */
  readonly disallowed: readonly string[];
  readonly redirects: readonly SimRedirect[];
  /** Paths in redirect loops (reachable only through a loop). */
  readonly loops: readonly string[];
  /** Linked paths answering a real 404. */
  readonly missing: readonly string[];
  /** Pairs [original, mirror] of reachable pages with the same text and a different ad line. */
  readonly nearDuplicates: readonly (readonly [string, string])[];
  /** Soft-404 farms: the linked dead paths that answer 200 with the template. */
  readonly soft404: readonly string[];
  /** Soft-404 farms: the template body, byte for byte. */
  readonly soft404Template: string | undefined;
  /** Trap families on this host. */
  readonly traps: readonly SimTrapFamily[];
  /** Hostile resources linked from the root. */
  readonly hostile: readonly SimHostile[];
}

/** One request as the server saw it. Fields marked mutable are filled in when the response ends. */
export interface SimRequest {
  /** Arrival order, from 0. */
  readonly seq: number;
  readonly method: string;
  /** Host header, lowercased, without port or trailing dot ('' when absent). */
  readonly host: string;
  /** Local address the request arrived on. */
  readonly ip: string;
  /** Raw request target. */
  readonly target: string;
  /** Page key (see the top of this file). */
  readonly key: string;
  readonly kind: SimResourceKind;
  /** Trap family id, for calendar and session requests. */
  readonly trap: string | undefined;
  /** Monotonic ms (the `now` option) when the request's headers were parsed. */
  readonly arrivedAtMs: number;
  /** Simulated epoch ms at arrival. */
  readonly simTimeMs: number;
  /** Whether If-None-Match or If-Modified-Since was sent. */
  readonly conditional: boolean;
  readonly userAgent: string | undefined;
  /** Requests in flight to this host at arrival, this one included (server-side count). */
  readonly inFlightAtArrival: number;
  /**
   * How much earlier the request may really have arrived than `arrivedAtMs` says, ms: the
   * length of an event-loop stall that ended just before the server saw it (0 when the loop
   * was turning freely). The politeness judge gives interval gaps this benefit of the doubt.
   */
  readonly arrivalSlackMs: number;
  /** Status sent; 0 when the sim reset the connection or the client left before a response. */
  status: number;
  /** Monotonic ms when the response ended or the connection closed. */
  finishedAtMs: number | undefined;
  /** Retry-After header value sent, if any. */
  retryAfter: string | undefined;
  /** Monotonic ms before which the host must not be asked again (from Retry-After). */
  retryNotBeforeMs: number | undefined;
  /** Page version (real changes) and cosmetic revision served, for pages. */
  version: number | undefined;
  cosmetic: number | undefined;
}

/** What a page looks like at one simulated instant. */
export interface SimSnapshot {
  readonly host: string;
  readonly path: string;
  /** Number of real (text) changes since the epoch. */
  readonly version: number;
  /** Number of ad rotations since the epoch. */
  readonly cosmetic: number;
  readonly body: string;
  /** Strong ETag (quoted), a digest of the body. */
  readonly etag: string;
  /** Last change of either kind, or the page's creation time, epoch ms. */
  readonly lastModifiedMs: number;
  readonly contentType: string;
}
