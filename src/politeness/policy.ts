/**
 * The frontier's rate policy: the band a host's fetch interval must stay in and the AIMD step
 * that moves the interval inside it, as plain functions over a frozen config.
 *
 * Model (DESIGN §7). Each host has an adaptive interval I, measured start-to-start. After
 * every fetch the frontier folds one `Signal` into it:
 *
 *     throttled (429, 5xx, status 0):  I' = max(I · backoff, retryAfter)    multiplicative increase
 *     latency in a sustained rise:     I' = I · softWiden                    gentle increase
 *     otherwise:                       I' = I − max(narrow,                  additive decrease, or
 *                                                   (I − floor) · share)     proportional far above the floor
 *
 * and dispatches no sooner than `hostInterval(config, I', crawlDelay)` after the previous
 * start, i.e. I' clamped into [max(floor, crawlDelay), ceiling]. Additive decrease with
 * multiplicative increase is the AIMD rule that TCP congestion control uses: it backs off a
 * struggling server within a few responses and creeps back toward the floor slowly, so the
 * crawl probes a recovered host's capacity instead of jumping back to full speed.
 *
 * "A sustained rise" is `observeLatency`'s verdict (latency.ts): the sample and the two
 * before it all beyond the host's smoothed latency plus four deviations, as TCP's RTO
 * estimator bounds a round trip (RFC 6298). A single late answer never widens.
 *
 * The decrease is additive near the floor and proportional far above it: a host widened by
 * a latency rise or a run of 503s gives back a fixed share (1/16) of its excess over the
 * floor per healthy fetch, so its recovery takes a number of fetches that does not grow
 * with the height it reached (from the 5 min ceiling, about 90 fetches instead of 6,000).
 *
 * With the defaults (1 s start, ×2 back-off, −50 ms per healthy fetch): one 503 takes a host
 * from 1 s to 2 s, fifteen healthy fetches bring a 1 s host to the 250 ms floor (the share
 * of 750 ms, 47 ms, is below 50 ms there), and nine consecutive failures from 1 s reach the
 * 5 min ceiling, the point at which the frontier treats the host as dead (`atCeiling`).
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { parseRetryAfter } from './retry-after.js';
import { isTransientStatus } from '../model/outcome.js';

/**
 * The politeness policy: the interval band and the AIMD reaction constants. All durations are
 * milliseconds. Build one with `politenessConfig(partial)`; the defaults are in its table.
 */
export interface PolitenessConfig {
  /** Interval of a host with no signal yet. Default 1000 ms. */
  readonly defaultIntervalMs: number;
  /** Hard minimum between two fetch starts to one host; never crossed. Default 250 ms. */
  readonly floorMs: number;
  /** Hard maximum interval; a host pinned here is treated as dead. Default 300 000 ms (5 min). */
  readonly ceilingMs: number;
  /**
   * Minimum between two fetch starts to one IP address, however many hosts share it; the
   * address's own adaptive interval starts here and never goes below it. Default 250 ms.
   */
  readonly ipFloorMs: number;
  /** Most content fetches in flight to one IP address at once; 0 = no cap. Default 0. */
  readonly ipMaxInFlight: number;
  /** Multiplicative widening on 429, 5xx and transport errors; ≥ 1. Default 2. */
  readonly backoff: number;
  /** Multiplicative widening when latency rises sharply; ≥ 1. Default 1.25. */
  readonly softWiden: number;
  /** Additive narrowing per healthy fetch. Default 50 ms. */
  readonly narrowMs: number;
  /**
   * Proportional narrowing: a healthy fetch takes off at least this share of the interval's
   * excess over the floor (when that exceeds `narrowMs`); in [0, 1]. Default 1/16.
   */
  readonly narrowShare: number;
  /**
   * A latency sample counts as high only above the smoothed latency times this (as well as
   * above the smoothed latency plus four deviations); ≥ 1. Default 1.5.
   */
  readonly latencyRise: number;
}

/**
 * Validates a partial politeness config and returns the frozen, fully defaulted config.
 * Call with no argument for the defaults. This is the one constructor of `PolitenessConfig`.
 *
 * | option              | default | rule                                   |
 * |---------------------|---------|----------------------------------------|
 * | `defaultIntervalMs` | 1000    | floorMs ≤ defaultIntervalMs ≤ ceilingMs |
 * | `floorMs`           | 250     | ≥ 0, ≤ ceilingMs                        |
 * | `ceilingMs`         | 300000  | > 0                                     |
 * | `ipFloorMs`         | 250     | ≥ 0                                     |
 * | `ipMaxInFlight`     | 0 (off) | integer ≥ 0                             |
 * | `backoff`           | 2       | ≥ 1                                     |
 * | `softWiden`         | 1.25    | ≥ 1                                     |
 * | `narrowMs`          | 50      | ≥ 0                                     |
 * | `narrowShare`       | 0.0625  | in [0, 1]                               |
 * | `latencyRise`       | 1.5     | ≥ 1                                     |
 *
 * @throws InvalidArgumentError naming the option and the value received (unknown keys,
 *   non-finite numbers, factors below 1, floor above ceiling, default outside the band).
 */
export const politenessConfig: (partial?: Partial<PolitenessConfig> | null) => Readonly<PolitenessConfig> =
  defineOptions<PolitenessConfig>(
    'PolitenessConfig',
    {
      defaultIntervalMs: numberField({ min: 0, default: 1000 }),
      floorMs: numberField({ min: 0, default: 250 }),
      ceilingMs: numberField({ above: 0, default: 300_000 }),
      ipFloorMs: numberField({ min: 0, default: 250 }),
      ipMaxInFlight: numberField({ min: 0, integer: true, default: 0 }),
      backoff: numberField({ min: 1, default: 2 }),
      softWiden: numberField({ min: 1, default: 1.25 }),
      narrowMs: numberField({ min: 0, default: 50 }),
      narrowShare: numberField({ min: 0, max: 1, default: 1 / 16 }),
      latencyRise: numberField({ min: 1, default: 1.5 }),
    },
    (c) => {
      if (c.floorMs > c.ceilingMs) return `floorMs (${c.floorMs}) must not exceed ceilingMs (${c.ceilingMs})`;
      if (c.defaultIntervalMs < c.floorMs || c.defaultIntervalMs > c.ceilingMs) {
        return `defaultIntervalMs (${c.defaultIntervalMs}) must lie in [floorMs, ceilingMs] = [${c.floorMs}, ${c.ceilingMs}]`;
      }
      return undefined;
    },
  );

/** The part of a fetch outcome the rate policy reads. Durations in milliseconds. */
export interface Signal {
  /** HTTP status, or 0 for a transport error (DNS, connect, timeout, reset). */
  readonly status: number;
  /** The parsed Retry-After delay (see `parseRetryAfter`), absent or 0 when none. */
  readonly retryAfterMs?: number | undefined;
  /** This fetch's latency (informational: the rise verdict is `latencyRising`). */
  readonly latencyMs?: number | undefined;
  /** The host's latency estimator saw a sustained rise with this fetch (`observeLatency`). */
  readonly latencyRising?: boolean | undefined;
  /**
   * The failure is taken as this page's alone, not as a sign of load (`isPageFault`, and the
   * frontier's run rule): the interval is held, neither widened nor narrowed.
   */
  readonly pageFault?: boolean | undefined;
}

/**
 * Whether a status means "the server is struggling or refusing": 429, any 5xx, a transport
 * error (0), or no final HTTP status (≥ 600, a bot block such as LinkedIn's 999, or a final
 * 1xx) — src/model's
 * `isTransientStatus`, the one statement of that rule.
 */
export function isThrottle(status: number): boolean {
  return isTransientStatus(status);
}

/**
 * Failures of a host that may be one page's fault rather than a sign of load, so that a site
 * with broken pages is not slowed to a crawl: an application error (500, 501, 505–519 — a
 * route that crashes answers it as fast as the site's other pages answer theirs), a response
 * that broke off after its headers (status 0, `errorKind` 'incomplete'), one that was not valid
 * HTTP ('protocol'), and a timeout ('timeout': a report or a search that takes longer than the
 * crawler waits hangs alone while the site's other pages answer). Load and outages keep backing
 * off at once: 429 and 503 (the server's own words), 502 and 504 (a gateway whose origin is down
 * or too slow), 520 and above (a CDN's origin errors), connections refused, not made in time or
 * reset, and names that do not resolve.
 *
 * The frontier reads these as load only when they come in a run (`PAGE_FAULT_RUN` in a row
 * from URLs on their first attempt; a retry's fault neither counts nor ends the run, and backs
 * off once the run is there): a server failing every page is backed off from its third failure
 * on, retries included, while one broken page among working ones, or the retries of one, holds
 * the interval where it is. Measured on a loopback site of 100 pages answering at once, every
 * fifth a 500: 12 requests in 3 min 19 s with every 5xx a throttle (the interval doubled per
 * retry of the same URL), all 100 pages and their retries in about 2 minutes with this rule.
 * A page sending 100 kB of headers ('protocol') doubled its host's interval at each of its
 * four attempts as a throttle; with timeouts as throttles, 10 hanging pages among 500 (40
 * timeouts, the retries together at the end) held the host and its address at the 5-minute
 * ceiling, 126 minutes of crawl time against 22 (test/politeness/answer-spacing.test.ts). A
 * server that hangs on every page is still backed off from its third timeout in a row.
 */
export function isPageFault(status: number, errorKind?: string | undefined): boolean {
  if (status === 0) return errorKind === 'incomplete' || errorKind === 'protocol' || errorKind === 'timeout';
  return status === 500 || status === 501 || (status >= 505 && status <= 519);
}

/**
 * Whether a failure happened before any request left the crawler, so it says nothing of the
 * server: the URL was malformed or too long for the fetcher ('url'), its address was refused by
 * the crawler's own rules ('refused'), the HTTP client refused the request locally ('local'), or
 * the crawler aborted it ('aborted'). The host's interval and latency ignore such an outcome; it
 * used to double the interval as if the server were overloaded.
 */
export function isNeverSent(status: number, errorKind: string | undefined): boolean {
  return status === 0 && (errorKind === 'url' || errorKind === 'refused' || errorKind === 'local' || errorKind === 'aborted');
}

/**
 * Whether a failure says the server could not be reached at all — the connection failed or the
 * name did not resolve — rather than that it was busy: it never saw the request. A run of these
 * is an outage (a restart, a deploy, the crawler's own network dropping), and the widening it
 * causes paces the probes of a dead server, not its load; see `afterOutage`.
 */
export function isUnreachable(status: number, errorKind: string | undefined): boolean {
  return status === 0 && (errorKind === 'connect' || errorKind === 'dns');
}

/**
 * The interval of a host (or address) that answers healthily again after an outage: one
 * back-off step above what it had before the outage (`beforeMs`), or the interval it reached,
 * if that is lower. The AIMD creep from the widened level alone took the proportional decrease
 * 16 intervals' worth of time from wherever the outage left it — a loopback site down for 90 s
 * (seven connection failures) took 35 minutes to crawl its next 25 pages; restarted this way it
 * is back near its pace within a few fetches, and a server that still struggles is backed off
 * again by its own answers.
 */
export function afterOutage(config: PolitenessConfig, beforeMs: number, intervalMs: number): number {
  const restored = beforeMs * config.backoff;
  return restored < intervalMs ? restored : intervalMs;
}

/** Page faults in a row (first attempts) from which they count as load: see `isPageFault`. */
export const PAGE_FAULT_RUN = 3;

/**
 * 403 answers in a row after which a host that has served this crawler is asked whether it is
 * blocking it (a firewall's rate rule: AWS WAF's rate-based rules and Akamai's answer 403 by
 * default, every URL, robots.txt included, while the client keeps over the limit) or
 * forbidding those pages: a page it served is asked again (src/frontier/blocks.ts). One or two
 * forbidden pages among working ones (a member's profile) are never asked about; if the page
 * asked again gets a 403 too, the run's URLs wait for a retry after the host's untried URLs and
 * the host backs off as from a 429. Measured on a loopback site that blocks a client for 5 s
 * once it asks more than 20 pages in 2 s: before the rule 164 of 183 URLs were recorded as
 * final 403s and the crawl ended in 1.4 s, with 19 pages.
 */
export const BLOCK_RUN = 3;

/**
 * The longest interval a host's block (`BLOCK_RUN`) widens it to, unless its crawl delay or a
 * Retry-After asks more. Each 403 of the block doubles the interval, retries included, so the
 * URLs waiting for one do not meet the block all at once; but when the only URLs left are a few
 * pages the site forbids, their retries are the whole "block", and doubling up to the 5-minute
 * ceiling (`ceilingMs`) would keep the crawl waiting about half an hour for nothing. At 30 s
 * their nine retries (three pages, three each) take about two minutes from the 250 ms floor,
 * and the retries of a real block's URLs still span minutes.
 */
export const BLOCK_CEILING_MS = 30_000;

function requireInterval(fn: string, name: string, value: number): void {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new InvalidArgumentError(`${fn}: expected ${name} to be a number of milliseconds, received ${String(value)}`);
  }
}

/**
 * One AIMD step: the next adaptive interval after a fetch, before clamping.
 *
 * In order: a page fault (`signal.pageFault`) holds the interval (widened by `softWiden` on a
 * latency rise, `retryAfterMs` a floor); a throttle (429, 5xx, or status 0 — a server too busy
 * to answer is treated like one that answers 503) multiplies the interval by `backoff` and
 * takes `retryAfterMs` as a floor; otherwise a sustained latency rise (`latencyRising`) multiplies it by `softWiden`;
 * otherwise it narrows by `max(narrowMs, (intervalMs − floorMs) · narrowShare)`. The result
 * may lie outside the legal band (even below zero); pass it through `hostInterval` before
 * use.
 *
 * @throws InvalidArgumentError when `intervalMs` is NaN or not a number.
 */
export function adapt(config: PolitenessConfig, intervalMs: number, signal: Signal): number {
  requireInterval('adapt', 'intervalMs', intervalMs);
  if (signal.pageFault === true) {
    const held = signal.latencyRising === true ? intervalMs * config.softWiden : intervalMs;
    const ra = signal.retryAfterMs;
    return ra !== undefined && ra > held ? ra : held;
  }
  if (isThrottle(signal.status)) {
    const widened = intervalMs * config.backoff;
    const ra = signal.retryAfterMs;
    return ra !== undefined && ra > widened ? ra : widened;
  }
  if (signal.latencyRising === true) return intervalMs * config.softWiden;
  return narrowed(config, intervalMs, config.floorMs);
}

/**
 * One healthy answer's narrowing, the one rule for a host (`adapt`, above `floorMs`) and an
 * address (`adaptIp`, above `ipFloorMs`): `intervalMs − max(narrowMs, (intervalMs − floorMs) ·
 * narrowShare)` — additive near the floor, a fixed share of the excess far above it, so the
 * answers a recovery takes do not grow with the height the interval reached. Unclamped.
 */
function narrowed(config: PolitenessConfig, intervalMs: number, floorMs: number): number {
  const share = (intervalMs - floorMs) * config.narrowShare;
  return intervalMs - (share > config.narrowMs ? share : config.narrowMs);
}

/**
 * What one outcome says about the *machine* behind a host (the per-IP unit, `IpTable`):
 *
 * | signal     | outcomes                                                              |
 * |------------|-----------------------------------------------------------------------|
 * | `throttle` | 429, 503, and transport failures of the machine (connect, timeout,    |
 * |            | reset or other network error)                                         |
 * | `slow`     | the host's latency rose sharply (× `latencyRise` over its own average)|
 * | `healthy`  | any other answer below 500                                            |
 * | `none`     | other 5xx (an application error of one site), and failures that say  |
 * |            | nothing of the machine (DNS, TLS, a refused address, a bad URL, abort, |
 * |            | a response that broke off after its headers)                          |
 *
 * A host's own slowness is compared with its own history, never with its siblings', so a
 * slow site on a fast machine does not read as a struggling machine.
 */
export type IpSignal = 'throttle' | 'unreachable' | 'slow' | 'healthy' | 'none';

/**
 * Classifies one outcome for the per-IP interval (see `IpSignal`).
 *
 * @param errorKind the fetcher's transport failure kind when `status` is 0.
 * @param latencyRose whether the host's own latency estimator saw a sustained rise (`observeLatency`).
 */
export function ipSignalOf(status: number, errorKind: string | undefined, latencyRose: boolean): IpSignal {
  if (status === 429 || status === 503) return 'throttle';
  if (status === 0) {
    // No connection (refused, unreachable, not made in time): a throttle that also starts an
    // outage (see `afterOutage`).
    if (errorKind === 'connect') return 'unreachable';
    // 'incomplete' (a response that broke off) says the machine answered: nothing of its load.
    return errorKind === undefined || errorKind === 'timeout' || errorKind === 'network' ? 'throttle' : 'none';
  }
  if (status >= 500) return 'none';
  return latencyRose ? 'slow' : 'healthy';
}

/**
 * One AIMD step of a per-IP interval, clamped to [ipFloorMs, max(ipFloorMs, ceilingMs)]:
 * `throttle` multiplies by `backoff` (at least + `narrowMs`, so a zero floor still widens),
 * `slow` by `softWiden`, `healthy` narrows as a host's healthy answer does (`max(narrowMs,
 * (I − ipFloorMs) · narrowShare)` off I), `none` keeps it. Whether a signal is acted on at all
 * is the table's decision (`IpTable.observe` aggregates them first).
 *
 * The narrowing used to be `narrowMs` alone: an address widened to the 5-minute ceiling took
 * 6,000 healthy answers to come back, so it stayed slow for days after its sites recovered (in
 * virtual time, a 300-page site whose first 12 answers were 503s took 1,458 minutes after it
 * recovered against 76 without the table, and three sites behind one address widened by 10
 * minutes of 503s made 1,670 fetches in 120 h, the address still at 216 s). With the host's
 * rule it takes about 110 answers: 81 minutes for the first, all 6,000 pages of the second in
 * 1.8 h. Widening still outruns it: in a steady mix the pressure gate passes a machine signal
 * only with at most three healthy answers per signal (one in five holds p at 0.298), and
 * `backoff` · (15/16)³ = 1.65 (`softWiden`: 1.03) per such cycle still grows.
 */
export function adaptIp(config: PolitenessConfig, intervalMs: number, signal: IpSignal): number {
  let next = intervalMs;
  if (signal === 'throttle' || signal === 'unreachable') next = Math.max(intervalMs * config.backoff, intervalMs + config.narrowMs);
  else if (signal === 'slow') next = intervalMs * config.softWiden;
  else if (signal === 'healthy') next = narrowed(config, intervalMs, config.ipFloorMs);
  const hi = Math.max(config.ipFloorMs, config.ceilingMs);
  return next < config.ipFloorMs ? config.ipFloorMs : next > hi ? hi : next;
}

/**
 * Clamps an adaptive interval into the host's legal band: at least `max(floorMs,
 * crawlDelayMs)`, at most `ceilingMs`. A robots crawl-delay above the ceiling wins over the
 * ceiling — a site asking to be crawled slower is always honoured.
 *
 * @param crawlDelayMs the host's crawl-delay from robots.txt or configuration; 0 or absent for none.
 * @throws InvalidArgumentError when `intervalMs` is NaN, or `crawlDelayMs` is negative or NaN.
 */
export function hostInterval(config: PolitenessConfig, intervalMs: number, crawlDelayMs = 0): number {
  requireInterval('hostInterval', 'intervalMs', intervalMs);
  if (typeof crawlDelayMs !== 'number' || !(crawlDelayMs >= 0)) {
    throw new InvalidArgumentError(`hostInterval: expected crawlDelayMs >= 0, received ${String(crawlDelayMs)}`);
  }
  const lo = crawlDelayMs > config.floorMs ? crawlDelayMs : config.floorMs;
  if (intervalMs <= lo) return lo;
  return intervalMs >= config.ceilingMs ? Math.max(config.ceilingMs, lo) : intervalMs;
}

/**
 * Whether an interval is pinned at the ceiling — sustained over a run of fetches, the sign
 * that a host is dead. Pass the interval as `hostInterval` returned it.
 */
export function atCeiling(config: PolitenessConfig, intervalMs: number): boolean {
  return intervalMs >= config.ceilingMs;
}

/**
 * Builds the `Signal` for one fetch outcome: its status and latency, the latency
 * estimator's verdict, and its Retry-After header parsed against the wall clock.
 *
 * @param outcome anything with `status` and optional raw `retryAfter` / `latencyMs` (a model `Outcome` fits).
 * @param latencyRising what `observeLatency` answered for this fetch's latency.
 * @param nowWallMs the current wall-clock time (Unix ms), for an HTTP-date Retry-After.
 */
export function signalOf(
  outcome: { readonly status: number; readonly retryAfter?: string | undefined; readonly latencyMs?: number | undefined },
  latencyRising: boolean,
  nowWallMs: number,
): Signal {
  return {
    status: outcome.status,
    retryAfterMs: parseRetryAfter(outcome.retryAfter, nowWallMs) ?? undefined,
    latencyMs: outcome.latencyMs,
    latencyRising,
  };
}
