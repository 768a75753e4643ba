/**
 * A binary min-heap of (time, page) pairs in typed arrays: the simulator's event queue.
 * Ties break by page index, so every run pops in the same order.
 */
export class DueHeap {
  #time: Float64Array;
  #page: Int32Array;
  #size = 0;

  constructor(capacity: number) {
    this.#time = new Float64Array(Math.max(1, capacity));
    this.#page = new Int32Array(Math.max(1, capacity));
  }

  get size(): number {
    return this.#size;
  }

  /** Earliest time in the heap (Infinity when empty). */
  peekTime(): number {
    return this.#size > 0 ? this.#time[0]! : Number.POSITIVE_INFINITY;
  }

  push(time: number, page: number): void {
    if (this.#size === this.#time.length) this.#grow();
    let i = this.#size++;
    const t = this.#time;
    const p = this.#page;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (t[parent]! < time || (t[parent] === time && p[parent]! <= page)) break;
      t[i] = t[parent]!;
      p[i] = p[parent]!;
      i = parent;
    }
    t[i] = time;
    p[i] = page;
  }

  /** Removes the earliest entry and returns its page (call peekTime first for its time). */
  pop(): number {
    const t = this.#time;
    const p = this.#page;
    const top = p[0]!;
    const n = --this.#size;
    if (n === 0) return top;
    const time = t[n]!;
    const page = p[n]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && (t[c + 1]! < t[c]! || (t[c + 1] === t[c] && p[c + 1]! < p[c]!))) c++;
      if (time < t[c]! || (time === t[c] && page <= p[c]!)) break;
      t[i] = t[c]!;
      p[i] = p[c]!;
      i = c;
    }
    t[i] = time;
    p[i] = page;
    return top;
  }

  #grow(): void {
    const t = new Float64Array(this.#time.length * 2);
    const p = new Int32Array(this.#page.length * 2);
    t.set(this.#time);
    p.set(this.#page);
    this.#time = t;
    this.#page = p;
  }
}
