/**
 * A host's rate cap as a budget over a window: at most `crawls` fetch starts in any window of
 * `windowMs` (issue 21, finding 3; DESIGN §20).
 *
 * The cap is kept apart from the host's politeness interval (robots Crawl-delay, AIMD), which
 * stays a hard minimum spacing between two starts. The interval alone cannot express "C
 * crawls per hour over days": spacing every start by 1/C loses, for good, each slot the host's
 * queue was empty for, and every start timed from a late one is late too, so a host scheduled
 * at its cap makes 86–97 % of it and its fetches run hours late. Under a window budget a host
 * whose queue was empty may make up the missed slots (as fast as its crawl delay allows)
 * until the window holds `crawls` again, and never more.
 *
 * ## The rule
 * Let s₁ ≥ s₂ ≥ … be the host's starts, most recent first, and K = `crawls`, W = `windowMs`.
 * A new start at t is allowed iff fewer than K starts are recorded or t ≥ s_K + W.
 * Then every half-open window [a, a + W) holds at most K starts: if one held K + 1, its first
 * and last start would be K apart in the order and less than W apart in time, which the rule
 * refused at the last one. The rule is exact (not a token bucket's b + r·W bound), so the
 * host can run at the full rate K/W on average and still never exceed K in any window.
 *
 * ## State
 * The K most recent starts, ascending, in a ring (`Float64Array(K)`): 8·K bytes for a capped
 * host, nothing for the others (a host without a cap has no `HostCap`). Starts recorded out
 * of order (`Frontier.recordStart` of an earlier request) are inserted in place; one older
 * than the K kept cannot change s_K and is dropped. Every start counts, whoever timed it, and
 * once: the frontier records its own dispatch (or robots.txt request) as the *open* start, and
 * the same request seen leaving later (`confirm`, from `recordStart` with `dispatched`) moves
 * that record to when it left instead of adding one. The engine reports a request as it is
 * handed to the fetcher and again as its bytes leave, so each start counted two or three times
 * and a cap of 4 per 2 s let 2 through (audit e5). The open start is not checkpointed: after a
 * load, a confirmation adds a start, as any start the frontier did not make.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { type HostCapImage, MAX_CAP_CRAWLS } from '../format/index.js';

/** A host's window budget and its recent starts (see the module comment). */
export class HostCap {
  /** Starts allowed in any window (K). */
  readonly crawls: number;
  /** The window (W, ms). */
  readonly windowMs: number;
  /** The most recent starts, ascending from `#head` (ring of K). */
  readonly #starts: Float64Array;
  #head = 0;
  #count = 0;
  /** The open start (`recordDispatch`) a confirmation moves; −Infinity when none. */
  #open = Number.NEGATIVE_INFINITY;

  constructor(crawls: number, windowMs: number) {
    checkCap(crawls, windowMs);
    this.crawls = crawls;
    this.windowMs = windowMs;
    this.#starts = new Float64Array(crawls);
  }

  /** Starts kept (at most `crawls`). */
  get count(): number {
    return this.#count;
  }

  /** Average crawls per hour the cap allows (K / W). */
  get perHour(): number {
    return (this.crawls * 3_600_000) / this.windowMs;
  }

  /** The earliest clock (ms) at which a start keeps every window within the cap (−Infinity when the ring is not full). */
  openAt(): number {
    if (this.#count < this.crawls) return Number.NEGATIVE_INFINITY;
    return this.#starts[this.#head]! + this.windowMs;
  }

  /** Starts in the window (nowMs − W, nowMs]. */
  used(nowMs: number): number {
    const k = this.crawls;
    let n = 0;
    for (let i = 0; i < this.#count; i++) {
      const t = this.#starts[(this.#head + i) % k]!;
      if (t > nowMs - this.windowMs && t <= nowMs) n++;
    }
    return n;
  }

  /** Records a start at `atMs` (in place when it is older than the newest kept). */
  record(atMs: number): void {
    const k = this.crawls;
    if (this.#count < k) {
      this.#count++;
    } else {
      // Full: the oldest leaves (its slot becomes the last), unless the new start is older still.
      if (atMs < this.#starts[this.#head]!) return;
      this.#head = (this.#head + 1) % k;
    }
    // Into the last position, then sift down into order (out-of-order starts are rare: recordStart).
    const ring = this.#starts;
    let i = this.#count - 1;
    let at = (this.#head + i) % k;
    while (i > 0) {
      const prev = (this.#head + i - 1) % k;
      if (ring[prev]! <= atMs) break;
      ring[at] = ring[prev]!;
      at = prev;
      i--;
    }
    ring[at] = atMs;
  }

  /** Records the frontier's own start at `atMs` as the open one, which `confirm` may move later. */
  recordDispatch(atMs: number): void {
    this.record(atMs);
    this.#open = atMs;
  }

  /**
   * The open start was seen leaving at `atMs`: its record moves there (when later; never
   * earlier), and stays open for a later sighting of the same request. Without an open start,
   * a start at `atMs` is recorded.
   */
  confirm(atMs: number): void {
    const open = this.#open;
    if (open === Number.NEGATIVE_INFINITY) {
      this.record(atMs);
      return;
    }
    if (!(atMs > open)) return;
    // Kept unless K later starts pushed it out; then the start at `atMs` counts on its own.
    this.#remove(open);
    this.record(atMs);
    this.#open = atMs;
  }

  /** Drops one kept start equal to `atMs`, closing the gap; false when none is kept. */
  #remove(atMs: number): boolean {
    const k = this.crawls;
    const ring = this.#starts;
    let i = 0;
    while (i < this.#count && ring[(this.#head + i) % k] !== atMs) i++;
    if (i === this.#count) return false;
    for (; i < this.#count - 1; i++) ring[(this.#head + i) % k] = ring[(this.#head + i + 1) % k]!;
    this.#count--;
    return true;
  }

  /** The kept starts, ascending (a copy). */
  starts(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.#count; i++) out.push(this.#starts[(this.#head + i) % this.crawls]!);
    return out;
  }

  /** This cap with another budget, keeping the most recent starts that fit. */
  resized(crawls: number, windowMs: number): HostCap {
    const next = new HostCap(crawls, windowMs);
    const kept = this.starts().slice(-crawls);
    for (const t of kept) next.record(t);
    if (kept.includes(this.#open)) next.#open = this.#open;
    return next;
  }

  /** The durable form. */
  toImage(): HostCapImage {
    return { crawls: this.crawls, windowMs: this.windowMs, starts: this.starts() };
  }

  /** Rebuilds a cap from its durable form (validated by the codec). */
  static fromImage(img: HostCapImage): HostCap {
    const c = new HostCap(img.crawls, img.windowMs);
    for (const t of img.starts) c.record(t);
    return c;
  }
}

/** Throws `InvalidArgumentError` unless `crawls` and `windowMs` describe a cap. */
export function checkCap(crawls: number, windowMs: number): void {
  if (typeof crawls !== 'number' || !Number.isInteger(crawls) || crawls < 1 || crawls > MAX_CAP_CRAWLS) {
    throw new InvalidArgumentError(`host cap: expected crawls as an integer in [1, ${MAX_CAP_CRAWLS}], received ${String(crawls)}`);
  }
  if (typeof windowMs !== 'number' || !Number.isFinite(windowMs) || !(windowMs > 0)) {
    throw new InvalidArgumentError(`host cap: expected windowMs as a finite number of ms > 0, received ${String(windowMs)}`);
  }
}
