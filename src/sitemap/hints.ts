/**
 * Sitemap `<lastmod>` as a change hint for the freshness scheduler, trusted on the same terms
 * as a server's Last-Modified (src/freshness/record.ts `observeChange`): a site's claims are
 * used only while every fetch has agreed with them.
 *
 * A hint says "this URL changed at time L". When a hinted URL is fetched again, the claim is
 * checked against what the fetch saw: L after our previous fetch must come with a real change,
 * and L at or before it with none (a cosmetic churn counts as none). Each agreement counts for
 * the host; one disagreement withdraws trust from the host for good (sites that stamp every
 * entry with today's date, or never update lastmod, fail here quickly). Once a host has
 * `trustAfter` agreements and no disagreement, its hints act: at the scheduler's background
 * pass a crawled URL whose hint is newer than its last fetch is made due now.
 *
 * The hook wraps the scheduler in force (`FreshnessHook`): `nextDue` and state pass through,
 * `tick` runs the inner pass first and then the hinted re-timing. Hints are few and bounded
 * (`maxHints`, oldest dropped first); they live in memory only (a resumed crawl learns them
 * again when it refetches its sitemaps).
 */
import { keyToHex } from '../core/keys.js';
import type { CrawledRecord, FreshnessHook, FreshnessRows } from '../frontier/index.js';
import { UrlStatus } from '../model/index.js';
import { evictOldest } from '../lru/index.js';

interface Hint {
  /** Claimed modification time, epoch hours. */
  readonly atHours: number;
  /** Host name the claim is about (trust is per host). */
  readonly host: string;
}

interface HostTrust {
  agreed: number;
  failed: boolean;
}

/** Options of `SitemapHints`. */
export interface SitemapHintsOptions {
  /** The URL key (hex of its four lanes) the frontier files `url` under, or undefined. */
  readonly keyOf: (url: string) => string | undefined;
  /** Agreements before a host's hints act. Default 2. */
  readonly trustAfter?: number | undefined;
  /** Hints kept. Default 200 000. */
  readonly maxHints?: number | undefined;
}

/** The lastmod hint store and the freshness hook around an inner one; see the module comment. */
export class SitemapHints {
  readonly #inner: Exclude<FreshnessHook, (...args: never[]) => unknown> | ((record: CrawledRecord, nowHours: number) => number);
  readonly #keyOf: (url: string) => string | undefined;
  readonly #trustAfter: number;
  readonly #maxHints: number;
  readonly #hints = new Map<string, Hint>();
  readonly #hosts = new Map<string, HostTrust>();
  /** URLs made due by a hint. */
  applied = 0;

  constructor(inner: FreshnessHook, o: SitemapHintsOptions) {
    this.#inner = inner;
    this.#keyOf = o.keyOf;
    this.#trustAfter = o.trustAfter ?? 2;
    this.#maxHints = o.maxHints ?? 200_000;
  }

  /** Records a sitemap's claim that `url` changed at `lastmodSec` (epoch seconds). */
  note(url: string, lastmodSec: number): void {
    let host: string;
    try {
      host = new URL(url).host;
    } catch {
      return;
    }
    const key = this.#keyOf(url);
    if (key === undefined) return;
    this.#hints.delete(key);
    this.#hints.set(key, { atHours: lastmodSec / 3600, host });
    if (this.#hints.size > this.#maxHints) evictOldest(this.#hints);
  }

  /** Whether `host`'s hints act now. */
  trusted(host: string): boolean {
    const t = this.#hosts.get(host);
    return t !== undefined && !t.failed && t.agreed >= this.#trustAfter;
  }

  /** Hints held. */
  get size(): number {
    return this.#hints.size;
  }

  /** The hook to give the frontier. */
  hook(): FreshnessHook {
    const inner = this.#inner;
    const nextDue = typeof inner === 'function' ? inner : inner.nextDue.bind(inner);
    const hook: Exclude<FreshnessHook, (...args: never[]) => unknown> = {
      nextDue: (record, nowHours) => {
        this.#check(record);
        return nextDue(record, nowHours);
      },
      tick: (rows, nowHours, force) => {
        const m = typeof inner === 'function' || inner.tick === undefined ? -1 : inner.tick(rows, nowHours, force);
        const more = this.#retime(rows, nowHours, Math.max(0, m));
        return m < 0 && more === 0 ? m : Math.max(0, m) + more;
      },
    };
    if (typeof inner !== 'function') {
      if (inner.exportState) hook.exportState = inner.exportState.bind(inner);
      if (inner.importState) hook.importState = inner.importState.bind(inner);
    }
    return hook;
  }

  /** A refetch of a hinted URL: did the claim agree with what the fetch saw? */
  #check(record: CrawledRecord): void {
    if (record.previousCrawled <= 0 || record.change === 'first') return;
    const key = this.#keyOf(record.url);
    const hint = key === undefined ? undefined : this.#hints.get(key);
    if (hint === undefined) return;
    // The claim is about a change at hint.atHours; our last two fetches bracket an interval.
    if (hint.atHours > record.fetchedAtHours + 1) return; // claims the future: not judged yet
    const claimedChange = hint.atHours > record.previousCrawled;
    const sawChange = record.change === 'real';
    let t = this.#hosts.get(hint.host);
    if (t === undefined) {
      t = { agreed: 0, failed: false };
      this.#hosts.set(hint.host, t);
    }
    if (claimedChange === sawChange) t.agreed++;
    else t.failed = true;
    this.#hints.delete(key!);
  }

  /** Makes crawled URLs due now when a trusted hint is newer than their last fetch. */
  #retime(rows: FreshnessRows, nowHours: number, m: number): number {
    if (this.#hints.size === 0) return 0;
    const { status, slot, lastCrawled, nextDue, key, moved } = rows;
    let added = 0;
    const already = new Set<number>();
    for (let i = 0; i < m; i++) already.add(moved[i]!);
    for (let r = 0; r < rows.rows; r++) {
      if (status[r] !== UrlStatus.Crawled) continue;
      const hint = this.#hints.get(keyToHex(key, r));
      if (hint === undefined || !this.trusted(hint.host)) continue;
      if (hint.atHours <= lastCrawled[slot[r]!]! || nextDue[r]! <= nowHours) continue;
      nextDue[r] = Math.floor(nowHours);
      if (!already.has(r)) moved[m + added++] = r;
      this.applied++;
    }
    return added;
  }
}
