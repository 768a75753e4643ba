/**
 * Per-host URL queues (the back queues, and the waiting URLs of hosts in the front bank).
 *
 * Each host owns a 4-ary heap of its pending rows ordered by priority (higher first), ties
 * by URLKey (smaller first): a strict total order, because keys are unique, so the pop order
 * does not depend on the heap's shape. With `dueOrder` (a freshness hook that makes URLs due
 * ahead of their time asks for it) the order is due hour (earliest first), then priority,
 * then URLKey; the host-level orders still read the first row's priority (`topPriority`). In
 * either order a row waiting for a retry comes after every row not yet tried (`keyOf`: a
 * broken page is not asked again before the rest of its site). One shared `qpos` column (4 bytes per row) records
 * each queued row's heap position, so a row whose priority changes (OPIC credit) is
 * re-sifted in place and never duplicated. There is no object per URL.
 *
 * Four children per node halve the depth of a binary heap, and with it the rows moved per
 * pop, each of which rewrites its `qpos` entry — a random row, so a likely cache miss.
 * Measured on bench/suites/frontier.bench.mjs: dispatch+report +6 % at 100k URLs (10 per
 * host) and +12 % at 1M (100 per host) over the binary heap.
 *
 * A heap entry is three u32 slots — row, sort key (f32 bits: the priority, or under `dueOrder`
 * the due hour negated, whose ties read the priority column), PathKey high lane — so a
 * comparison reads the host's own contiguous entries instead of two random rows of the URL
 * columns; only equal priorities *and* equal PathKey high lanes fall back to the columns.
 * Measured in bench/suites/frontier.bench.mjs (100k URLs, 10k hosts, five priority levels):
 * comparisons through the columns were a cache miss each and ~16 % of dispatch time; the
 * entries cost 8 more bytes per queued URL.
 *
 * Every host's heap lives in one shared slab, as a region of `cap` entries at word offset
 * `base`. A typed array per host put three dependent cache misses (the array object, its
 * buffer, its bytes) in front of every pop; profiled on the same benchmark, they were most of
 * the queue's share of dispatch. A region that fills moves to the end of the slab at 1.5×
 * its capacity (in place when it already ends the slab); the slab is re-packed, dropping the
 * vacated regions, whenever it has to grow (see `REGION_GROWTH`).
 * Positions inside a region are host-relative, so moves never touch `qpos`.
 *
 * ```
 *  slab:   [host 3: row|prio|pathHi …][vacated][host 0: row|prio|pathHi …][host 1 …] … end
 *           ▲ base[3], cap[3] entries            ▲ base[0]
 *  qpos:   row → index of its entry in its host's heap, −1 when not queued
 * ```
 */
import type { UrlTable } from './table.js';

/**
 * Under `dueOrder`, what a retried row's due hour loses (`keyOf`): 2²³, below every due hour
 * (epoch-hours < 2²³ until the year 2927) and exact in f32 with the hour added.
 */
const RETRY_DUE_DEMOTION = 2 ** 23;

const demoteBuf = new DataView(new ArrayBuffer(4));
/**
 * A retried row's sort key from its priority `p` (≥ 0, as OPIC's are): a negative f32 whose
 * order follows p exactly — its magnitude's bits are the largest finite f32's less p's bits —
 * so every retried row sorts after every row of priority ≥ 0, and retried rows keep the
 * priority order among themselves (a fixed shift such as p − 2²³ would round priorities
 * together in f32). Never −0 or −∞ (−∞ marks an empty queue in `topPriority`); a negative
 * priority maps to the lowest key.
 */
function retriedKey(p: number): number {
  demoteBuf.setFloat32(0, p > 0 ? p : 0);
  const bits = Math.min(Math.max(demoteBuf.getUint32(0), 1), 0x7f7f_ffff);
  demoteBuf.setUint32(0, 0x8000_0000 | (0x7f80_0000 - bits));
  return demoteBuf.getFloat32(0);
}

/** u32 words per entry: row, priority (f32 bits), PathKey high lane. */
const STRIDE = 3;
/** Entries of a host's first region. */
const MIN_CAP = 4;
/**
 * A full region grows by half (a third of it is slack at most, a fifth on average), and a
 * re-packed slab gets a quarter of headroom. Measured at 1M URLs over 10k hosts
 * (bench/suites/frontier.bench.mjs): ×2 regions and ×1.5 slabs held 27 bytes per queued URL
 * for 12 of entries and 4 of position; these hold 19.9.
 */
const REGION_GROWTH = 1.5;
const SLAB_SLACK = 1.25;

/** The pending rows of every host, by host id. */
export class RowQueues {
  /** Heap position of each row, −1 when the row is not queued. */
  private qpos: Int32Array = new Int32Array(0);
  /** Every host's heap entries, as u32 words and (the same buffer) as f32 priorities. */
  private slab: Uint32Array = new Uint32Array(64 * STRIDE);
  private slabF: Float32Array = new Float32Array(this.slab.buffer);
  /** Words of the slab in use, vacated regions included. */
  private end = 0;
  /** Word offset of each host's region, by host id. */
  private base: Uint32Array = new Uint32Array(64);
  /** Entries each host's region holds, by host id. */
  private cap: Int32Array = new Int32Array(64);
  /** Entries queued for each host, by host id. */
  private sizes: Int32Array = new Int32Array(64);
  /** Hosts registered (ids below it are valid). */
  private hosts = 0;
  /** Rows queued across all hosts. */
  total = 0;
  /** Entry moves inside host heaps since construction (sift steps): what complexity tests count. */
  moves = 0;
  /** Priority of each host's best row (−∞ when its queue is empty), by host id. */
  topPriority: Float64Array = new Float64Array(64).fill(Number.NEGATIVE_INFINITY);

  /**
   * @param dueOrder order each host's rows by due hour (`nextDue`, earliest first), then
   *   priority, instead of by priority (`FreshnessHook.queueOrder` 'due'). The host orders
   *   still read the priority of each host's first row (`topPriority`).
   */
  constructor(
    private readonly table: UrlTable,
    readonly dueOrder = false,
  ) {}

  /**
   * A row's sort key in its host's heap (higher first): its priority, or under `dueOrder` its
   * due hour negated (an integer below 2²⁴, exact in f32 for 1,900 years of epoch-hours).
   * A row's due hour does not change while it is queued (the freshness pass re-times only
   * rows waiting in the schedule index), so the key read at push stays right.
   */
  private keyOf(row: number): number {
    const t = this.table;
    // A URL waiting to be retried goes after every URL of its host not yet tried: one broken
    // page (or one the server failed on under load) is not asked again and again while the
    // rest of the site waits, and by its retry the host has answered others. The retry count
    // is fixed while the row is queued (only a report changes it), so the key stays right.
    const retried = t.retries[t.slot[row]!]! > 0;
    if (this.dueOrder) return retried ? -t.nextDue[row]! - RETRY_DUE_DEMOTION : -t.nextDue[row]!;
    return retried ? retriedKey(t.priority[row]!) : t.priority[row]!;
  }

  /** Grows the position column to cover `rows` rows. */
  ensureRows(rows: number): void {
    if (rows <= this.qpos.length) return;
    const next = new Int32Array(Math.max(rows, Math.ceil(this.qpos.length * 1.25), 1024)).fill(-1);
    next.set(this.qpos);
    this.qpos = next;
  }

  /** Registers host ids up to `host`. */
  ensureHost(host: number): void {
    if (host < this.hosts) return;
    this.hosts = host + 1;
    if (host < this.base.length) return;
    const n = Math.max(host + 1, this.base.length * 2);
    const base = new Uint32Array(n);
    base.set(this.base);
    this.base = base;
    const cap = new Int32Array(n);
    cap.set(this.cap);
    this.cap = cap;
    const sizes = new Int32Array(n);
    sizes.set(this.sizes);
    this.sizes = sizes;
    const top = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);
    top.set(this.topPriority);
    this.topPriority = top;
  }

  /**
   * Whether row `a` goes before row `b` (read from the URL columns): a row not yet tried before
   * one waiting for a retry (as `keyOf` sorts them), then priority, then key.
   */
  better(a: number, b: number): boolean {
    const t = this.table;
    const p = t.priority;
    const ra = t.retries[t.slot[a]!]! > 0;
    if (ra !== (t.retries[t.slot[b]!]! > 0)) return !ra;
    const pa = p[a]!;
    const pb = p[b]!;
    if (pa !== pb) return pa > pb;
    const k = this.table.key;
    const x = a * 4;
    const y = b * 4;
    return (k[x + 1]! - k[y + 1]! || k[x]! - k[y]! || k[x + 3]! - k[y + 3]! || k[x + 2]! - k[y + 2]!) < 0;
  }

  /** Whether the entry at slab word `i` goes before the entry at word `j`. */
  private before(i: number, j: number): boolean {
    return this.entryBefore(this.slab, this.slabF, i, j);
  }

  /** Whether the entry at word `i` of `u` (`f`: the same words as f32) goes before the one at word `j`. */
  private entryBefore(u: Uint32Array, f: Float32Array, i: number, j: number): boolean {
    const pi = f[i + 1]!;
    const pj = f[j + 1]!;
    if (pi !== pj) return pi > pj;
    if (this.dueOrder) {
      const p = this.table.priority;
      const a = p[u[i]!]!;
      const b = p[u[j]!]!;
      if (a !== b) return a > b;
    }
    const hi = u[i + 2]!;
    const hj = u[j + 2]!;
    if (hi !== hj) return hi < hj;
    return this.better(u[i]!, u[j]!);
  }

  /** Queued rows of `host`. */
  size(host: number): number {
    return host < this.hosts ? this.sizes[host]! : 0;
  }

  /** Whether `row` is queued. */
  queued(row: number): boolean {
    return row < this.qpos.length && this.qpos[row]! >= 0;
  }

  /** The best row of `host`, or −1. */
  peek(host: number): number {
    return this.size(host) > 0 ? this.slab[this.base[host]!]! : -1;
  }

  /** Queues `row` on its host (no-op when already queued). */
  push(row: number): void {
    if (this.queued(row)) return;
    const host = this.table.host[row]!;
    const n = this.sizes[host]!;
    if (n === this.cap[host]!) this.growRegion(host, Math.max(MIN_CAP, Math.ceil(n * REGION_GROWTH)));
    this.sizes[host] = n + 1;
    this.total++;
    const at = this.base[host]! + n * STRIDE;
    this.slab[at] = row;
    this.slabF[at + 1] = this.keyOf(row);
    this.slab[at + 2] = this.table.key[row * 4 + 3]!;
    this.qpos[row] = n;
    this.up(this.base[host]!, n);
    this.refreshTop(host);
  }

  /**
   * Queues many rows of one empty host at once (recovery): entries written in order, then
   * heapified bottom-up in O(n) instead of n sifted pushes.
   */
  pushAll(host: number, rows: ArrayLike<number>, count: number): void {
    if (count === 0) return;
    if (this.sizes[host] !== 0) {
      for (let i = 0; i < count; i++) this.push(rows[i]!);
      return;
    }
    if (this.cap[host]! < count) this.growRegion(host, Math.max(MIN_CAP, count));
    const b = this.base[host]!;
    const u = this.slab;
    const f = this.slabF;
    const key = this.table.key;
    for (let i = 0; i < count; i++) {
      const row = rows[i]!;
      const at = b + i * STRIDE;
      u[at] = row;
      f[at + 1] = this.keyOf(row);
      u[at + 2] = key[row * 4 + 3]!;
      this.qpos[row] = i;
    }
    this.sizes[host] = count;
    this.total += count;
    for (let i = (count - 2) >> 2; i >= 0; i--) this.down(b, count, i);
    this.refreshTop(host);
  }

  /**
   * Replaces the queue of `host` with the first `count` of `rows` (the spill tier keeping a
   * host's best rows).
   */
  replaceAll(host: number, rows: ArrayLike<number>, count = rows.length): void {
    const n = this.size(host);
    const b = this.base[host]!;
    for (let i = 0; i < n; i++) this.qpos[this.slab[b + i * STRIDE]!] = -1;
    this.total -= n;
    if (n > 0) this.sizes[host] = 0;
    this.pushAll(host, rows, count);
    if (n > 0) this.refreshTop(host);
  }

  /** Removes and returns the best row of `host`, or −1. */
  pop(host: number): number {
    if (this.size(host) === 0) return -1;
    const top = this.slab[this.base[host]!]!;
    this.removeAt(host, 0);
    this.refreshTop(host);
    return top;
  }

  /** Removes `row` from its host's queue if queued. */
  remove(row: number): void {
    if (!this.queued(row)) return;
    const host = this.table.host[row]!;
    this.removeAt(host, this.qpos[row]!);
    this.refreshTop(host);
  }

  /** Re-sifts `row` after its priority in the table changed (no-op when not queued). */
  update(row: number): void {
    if (!this.queued(row)) return;
    const host = this.table.host[row]!;
    const b = this.base[host]!;
    const i = this.qpos[row]!;
    this.slabF[b + i * STRIDE + 1] = this.keyOf(row);
    if (this.up(b, i) === i) this.down(b, this.sizes[host]!, i);
    this.refreshTop(host);
  }

  /** A copy of the queued rows of `host`, in heap order. */
  rowsOf(host: number): Uint32Array {
    const n = this.size(host);
    const out = new Uint32Array(n);
    if (n === 0) return out;
    const b = this.base[host]!;
    for (let i = 0; i < n; i++) out[i] = this.slab[b + i * STRIDE]!;
    return out;
  }

  /**
   * The queued rows of `host`, best first, into `out` (which has room for `size(host)`); returns
   * how many. The queue is unchanged. A heapsort of a copy of the host's entries — already a
   * heap — so the order comes from the entries' priority and PathKey high lane, and the URL
   * columns are read only when both tie. The spill tier sorted a shed host's rows with `better`
   * instead, two random rows of the columns a comparison: 14 % of a budgeted intake's profile
   * (2M URLs over 20k hosts under 100 MiB, with the `Array.from` copy and its garbage).
   */
  sortedRows(host: number, out: Uint32Array): number {
    const n = this.size(host);
    if (n === 0) return 0;
    const words = n * STRIDE;
    if (this.sortU.length < words) {
      this.sortU = new Uint32Array(Math.max(words, this.sortU.length * 2));
      this.sortF = new Float32Array(this.sortU.buffer);
    }
    const u = this.sortU;
    const b = this.base[host]!;
    u.set(this.slab.subarray(b, b + words));
    // The best entry is at the root: swap it behind the shrinking heap, so the copy ends up
    // worst first.
    for (let end = n - 1; end > 0; end--) {
      swapEntries(u, 0, end * STRIDE);
      this.siftCopy(end, 0);
    }
    for (let i = 0; i < n; i++) out[i] = u[(n - 1 - i) * STRIDE]!;
    return n;
  }

  /** Copy of one host's entries for `sortedRows`, as u32 words and as f32 priorities. */
  private sortU = new Uint32Array(64 * STRIDE);
  private sortF = new Float32Array(this.sortU.buffer);

  /** Whether entry word `i` of the `sortedRows` copy goes before entry word `j`. */
  private beforeCopy(i: number, j: number): boolean {
    return this.entryBefore(this.sortU, this.sortF, i, j);
  }

  /** `down` on the `sortedRows` copy (no positions to keep). */
  private siftCopy(n: number, i: number): void {
    const u = this.sortU;
    for (;;) {
      const first = 4 * i + 1;
      if (first >= n) break;
      const last = Math.min(first + 4, n);
      let c = first;
      for (let j = first + 1; j < last; j++) if (this.beforeCopy(j * STRIDE, c * STRIDE)) c = j;
      if (!this.beforeCopy(c * STRIDE, i * STRIDE)) break;
      swapEntries(u, i * STRIDE, c * STRIDE);
      i = c;
    }
  }

  /** Re-reads every queued priority of `host` from the table and rebuilds its heap. */
  reheap(host: number): void {
    const n = this.size(host);
    const b = this.base[host]!;
    for (let i = 0; i < n; i++) this.slabF[b + i * STRIDE + 1] = this.keyOf(this.slab[b + i * STRIDE]!);
    for (let i = (n - 2) >> 2; i >= 0; i--) this.down(b, n, i);
    this.refreshTop(host);
  }

  /** Bytes held (positions, slab, per-host tables). */
  get memoryBytes(): number {
    return this.qpos.byteLength + this.slab.byteLength + this.base.byteLength + this.cap.byteLength + this.sizes.byteLength + this.topPriority.byteLength;
  }

  /**
   * Gives `host` a region of `cap` entries (more than it has): extended in place when it ends
   * the slab, else moved to the end. Entries keep their host-relative positions, so `qpos`
   * stays valid.
   */
  private growRegion(host: number, cap: number): void {
    const old = this.cap[host]!;
    const words = cap * STRIDE;
    const atEnd = old > 0 && this.base[host]! + old * STRIDE === this.end;
    if (atEnd) {
      if (this.base[host]! + words > this.slab.length) this.repack(words - old * STRIDE);
      // A re-pack puts the regions back in host order, so this one may no longer end the slab.
      if (this.base[host]! + old * STRIDE === this.end) {
        this.end = this.base[host]! + words;
        this.cap[host] = cap;
        return;
      }
    }
    if (this.end + words > this.slab.length) this.repack(words);
    const from = this.base[host]!;
    const to = this.end;
    this.slab.copyWithin(to, from, from + this.sizes[host]! * STRIDE);
    this.base[host] = to;
    this.cap[host] = cap;
    this.end = to + words;
  }

  /**
   * Copies every host's region, in host order, into a fresh slab with room for `extra` more
   * words and a quarter again as much: the vacated regions are dropped, and between two
   * re-packs at least a fifth of the slab is appended, so the copying is O(1) per word
   * amortized (at most five copies).
   */
  private repack(extra: number): void {
    let live = 0;
    for (let h = 0; h < this.hosts; h++) live += this.cap[h]! * STRIDE;
    const next = new Uint32Array(Math.ceil((live + extra) * SLAB_SLACK));
    let at = 0;
    for (let h = 0; h < this.hosts; h++) {
      const c = this.cap[h]!;
      if (c === 0) continue;
      const b = this.base[h]!;
      next.set(this.slab.subarray(b, b + this.sizes[h]! * STRIDE), at);
      this.base[h] = at;
      at += c * STRIDE;
    }
    this.slab = next;
    this.slabF = new Float32Array(next.buffer);
    this.end = at;
  }

  private refreshTop(host: number): void {
    const b = this.base[host]!;
    this.topPriority[host] = this.sizes[host]! === 0 ? Number.NEGATIVE_INFINITY : this.dueOrder ? this.table.priority[this.slab[b]!]! : this.slabF[b + 1]!;
  }

  private removeAt(host: number, i: number): void {
    const b = this.base[host]!;
    const u = this.slab;
    this.qpos[u[b + i * STRIDE]!] = -1;
    const last = --this.sizes[host]!;
    this.total--;
    if (i !== last) {
      const x = b + i * STRIDE;
      const y = b + last * STRIDE;
      u[x] = u[y]!;
      u[x + 1] = u[y + 1]!;
      u[x + 2] = u[y + 2]!;
      this.qpos[u[x]!] = i;
      if (this.up(b, i) === i) this.down(b, last, i);
    }
  }

  /** Moves entry `i` of the heap at word `b` up to its place; returns its final index. */
  private up(b: number, i: number): number {
    const u = this.slab;
    const at = b + i * STRIDE;
    const row = u[at]!;
    const prio = u[at + 1]!;
    const hi = u[at + 2]!;
    while (i > 0) {
      const parent = (i - 1) >> 2;
      const p = b + parent * STRIDE;
      const a = b + i * STRIDE;
      // Compare the moving entry (still stored at slot i) with the parent.
      if (!this.before(a, p)) break;
      this.moves++;
      u[a] = u[p]!;
      u[a + 1] = u[p + 1]!;
      u[a + 2] = u[p + 2]!;
      this.qpos[u[a]!] = i;
      u[p] = row;
      u[p + 1] = prio;
      u[p + 2] = hi;
      i = parent;
    }
    this.qpos[row] = i;
    return i;
  }

  /** Moves entry `i` of the `n`-entry heap at word `b` down to its place. */
  private down(b: number, n: number, i: number): void {
    const u = this.slab;
    for (;;) {
      const first = 4 * i + 1;
      if (first >= n) break;
      const last = Math.min(first + 4, n);
      let c = first;
      for (let j = first + 1; j < last; j++) if (this.before(b + j * STRIDE, b + c * STRIDE)) c = j;
      if (!this.before(b + c * STRIDE, b + i * STRIDE)) break;
      this.moves++;
      const x = b + i * STRIDE;
      const y = b + c * STRIDE;
      swapEntries(u, x, y);
      this.qpos[u[x]!] = i;
      this.qpos[u[y]!] = c;
      i = c;
    }
  }
}

/** Swaps the entries at words `x` and `y` of `u`. */
function swapEntries(u: Uint32Array, x: number, y: number): void {
  const t0 = u[x]!;
  const t1 = u[x + 1]!;
  const t2 = u[x + 2]!;
  u[x] = u[y]!;
  u[x + 1] = u[y + 1]!;
  u[x + 2] = u[y + 2]!;
  u[y] = t0;
  u[y + 1] = t1;
  u[y + 2] = t2;
}
