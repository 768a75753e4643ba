/**
 * Per-host URL queues (the back queues, and the waiting URLs of hosts in the front bank).
 *
 * Each host owns a binary heap of its pending rows ordered by priority (higher first), ties
 * by URLKey (smaller first): a strict total order, because keys are unique. One shared
 * `qpos` column (4 bytes per row) records each queued row's heap position, so a row whose
 * priority changes (OPIC credit) is re-sifted in place and never duplicated. A host's heap
 * is a Uint32Array that grows geometrically; there is no object per URL.
 */
import type { UrlTable } from './table.js';

const EMPTY = new Uint32Array(0);

/** The pending rows of every host, by host id. */
export class RowQueues {
  /** Heap position of each row, −1 when the row is not queued. */
  private qpos: Int32Array = new Int32Array(0);
  private heaps: Uint32Array[] = [];
  private sizes: number[] = [];
  /** Rows queued across all hosts. */
  total = 0;
  /** Priority of each host's best row (−∞ when its queue is empty), by host id. */
  topPriority: Float64Array = new Float64Array(64).fill(Number.NEGATIVE_INFINITY);

  constructor(private readonly table: UrlTable) {}

  /** Grows the position column to cover `rows` rows. */
  ensureRows(rows: number): void {
    if (rows <= this.qpos.length) return;
    const next = new Int32Array(Math.max(rows, this.qpos.length * 2, 1024)).fill(-1);
    next.set(this.qpos);
    this.qpos = next;
  }

  /** Registers host ids up to `host`. */
  ensureHost(host: number): void {
    while (this.heaps.length <= host) {
      this.heaps.push(EMPTY);
      this.sizes.push(0);
    }
    if (host >= this.topPriority.length) {
      const next = new Float64Array(Math.max(host + 1, this.topPriority.length * 2)).fill(Number.NEGATIVE_INFINITY);
      next.set(this.topPriority);
      this.topPriority = next;
    }
  }

  /** Whether row `a` goes before row `b`. */
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
    let h = this.heaps[host]!;
    const n = this.sizes[host]!;
    if (n === h.length) {
      const next = new Uint32Array(Math.max(4, h.length * 2));
      next.set(h);
      this.heaps[host] = h = next;
    }
    this.sizes[host] = n + 1;
    this.total++;
    h[n] = row;
    this.qpos[row] = n;
    this.up(h, n);
    this.refreshTop(host);
  }

  private refreshTop(host: number): void {
    this.topPriority[host] = this.sizes[host]! > 0 ? this.table.priority[this.heaps[host]![0]!]! : Number.NEGATIVE_INFINITY;
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

  /** Re-sifts `row` after its priority changed (no-op when not queued). */
  update(row: number): void {
    if (!this.queued(row)) return;
    const host = this.table.host[row]!;
    const h = this.heaps[host]!;
    const i = this.qpos[row]!;
    if (this.up(h, i) === i) this.down(h, this.sizes[host]!, i);
    this.refreshTop(host);
  }

  /** The queued rows of `host` in heap order (a view; do not keep across mutations). */
  rowsOf(host: number): Uint32Array {
    return (this.heaps[host] ?? EMPTY).subarray(0, this.sizes[host] ?? 0);
  }

  /** Rebuilds `host`'s heap after many priorities changed at once. */
  reheap(host: number): void {
    const h = this.heaps[host]!;
    const n = this.sizes[host]!;
    for (let i = (n >> 1) - 1; i >= 0; i--) this.down(h, n, i);
    this.refreshTop(host);
  }

  /** Bytes held (positions and heaps). */
  get memoryBytes(): number {
    let b = this.qpos.byteLength;
    for (const h of this.heaps) b += h.byteLength;
    return b + this.sizes.length * 8;
  }

  private removeAt(host: number, i: number): void {
    const h = this.heaps[host]!;
    const row = h[i]!;
    this.qpos[row] = -1;
    const last = --this.sizes[host]!;
    this.total--;
    if (i !== last) {
      const moved = h[last]!;
      h[i] = moved;
      this.qpos[moved] = i;
      if (this.up(h, i) === i) this.down(h, last, i);
    }
  }

  private up(h: Uint32Array, i: number): number {
    const row = h[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent]!;
      if (!this.better(row, p)) break;
      h[i] = p;
      this.qpos[p] = i;
      i = parent;
    }
    h[i] = row;
    this.qpos[row] = i;
    return i;
  }

  private down(h: Uint32Array, n: number, i: number): void {
    const row = h[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && this.better(h[r]!, h[l]!)) c = r;
      const child = h[c]!;
      if (!this.better(child, row)) break;
      h[i] = child;
      this.qpos[child] = i;
      i = c;
    }
    h[i] = row;
    this.qpos[row] = i;
  }
}
