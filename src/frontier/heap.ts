/**
 * Indexed 4-ary heaps over host ids, the scheduler's host-level priority structures (front
 * bank, aging order, host heap, ready banks).
 *
 * Each id is in a heap at most once and its position is tracked, so a changed key is
 * re-sifted in O(log n) (`update`) and an id is removed from the middle (`remove`) without
 * leaving stale entries behind. No stale entries means the heap's contents are a pure
 * function of the ids' current keys: two schedulers with equal state pop in equal order,
 * which recovery relies on.
 *
 * Every host order the scheduler uses has one shape: a numeric key (smaller first), then an
 * optional second key (the ready banks': the host's last dispatch, least recent first), then
 * the HostKey (high lane, then low lane, unsigned), then — only for a 64-bit HostKey collision
 * — the owner's `tie`, a strict total order. Each slot carries a copy of its id's keys and
 * HostKey high lane, so a comparison reads the slot arrays alone; the low lane is read from
 * the owner's dense lane array only when the high lanes are equal.
 *
 * ```
 *  slots:    [ key (f64) | hostKeyHi | id ] [ key | hi | id ] …   16 bytes each, heap order
 *  seconds:  [ second key (f64) ] [ … ] …                         8 bytes each, same order
 *  pos:      id → slot, −1 when absent
 *  children of slot i: 4i + 1 … 4i + 4 (one 64-byte line when the slab is line-aligned)
 * ```
 *
 * The second key is read only between equal keys. The ready banks need it: their key is the
 * best URL's priority, equal across the hosts of a crawl without a prioritizer, and a HostKey
 * tie-break there let one host win every slot of an address it shares with equal-priority
 * neighbours until its queue was empty (audit e15: a 10-page site behind a 2,000-page one on
 * its address first fetched after 8.3 minutes, when all 2,000 were done).
 *
 * Four children per node: a pop at 10k hosts sifts through ⌈log₄ n⌉ ≈ 7 levels instead of
 * 14, each moving one slot and its `pos` entry, for three comparisons per level instead of
 * one. Measured on the frontier bench's workload (bench/suites/frontier.bench.mjs: 10k hosts,
 * every dispatch pops a ready bank and pushes the host heap): slot writes per dispatch
 * 17.0 → 10.4, dispatch+report per CPU-second +6 % at 1M URLs (214k → 227k, same run).
 *
 * Measured in bench/suites/frontier.bench.mjs (100k URLs, 10k hosts, every host active):
 * with the key read through an owner's comparator closure per comparison — a call and a
 * random read of the owner's per-host arrays each time, ~26 comparisons per pop — the host
 * heaps were about a quarter of dispatch+report; with the copies dispatch+report ran ~1.2×
 * as fast.
 *
 * The key copies are the owner's keys at the id's last `push` or `update`. The owner calls
 * `update` after every change to a present id's keys, as a heap that read keys live would
 * need anyway to stay ordered, so the copy always equals the live key. Under a strict total
 * order the pop sequence is a function of the contents alone, so the heap's shape (bottom-up
 * sifts, the re-heapify in `popUpTo`) never shows. `tie` alone is read live: it breaks only
 * a 64-bit HostKey collision.
 */

/** A slot is two f64 words: the key, then [hostKeyHi, id] as u32 lanes. */
const F64_PER_SLOT = 2;
/** Children per node; `parent(i) = (i − 1) >> 2`, children `4i + 1 … 4i + 4`. */
const ARITY = 4;
const U32_PER_SLOT = 4;
const HI = 2;
const ID = 3;

/** What a `HostHeap` reads about its ids. */
export interface HostOrder {
  /** The id's key, smaller first; read at `push` and `update` only. */
  key(id: number): number;
  /** A second key between equal keys, smaller first (none: 0 for every id); read at `push` and `update` only. */
  second?(id: number): number;
  /** HostKey lanes by id: `[2·id]` low, `[2·id + 1]` high (fixed for an id's lifetime). */
  lanes(): Uint32Array;
  /** Whether `a` goes before `b` when their keys and HostKeys are equal (a HostKey collision). */
  tie(a: number, b: number): boolean;
}

/** An indexed min-heap of host ids in [0, 2^31) under (key, HostKey, tie). */
export class HostHeap {
  private keys: Float64Array = new Float64Array(16 * F64_PER_SLOT);
  /** `keys`' buffer as u32 lanes, for each slot's HostKey high lane and id. */
  private words: Uint32Array = new Uint32Array(this.keys.buffer);
  /** Each slot's copy of its id's second key (all 0 for an order without one). */
  private seconds: Float64Array = new Float64Array(16);
  private pos: Int32Array = new Int32Array(16).fill(-1);
  /** Number of ids in the heap. */
  size = 0;
  /** Slot writes since construction (each sift step is one): what complexity tests count. */
  moves = 0;

  constructor(private readonly order: HostOrder) {}

  /** Whether `id` is in the heap. */
  has(id: number): boolean {
    return id < this.pos.length && this.pos[id]! >= 0;
  }

  /** The id that pops next, or −1 when empty. */
  peek(): number {
    return this.size > 0 ? this.words[ID]! : -1;
  }

  /** Inserts `id`, or re-reads its key and re-sifts it when already present. */
  push(id: number): void {
    if (this.has(id)) {
      this.update(id);
      return;
    }
    if (id >= this.pos.length) {
      let cap = this.pos.length * 2;
      while (cap <= id) cap *= 2;
      const p = new Int32Array(cap).fill(-1);
      p.set(this.pos);
      this.pos = p;
    }
    if ((this.size + 1) * F64_PER_SLOT > this.keys.length) {
      const k = new Float64Array(this.keys.length * 2);
      k.set(this.keys);
      this.keys = k;
      this.words = new Uint32Array(k.buffer);
      const sec = new Float64Array(this.seconds.length * 2);
      sec.set(this.seconds);
      this.seconds = sec;
    }
    const hi = this.order.lanes()[id * 2 + 1]!;
    this.up(this.size++, this.order.key(id), this.second(id), hi, id);
  }

  /** Removes and returns the first id, or −1 when empty. */
  pop(): number {
    if (this.size === 0) return -1;
    const top = this.words[ID]!;
    this.removeAt(0);
    return top;
  }

  /**
   * Removes every id whose key is not above `limit` and writes them to `out` (room for `size`
   * ids), in no particular order; returns how many. The heap afterwards holds the same ids,
   * and so pops in the same order, as after popping them one by one.
   *
   * Many hosts often surface at once (every host of a logical-clock drain opens its window
   * on the same tick): those ids form a subtree at the root, since no key is below its
   * parent's, so they are found in O(k) and the rest is re-heapified in O(n) when that beats
   * k pops of O(log n) each.
   */
  popUpTo(limit: number, out: Int32Array): number {
    const n = this.size;
    const k = this.keys;
    const w = this.words;
    if (n === 0 || k[0]! > limit) return 0;
    // Breadth-first over the qualifying subtree, with `out` as the queue of slots.
    let m = 1;
    out[0] = 0;
    for (let q = 0; q < m; q++) {
      const first = ARITY * out[q]! + 1;
      const last = Math.min(first + ARITY, n);
      for (let c = first; c < last; c++) if (!(k[c * F64_PER_SLOT]! > limit)) out[m++] = c;
    }
    for (let q = 0; q < m; q++) out[q] = w[out[q]! * U32_PER_SLOT + ID]!;
    if (m * Math.log2(n) < 2 * n) {
      for (let q = 0; q < m; q++) this.remove(out[q]!);
      return m;
    }
    for (let q = 0; q < m; q++) this.pos[out[q]!] = -1;
    // Close up the slots that stay, then heapify bottom-up.
    let kept = 0;
    for (let i = 0; i < n; i++) {
      const id = w[i * U32_PER_SLOT + ID]!;
      if (this.pos[id]! < 0) continue;
      if (kept !== i) this.move(i, kept);
      kept++;
    }
    this.size = kept;
    for (let i = (kept - 2) >> 2; i >= 0; i--) {
      const key = k[i * F64_PER_SLOT]!;
      const hi = w[i * U32_PER_SLOT + HI]!;
      this.down(i, key, this.seconds[i]!, hi, w[i * U32_PER_SLOT + ID]!);
    }
    return m;
  }

  /** Removes `id` if present. */
  remove(id: number): void {
    if (this.has(id)) this.removeAt(this.pos[id]!);
  }

  /** Re-reads `id`'s key and restores the heap order (no-op when absent). */
  update(id: number): void {
    if (!this.has(id)) return;
    const i = this.pos[id]!;
    const hi = this.words[i * U32_PER_SLOT + HI]!;
    this.resift(i, this.order.key(id), this.second(id), hi, id);
  }

  /** The order's second key of `id` (0 without one). */
  private second(id: number): number {
    const second = this.order.second;
    return second === undefined ? 0 : second(id);
  }

  private removeAt(i: number): void {
    const w = this.words;
    this.pos[w[i * U32_PER_SLOT + ID]!] = -1;
    const last = --this.size;
    if (i === last) return;
    const b = last * U32_PER_SLOT;
    this.resift(i, this.keys[last * F64_PER_SLOT]!, this.seconds[last]!, w[b + HI]!, w[b + ID]!);
  }

  /** Places the entry into the hole at slot `i`: moved up if it beats its parent, else down. */
  private resift(i: number, key: number, sec: number, hi: number, id: number): void {
    const parent = (i - 1) >> 2;
    if (i > 0 && this.before(key, sec, hi, id, parent)) {
      this.move(parent, i);
      this.up(parent, key, sec, hi, id);
    } else {
      this.down(i, key, sec, hi, id);
    }
  }

  /** Moves the hole at slot `i` up past every parent the entry beats (never above slot `top`), then fills it. */
  private up(i: number, key: number, sec: number, hi: number, id: number, top = 0): void {
    while (i > top) {
      const parent = (i - 1) >> 2;
      if (!this.before(key, sec, hi, id, parent)) break;
      this.move(parent, i);
      i = parent;
    }
    this.fill(i, key, sec, hi, id);
  }

  /**
   * Moves the hole at slot `i` down to a leaf along the best children, then back up to the
   * entry's place (Floyd's bottom-up sift): three comparisons per level on the way down
   * instead of four, and an entry taken from the last slot nearly always belongs near the
   * bottom. The children moved up along the path are in order, so the entry climbs back past
   * exactly those it beats and lands in the slot the top-down sift would have chosen.
   */
  private down(i: number, key: number, sec: number, hi: number, id: number): void {
    const top = i;
    const n = this.size;
    for (;;) {
      const first = ARITY * i + 1;
      if (first >= n) break;
      const last = Math.min(first + ARITY, n);
      let c = first;
      for (let j = first + 1; j < last; j++) if (this.slotBefore(j, c)) c = j;
      this.move(c, i);
      i = c;
    }
    this.up(i, key, sec, hi, id, top);
  }

  private fill(i: number, key: number, sec: number, hi: number, id: number): void {
    this.moves++;
    this.keys[i * F64_PER_SLOT] = key;
    this.seconds[i] = sec;
    this.words[i * U32_PER_SLOT + HI] = hi;
    this.words[i * U32_PER_SLOT + ID] = id;
    this.pos[id] = i;
  }

  /** Copies slot `from` into slot `to` and records the moved id's new position. */
  private move(from: number, to: number): void {
    this.moves++;
    const w = this.words;
    this.keys[to * F64_PER_SLOT] = this.keys[from * F64_PER_SLOT]!;
    this.seconds[to] = this.seconds[from]!;
    w[to * U32_PER_SLOT + HI] = w[from * U32_PER_SLOT + HI]!;
    const id = w[from * U32_PER_SLOT + ID]!;
    w[to * U32_PER_SLOT + ID] = id;
    this.pos[id] = to;
  }

  /** Whether the entry (key, sec, hi, id) goes before the entry in slot `s`. */
  private before(key: number, sec: number, hi: number, id: number, s: number): boolean {
    const ks = this.keys[s * F64_PER_SLOT]!;
    if (key !== ks) return key < ks;
    const ss = this.seconds[s]!;
    if (sec !== ss) return sec < ss;
    const his = this.words[s * U32_PER_SLOT + HI]!;
    if (hi !== his) return hi < his;
    return this.lowBefore(id, this.words[s * U32_PER_SLOT + ID]!);
  }

  /** Whether the entry in slot `s` goes before the entry in slot `t`. */
  private slotBefore(s: number, t: number): boolean {
    const w = this.words;
    return this.before(this.keys[s * F64_PER_SLOT]!, this.seconds[s]!, w[s * U32_PER_SLOT + HI]!, w[s * U32_PER_SLOT + ID]!, t);
  }

  /** The order of two ids with equal keys and HostKey high lanes: low lane, then `tie`. */
  private lowBefore(a: number, b: number): boolean {
    const lanes = this.order.lanes();
    const la = lanes[a * 2]!;
    const lb = lanes[b * 2]!;
    return la !== lb ? la < lb : this.order.tie(a, b);
  }
}
