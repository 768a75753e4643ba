/**
 * The two heaps of the URLFrontier store.
 *
 * `UrlHeap` orders one queue's URLs by the time they may next be served — the lease end while
 * leased, else the due time — with insertion order breaking ties, so "earliest date first" is
 * also first-come-first-served among equals. It is indexed (each entry remembers its slot) so
 * a known update or a lease ending can move or remove a URL in O(log n) without a search.
 *
 * `LeaseHeap` holds one entry per lease granted, by lease end, and is popped lazily: an entry
 * whose URL has since been updated, re-leased or deleted no longer matches the URL's own
 * `leaseMs` and is dropped when it surfaces. That keeps "how many URLs are in flight" exact
 * without scanning queues.
 */

/** The fields of a stored URL the heaps read and write. */
export interface HeapEntry {
  /** Due time (epoch ms); `Infinity` when the URL is done. */
  dueMs: number;
  /** End of the current lease (epoch ms), 0 when not leased. */
  leaseMs: number;
  /** Insertion order within the crawl, the last tie-break. */
  seq: number;
  /** Slot in its queue's `UrlHeap`, -1 when not in one. */
  pos: number;
}

/** When the entry may next be served. */
export function readyAt(e: HeapEntry): number {
  return e.leaseMs > 0 ? e.leaseMs : e.dueMs;
}

function before(a: HeapEntry, b: HeapEntry): boolean {
  const ta = readyAt(a);
  const tb = readyAt(b);
  return ta < tb || (ta === tb && a.seq < b.seq);
}

/** An indexed binary min-heap of URLs by (readyAt, seq). */
export class UrlHeap<E extends HeapEntry> {
  private readonly items: E[] = [];

  get size(): number {
    return this.items.length;
  }

  /** The entry served next, or undefined. */
  peek(): E | undefined {
    return this.items[0];
  }

  push(e: E): void {
    e.pos = this.items.length;
    this.items.push(e);
    this.up(e.pos);
  }

  /** Restores order after `e`'s due or lease time changed. */
  update(e: E): void {
    if (e.pos < 0) return;
    this.up(e.pos);
    this.down(e.pos);
  }

  remove(e: E): void {
    const i = e.pos;
    if (i < 0) return;
    const last = this.items.pop()!;
    e.pos = -1;
    if (last !== e) {
      this.items[i] = last;
      last.pos = i;
      this.up(i);
      this.down(last.pos);
    }
  }

  /** Every entry, in no particular order (for checkpoints and deletes). */
  entries(): readonly E[] {
    return this.items;
  }

  private up(i: number): void {
    const items = this.items;
    const e = items[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = items[p]!;
      if (!before(e, parent)) break;
      items[i] = parent;
      parent.pos = i;
      i = p;
    }
    items[i] = e;
    e.pos = i;
  }

  private down(i: number): void {
    const items = this.items;
    const n = items.length;
    const e = items[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && before(items[r]!, items[l]!) ? r : l;
      const child = items[c]!;
      if (!before(child, e)) break;
      items[i] = child;
      child.pos = i;
      i = c;
    }
    items[i] = e;
    e.pos = i;
  }
}

/** Stale entries tolerated before a compaction, on top of twice the live ones. */
const COMPACT_SLACK = 65_536;

/**
 * A binary min-heap of (lease end, URL) pairs, validated lazily against the URL's `leaseMs`.
 *
 * Stale entries (leases ended early by a known update) would otherwise wait for their end to
 * be popped: a day-long lease at 20 k completions/s is 1.7 G dead entries. So the heap
 * compacts itself when it grows past twice its live entries at the last compaction plus
 * COMPACT_SLACK — O(size) work after at least that many pushes, O(1) amortized per push.
 */
export class LeaseHeap<E extends HeapEntry> {
  private until: number[] = [];
  private refs: E[] = [];
  private compactAt = COMPACT_SLACK;

  get size(): number {
    return this.until.length;
  }

  /** Drops entries that no longer match their URL's lease and restores the heap order. */
  compact(): void {
    const keepU: number[] = [];
    const keepR: E[] = [];
    for (let i = 0; i < this.until.length; i++) {
      if (this.refs[i]!.leaseMs === this.until[i]) {
        keepU.push(this.until[i]!);
        keepR.push(this.refs[i]!);
      }
    }
    this.until = keepU;
    this.refs = keepR;
    for (let i = (keepU.length >> 1) - 1; i >= 0; i--) this.siftDown(i, keepU[i]!, keepR[i]!);
    this.compactAt = 2 * keepU.length + COMPACT_SLACK;
  }

  private siftDown(i: number, t: number, e: E): void {
    const until = this.until;
    const refs = this.refs;
    const n = until.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && until[r]! < until[l]! ? r : l;
      if (until[c]! >= t) break;
      until[i] = until[c]!;
      refs[i] = refs[c]!;
      i = c;
    }
    until[i] = t;
    refs[i] = e;
  }

  push(untilMs: number, e: E): void {
    if (this.until.length >= this.compactAt) this.compact();
    const until = this.until;
    const refs = this.refs;
    let i = until.length;
    until.push(untilMs);
    refs.push(e);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (until[p]! <= untilMs) break;
      until[i] = until[p]!;
      refs[i] = refs[p]!;
      i = p;
    }
    until[i] = untilMs;
    refs[i] = e;
  }

  /**
   * Pops every entry whose lease ended at or before `nowMs` and calls `expire` for those
   * still current (the URL's `leaseMs` equals the entry's end).
   */
  popExpired(nowMs: number, expire: (e: E) => void): void {
    const until = this.until;
    const refs = this.refs;
    while (until.length > 0 && until[0]! <= nowMs) {
      const t = until[0]!;
      const e = refs[0]!;
      const lastT = until.pop()!;
      const lastE = refs.pop()!;
      if (until.length > 0) this.siftDown(0, lastT, lastE);
      if (e.leaseMs === t) expire(e);
    }
  }

  clear(): void {
    this.until.length = 0;
    this.refs.length = 0;
    this.compactAt = COMPACT_SLACK;
  }
}
