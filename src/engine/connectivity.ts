/**
 * `Connectivity`: whether the crawl is *offline* — the crawler's own network or resolver is
 * down, rather than the servers it asks. The one owner of that state in a process; every
 * frontier of the process (the single one, or a cluster node's slots) reads it through
 * `FrontierOptions.offline`, the robots gate when it counts a robots.txt failure, and the
 * progress display and metrics through `Engine.offlineSinceMs`.
 *
 * The rule (DESIGN §7): the crawl goes offline when a hostname whose server gave an HTTP
 * answer in this process cannot be reached (connection failed, name did not resolve) and no
 * server has answered since; any HTTP answer — a page or a robots.txt, from any host — ends
 * it. While it lasts, and for at most `OUTAGE_GRACE_MS` from its start, unreachable outcomes
 * spend no retries and robots.txt failures do not count towards giving a host up: when the
 * crawler's network drops every fetch fails, new hosts' included, and charging them lost pages
 * and wrote whole hosts off. A hostname that never answered does not start it, so a broken
 * domain (a lame delegation's lasting SERVFAIL, a dead subdomain beside a working `www`) still
 * spends its retries and a one-shot crawl's tail drains.
 *
 * Never: fetch, probe, or read a clock of its own; callers pass their clock readings.
 */
import { OUTAGE_GRACE_MS } from '../frontier/index.js';
import { lruSet } from '../lru/index.js';

/**
 * Hostnames remembered as having answered, most recent first out of the cache last: a crawl
 * of more hosts forgets the least recently answering ones (they can no longer start an
 * offline spell; the hosts it is fetching now can). About 100 bytes each: 10 MB at the cap.
 */
const MAX_ANSWERED_NAMES = 100_000;

/** The crawl's offline state; see the module comment. */
export class Connectivity {
  readonly #answered = new Map<string, true>();
  #sinceMs = 0;

  constructor(private readonly maxNames = MAX_ANSWERED_NAMES) {}

  /** The server of `hostname` gave an HTTP answer (any status): the crawl is online. */
  answered(hostname: string): void {
    lruSet(this.#answered, hostname, true, this.maxNames);
    this.#sinceMs = 0;
  }

  /**
   * `hostname` could not be reached at `nowMs` (connection failed, name did not resolve): the
   * crawl goes offline if that host had answered and it is not offline already.
   */
  unreachable(hostname: string, nowMs: number): void {
    if (this.#sinceMs === 0 && this.#answered.has(hostname)) this.#sinceMs = nowMs;
  }

  /** When the current offline spell began (ms), 0 when the crawl is online. */
  get sinceMs(): number {
    return this.#sinceMs;
  }

  /** Whether the crawl is offline at `nowMs` and within the spell's first `OUTAGE_GRACE_MS`, the time failures are not charged. */
  offline(nowMs: number): boolean {
    return this.#sinceMs > 0 && nowMs - this.#sinceMs < OUTAGE_GRACE_MS;
  }
}
