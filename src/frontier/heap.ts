/**
 * Indexed binary heaps over small integer ids, the scheduler's priority structures.
 *
 * Each id is in a heap at most once and its position is tracked, so a changed key is
 * re-sifted in O(log n) (`update`) and an id is removed from the middle (`remove`) without
 * leaving stale entries behind. No stale entries means the heap's contents are a pure
 * function of the ids' current keys: two schedulers with equal state pop in equal order,
 * which recovery relies on. The order is the strict total order `before(a, b)` the owner
 * supplies (every comparison ends in a key tie-break, so equal keys never occur).
 */

/** An indexed min-heap of ids in [0, 2^31) under a strict total order. */
export class IdHeap {
  private heap: Int32Array = new Int32Array(16);
  private pos: Int32Array = new Int32Array(16).fill(-1);
  /** Number of ids in the heap. */
  size = 0;

  /** `before(a, b)`: a pops before b. Must be a strict total order on the ids present. */
  constructor(private readonly before: (a: number, b: number) => boolean) {}

  /** Whether `id` is in the heap. */
  has(id: number): boolean {
    return id < this.pos.length && this.pos[id]! >= 0;
  }

  /** The id that pops next, or −1 when empty. */
  peek(): number {
    return this.size > 0 ? this.heap[0]! : -1;
  }

  /** Inserts `id`, or re-sifts it when already present. */
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
    if (this.size === this.heap.length) {
      const h = new Int32Array(this.heap.length * 2);
      h.set(this.heap);
      this.heap = h;
    }
    const i = this.size++;
    this.heap[i] = id;
    this.pos[id] = i;
    this.up(i);
  }

  /** Removes and returns the first id, or −1 when empty. */
  pop(): number {
    if (this.size === 0) return -1;
    const top = this.heap[0]!;
    this.removeAt(0);
    return top;
  }

  /** Removes `id` if present. */
  remove(id: number): void {
    if (this.has(id)) this.removeAt(this.pos[id]!);
  }

  /** Restores the heap order after `id`'s key changed (no-op when absent). */
  update(id: number): void {
    if (!this.has(id)) return;
    const i = this.pos[id]!;
    if (!this.up(i)) this.down(i);
  }

  /** Ids in heap-array order (not sorted); for iteration that does not care about order. */
  ids(): Int32Array {
    return this.heap.subarray(0, this.size);
  }

  /** Empties the heap. */
  clear(): void {
    for (let i = 0; i < this.size; i++) this.pos[this.heap[i]!] = -1;
    this.size = 0;
  }

  private removeAt(i: number): void {
    const id = this.heap[i]!;
    this.pos[id] = -1;
    const last = --this.size;
    if (i !== last) {
      const moved = this.heap[last]!;
      this.heap[i] = moved;
      this.pos[moved] = i;
      if (!this.up(i)) this.down(i);
    }
  }

  private up(i: number): boolean {
    const h = this.heap;
    const id = h[i]!;
    const start = i;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent]!;
      if (!this.before(id, p)) break;
      h[i] = p;
      this.pos[p] = i;
      i = parent;
    }
    h[i] = id;
    this.pos[id] = i;
    return i !== start;
  }

  private down(i: number): void {
    const h = this.heap;
    const n = this.size;
    const id = h[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && this.before(h[r]!, h[l]!)) c = r;
      const child = h[c]!;
      if (!this.before(child, id)) break;
      h[i] = child;
      this.pos[child] = i;
      i = c;
    }
    h[i] = id;
    this.pos[id] = i;
  }
}
