/**
 * `RedirectHops`: how many redirect hops led to each URL still to be fetched, so that
 * `maxRedirects` bounds a chain of fresh URLs (`/r/1` → `/r/2` → …) that the frontier would
 * otherwise admit one by one up to the host's URL budget.
 *
 * The target of a followed redirect is one hop further than its source, and so is a page's
 * refresh target (`Link.refresh`: a redirect written in the page, followed at the page's depth
 * while `mayFollow` holds, so a chain of refreshing pages is bounded the same way). A URL's count is kept
 * while it may still be fetched (a retry keeps it) and dropped once it has a final answer.
 * Bounded: the oldest counts go first (a chain they belonged to may then run a few hops
 * longer, never unboundedly: each hop needs a URL the frontier admits). Counts live in memory
 * only: a resume rebuilds them from the journal since the last checkpoint (not a `passOn`, which
 * is not journaled), so a chain in progress may run on further after a resume.
 */
import { type Outcome, isTransientStatus, refreshTargetOf } from '../model/index.js';
import { evictOldest } from '../lru/index.js';

/** Redirect-hop counts kept at most. */
const MAX_HOP_ENTRIES = 100_000;

/** Redirect hops per URL (only URLs a redirect led to). */
export class RedirectHops {
  readonly #hops = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Whether a redirect answered for `url` may still be followed (fewer than `max` hops led here). */
  mayFollow(url: string): boolean {
    return (this.#hops.get(url) ?? 0) < this.max;
  }

  /** Records the outcome of `url` as the frontier was told it. */
  count(url: string, reported: Outcome): void {
    const s = reported.status;
    const hops = this.#hops.get(url) ?? 0;
    if (isTransientStatus(s)) return;
    this.#hops.delete(url);
    if (s >= 300 && s < 400) {
      // A redirect to the URL itself counts too: that is what ends a cookie check that never
      // takes (a retry with the cookie redirected again).
      if (reported.location !== undefined) this.#lead(reported.location, hops + 1);
      return;
    }
    // A page refreshing to itself (an auto-reload) is no hop: counted, it would end up refusing
    // the page's own redirects after a few recrawls.
    const refresh = s >= 200 && s < 300 ? refreshTargetOf(reported) : undefined;
    if (refresh !== undefined && refresh !== url) this.#lead(refresh, hops + 1);
  }

  /**
   * A refresh target of `url` taken as an ordinary link, `url` being past the cap (`mayFollow`
   * false): it is one hop further all the same, so the chain's count does not start over at it.
   */
  passOn(url: string, target: string): void {
    if (target !== url) this.#lead(target, (this.#hops.get(url) ?? 0) + 1);
  }

  #lead(target: string, next: number): void {
    const known = this.#hops.get(target);
    if (known !== undefined && known <= next) return;
    this.#hops.set(target, next);
    if (this.#hops.size > MAX_HOP_ENTRIES) evictOldest(this.#hops);
  }
}
