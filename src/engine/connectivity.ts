/**
 * `Connectivity`: whether the crawl is *offline* — the crawler's own network or resolver is
 * down, rather than the servers it asks. The one owner of that state in a process: the engine
 * marks each outcome with its verdict (`Outcome.offline`, read by every frontier of the
 * process — the single one, or a cluster node's slots — and journaled, so a replay decides as
 * the live run did), the robots gate asks it when it counts a robots.txt failure, and the
 * progress display and metrics read it through `Engine.offlineSinceMs`.
 *
 * The rule (DESIGN §7): the crawl goes offline when an origin (`scheme://host:port`) whose
 * server gave an HTTP answer in this process cannot be reached (connection failed, name did
 * not resolve) and no server has answered since; any HTTP answer — a page or a robots.txt, from
 * any host — ends it. While it lasts, and for at most `OUTAGE_GRACE_MS` from its start, unreachable outcomes
 * spend no retries and robots.txt failures do not count towards giving a host up: when the
 * crawler's network drops every fetch fails, new hosts' included, and charging them lost pages
 * and wrote whole hosts off. An origin that never answered does not start it, so a broken
 * domain (a lame delegation's lasting SERVFAIL), a dead subdomain beside a working `www` or a
 * dead port of a site still spends its retries, and a one-shot crawl's tail drains. Each
 * outcome carries the verdict (`Outcome.offline`) into the frontier and the journal.
 *
 * Never: fetch, probe, or read a clock of its own; callers pass their clock readings.
 */
import { OUTAGE_GRACE_MS } from '../frontier/index.js';
import { lruSet } from '../lru/index.js';
import { isUnreachable } from '../politeness/index.js';

/**
 * Origins remembered as having answered, least recently answering dropped first: a crawl of
 * more hosts forgets those (they can no longer start an offline spell; the hosts it is
 * fetching now can). About 100 bytes each: 10 MB at the cap.
 */
const MAX_ANSWERED_ORIGINS = 100_000;

/** The crawl's offline state; see the module comment. */
export class Connectivity {
  readonly #answered = new Map<string, true>();
  #sinceMs = 0;

  constructor(private readonly maxOrigins = MAX_ANSWERED_ORIGINS) {}

  /** The server of `origin` gave an HTTP answer (any status): the crawl is online. */
  answered(origin: string): void {
    lruSet(this.#answered, origin, true, this.maxOrigins);
    this.#sinceMs = 0;
  }

  /**
   * `origin` could not be reached at `nowMs` (connection failed, name did not resolve): the
   * crawl goes offline if that origin had answered and it is not offline already.
   */
  unreachable(origin: string, nowMs: number): void {
    if (this.#sinceMs === 0 && this.#answered.has(origin)) this.#sinceMs = nowMs;
  }

  /** When the current offline spell began (ms), 0 when the crawl is online. */
  get sinceMs(): number {
    return this.#sinceMs;
  }

  /** Whether the crawl is offline at `nowMs` and within the spell's first `OUTAGE_GRACE_MS`, the time failures are not charged. */
  offline(nowMs: number): boolean {
    return this.#sinceMs > 0 && nowMs - this.#sinceMs < OUTAGE_GRACE_MS;
  }

  /**
   * Whether a failure (`status` 0 of `errorKind`) at `nowMs` is spared: the server could not be
   * reached (src/politeness `isUnreachable`) while the crawl is offline. The one rule for a
   * page's retries (`Outcome.offline`) and a robots.txt's failures in a row.
   */
  spares(status: number, errorKind: string | undefined, nowMs: number): boolean {
    return isUnreachable(status, errorKind) && this.offline(nowMs);
  }
}
