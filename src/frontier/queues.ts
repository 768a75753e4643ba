/**
 * Per-host URL queues (the back queues, and the waiting URLs of hosts in the front bank).
 *
 * Each host owns a binary heap of its pending rows ordered by priority (higher first), ties
 * by URLKey (smaller first): a strict total order, because keys are unique. One shared
 * `qpos` column (4 bytes per row) records each queued row's heap position, so a row whose
 * priority changes (OPIC credit) is re-sifted in place and never duplicated. There is no
 * object per URL.
 *
 * A heap entry is three u32 slots — row, priority (f32 bits), PathKey high lane — so a
 * comparison reads the host's own contiguous entries instead of two random rows of the URL
 * columns; only equal priorities *and* equal PathKey high lanes fall back to the columns.
 * Measured in bench/suites/frontier.bench.mjs (100k URLs, 10k hosts, five priority levels):
 * comparisons through the columns were a cache miss each and ~16 % of dispatch time; the
 * entries cost 8 more bytes per queued URL.
 *
 * ```
 *  host h:  [row|prio|pathHi] [row|prio|pathHi] [row|prio|pathHi] …   (heap order)
 *  qpos:    row → index of its entry in its host's heap, −1 when not queued
 * ```
 */
import type { UrlTable } from './table.js';

const STRIDE = 3;
const EMPTY_U = new Uint32Array(0);
const EMPTY_F = new Float32Array(0);

/** The pending rows of every host, by host id. */
export class RowQueues {
  /** Heap position of each row, −1 when the row is not queued. */
  private qpos: Int32Array = new Int32Array(0);
  private heaps: Uint32Array[] = [];
  private prios: Float32Array[] = [];
  private sizes: number[] = [];
  /** Rows queued across all hosts. */
  total = 0;
  /** Priority of each host's best row (−∞ when its queue is empty), by host id. */
  topPriority: Float64Array = new Float64Array(64).fill(Number.NEGATIVE_INFINITY);

  constructor(private readonly table: UrlTable) {}

  /** Grows the position column to cover `rows` rows. */
  ensureRows(rows: number): void {
    if (rows <= this.qpos.length) return;
    const next = new Int32Array(Math.max(rows, Math.ceil(this.qpos.length * 1.5), 1024)).fill(-1);
    next.set(this.qpos);
    this.qpos = next;
  }

  /** Registers host ids up to `host`. */
  ensureHost(host: number): void {
    while (this.heaps.length <= host) {
      this.heaps.push(EMPTY_U);
      this.prios.push(EMPTY_F);
      this.sizes.push(0);
    }
    if (host >= this.topPriority.length) {
      const next = new Float64Array(Math.max(host + 1, this.topPriority.length * 2)).fill(Number.NEGATIVE_INFINITY);
      next.set(this.topPriority);
      this.topPriority = next;
    }
  }

  /** Whether row `a` goes before row `b` (read from the URL columns). */
  better(a: number, b: number): boolean {
    const p = this.table.priority;
    const pa = p[a]!;
    const pb = p[b]!;
    if (pa !== pb) return pa > pb;
    const k = this.table.key;
    const x = a * 4;
    const y = b * 4;
    return (k[x + 1]! - k[y + 1]! || k[x]! - k[y]! || k[x + 3]! - k[y + 3]! || k[x + 2]! - k[y + 2]!) < 0;
  }

  /** Whether entry slot `i` goes before slot `j` of one host's heap (`i`, `j` are slot offsets). */
  private before(u: Uint32Array, f: Float32Array, i: number, j: number): boolean {
    const pi = f[i + 1]!;
    const pj = f[j + 1]!;
    if (pi !== pj) return pi > pj;
    const hi = u[i + 2]!;
    const hj = u[j + 2]!;
    if (hi !== hj) return hi < hj;
    return this.better(u[i]!, u[j]!);
  }

  /** Queued rows of `host`. */
  size(host: number): number {
    return this.sizes[host] ?? 0;
  }

  /** Whether `row` is queued. */
  queued(row: number): boolean {
    return row < this.qpos.length && this.qpos[row]! >= 0;
  }

  /** The best row of `host`, or −1. */
  peek(host: number): number {
    return (this.sizes[host] ?? 0) > 0 ? this.heaps[host]![0]! : -1;
  }

  /** Queues `row` on its host (no-op when already queued). */
  push(row: number): void {
    if (this.queued(row)) return;
    const host = this.table.host[row]!;
    let u = this.heaps[host]!;
    let f = this.prios[host]!;
    const n = this.sizes[host]!;
    if ((n + 1) * STRIDE > u.length) {
      const buf = new ArrayBuffer(Math.max(4, n * 2) * STRIDE * 4);
      const nu = new Uint32Array(buf);
      nu.set(u);
      this.heaps[host] = u = nu;
      this.prios[host] = f = new Float32Array(buf);
    }
    this.sizes[host] = n + 1;
    this.total++;
    const at = n * STRIDE;
    u[at] = row;
    f[at + 1] = this.table.priority[row]!;
    u[at + 2] = this.table.key[row * 4 + 3]!;
    this.qpos[row] = n;
    this.up(u, f, n);
    this.refreshTop(host);
  }

  /**
   * Queues many rows of one empty host at once (recovery): entries written in order, then
   * heapified bottom-up in O(n) instead of n sifted pushes.
   */
  pushAll(host: number, rows: ArrayLike<number>, count: number): void {
    if (count === 0) return;
    const n = this.sizes[host]!;
    if (n !== 0) {
      for (let i = 0; i < count; i++) this.push(rows[i]!);
      return;
    }
    const buf = new ArrayBuffer(Math.max(4, count) * STRIDE * 4);
    const u = new Uint32Array(buf);
    const f = new Float32Array(buf);
    const prio = this.table.priority;
    const key = this.table.key;
    for (let i = 0; i < count; i++) {
      const row = rows[i]!;
      const at = i * STRIDE;
      u[at] = row;
      f[at + 1] = prio[row]!;
      u[at + 2] = key[row * 4 + 3]!;
      this.qpos[row] = i;
    }
    this.heaps[host] = u;
    this.prios[host] = f;
    this.sizes[host] = count;
    this.total += count;
    for (let i = (count >> 1) - 1; i >= 0; i--) this.down(u, f, count, i);
    this.refreshTop(host);
  }

  /** Removes and returns the best row of `host`, or −1. */
  pop(host: number): number {
    const n = this.sizes[host] ?? 0;
    if (n === 0) return -1;
    const top = this.heaps[host]![0]!;
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
    const u = this.heaps[host]!;
    const f = this.prios[host]!;
    const i = this.qpos[row]!;
    f[i * STRIDE + 1] = this.table.priority[row]!;
    if (this.up(u, f, i) === i) this.down(u, f, this.sizes[host]!, i);
    this.refreshTop(host);
  }

  /** A copy of the queued rows of `host`, in heap order. */
  rowsOf(host: number): Uint32Array {
    const n = this.sizes[host] ?? 0;
    const u = this.heaps[host] ?? EMPTY_U;
    const out = new Uint32Array(n);
    for (let i = 0; i < n; i++) out[i] = u[i * STRIDE]!;
    return out;
  }

  /** Re-reads every queued priority of `host` from the table and rebuilds its heap. */
  reheap(host: number): void {
    const u = this.heaps[host]!;
    const f = this.prios[host]!;
    const n = this.sizes[host]!;
    for (let i = 0; i < n; i++) f[i * STRIDE + 1] = this.table.priority[u[i * STRIDE]!]!;
    for (let i = (n >> 1) - 1; i >= 0; i--) this.down(u, f, n, i);
    this.refreshTop(host);
  }

  /** Bytes held (positions, heaps, per-host tops). */
  get memoryBytes(): number {
    let b = this.qpos.byteLength + this.topPriority.byteLength;
    for (const h of this.heaps) b += h.byteLength;
    return b + this.sizes.length * 8;
  }

  private refreshTop(host: number): void {
    this.topPriority[host] = this.sizes[host]! > 0 ? this.prios[host]![1]! : Number.NEGATIVE_INFINITY;
  }

  private removeAt(host: number, i: number): void {
    const u = this.heaps[host]!;
    const f = this.prios[host]!;
    this.qpos[u[i * STRIDE]!] = -1;
    const last = --this.sizes[host]!;
    this.total--;
    if (i !== last) {
      const a = i * STRIDE;
      const b = last * STRIDE;
      u[a] = u[b]!;
      u[a + 1] = u[b + 1]!;
      u[a + 2] = u[b + 2]!;
      this.qpos[u[a]!] = i;
      if (this.up(u, f, i) === i) this.down(u, f, last, i);
    }
  }

  /** Moves entry `i` up to its place; returns its final index. */
  private up(u: Uint32Array, f: Float32Array, i: number): number {
    const row = u[i * STRIDE]!;
    const prio = u[i * STRIDE + 1]!;
    const hi = u[i * STRIDE + 2]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = parent * STRIDE;
      // Compare the moving entry (still stored at slot i) with the parent.
      if (!this.before(u, f, i * STRIDE, p)) break;
      const a = i * STRIDE;
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

  private down(u: Uint32Array, f: Float32Array, n: number, i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && this.before(u, f, r * STRIDE, l * STRIDE)) c = r;
      if (!this.before(u, f, c * STRIDE, i * STRIDE)) break;
      const a = i * STRIDE;
      const b = c * STRIDE;
      const t0 = u[a]!;
      const t1 = u[a + 1]!;
      const t2 = u[a + 2]!;
      u[a] = u[b]!;
      u[a + 1] = u[b + 1]!;
      u[a + 2] = u[b + 2]!;
      u[b] = t0;
      u[b + 1] = t1;
      u[b + 2] = t2;
      this.qpos[u[a]!] = i;
      this.qpos[t0] = c;
      i = c;
    }
  }
}
