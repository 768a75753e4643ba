/**
 * The spill tier's record of where each host's spilled rows are: one entry per extent (file,
 * offset, bytes, rows, best priority), chained per host, all in typed arrays. An object per
 * extent cost ~50 B of JS heap per spilled URL at 1M URLs (bench/suites/disk.bench.mjs); an
 * entry here is 36 B per extent, an extent holding many rows.
 */
import type { ExtentAt } from './spill.js';

/** Host chains of extents in typed arrays (a slot per extent, −1 ends a chain). */
export class ExtentPool {
  file = new Uint32Array(1024);
  offset = new Float64Array(1024);
  bytes = new Uint32Array(1024);
  count = new Uint32Array(1024);
  top = new Float32Array(1024);
  /** Offset of the extent's keys in its segment's key log. */
  keys = new Float64Array(1024);
  private next = new Int32Array(1024);
  /** First slot of each host's chain, by host id. */
  private head = new Int32Array(64).fill(-1);
  /**
   * The best top priority of each host's extents (−∞ when it has none), by host id: what
   * `SpillTier.topUp` compares with the resident queue's best after every pop of the host's
   * queue (and when the host gives up its slot), so that check reads one number instead of
   * walking the chain (a large site's host holds thousands: 3,041 after 20,000 dispatches of the
   * review's one-host site under 1 MiB). f32, as `top`. Like `top`, it is the priorities as
   * written: neither a later OPIC credit nor a new host score (`importHostSignal`) moves it.
   */
  private bestTop = new Float32Array(64).fill(Number.NEGATIVE_INFINITY);
  private freeSlot = -1;
  private used = 0;
  /** Extents held. */
  size = 0;

  /** Adds an extent to host `host`'s chain; returns its slot. */
  add(host: number, at: ExtentAt, count: number, top: number): number {
    if (host >= this.head.length) {
      const n = Math.max(host + 1, this.head.length * 2);
      const h = new Int32Array(n).fill(-1);
      h.set(this.head);
      this.head = h;
      const b = new Float32Array(n).fill(Number.NEGATIVE_INFINITY);
      b.set(this.bestTop);
      this.bestTop = b;
    }
    let slot = this.freeSlot;
    if (slot >= 0) this.freeSlot = this.next[slot]!;
    else {
      if (this.used === this.file.length) this.grow();
      slot = this.used++;
    }
    this.file[slot] = at.file;
    this.offset[slot] = at.offset;
    this.bytes[slot] = at.bytes;
    this.count[slot] = count;
    this.top[slot] = top;
    this.keys[slot] = at.keys;
    this.next[slot] = this.head[host]!;
    this.head[host] = slot;
    if (this.top[slot]! > this.bestTop[host]!) this.bestTop[host] = this.top[slot]!;
    this.size++;
    return slot;
  }

  /** The best top priority of host `host`'s extents; −∞ when it has none. */
  topOf(host: number): number {
    return host < this.bestTop.length ? this.bestTop[host]! : Number.NEGATIVE_INFINITY;
  }

  /** The slot of host `host`'s extent with the best top priority (the host has one); still linked. */
  best(host: number): number {
    let best = this.head[host]!;
    for (let s = this.next[best]!; s >= 0; s = this.next[s]!) if (this.top[s]! > this.top[best]!) best = s;
    return best;
  }

  /**
   * Unlinks slot `slot` from host `host`'s chain (valid until `release`). Apart from `best` so a
   * caller reads the extent before it leaves the chain: a failed read leaves the pool as it was.
   */
  unlink(host: number, slot: number): void {
    // One walk finds the slot's predecessor (−1: it is the head) and the best top of the rest.
    let top = Number.NEGATIVE_INFINITY;
    let prev = -1;
    for (let p = -1, s = this.head[host]!; s >= 0; p = s, s = this.next[s]!) {
      if (s === slot) prev = p;
      else if (this.top[s]! > top) top = this.top[s]!;
    }
    if (prev < 0) this.head[host] = this.next[slot]!;
    else this.next[prev] = this.next[slot]!;
    this.bestTop[host] = top;
    this.size--;
  }

  /** Where slot `slot`'s extent is. */
  at(slot: number): ExtentAt {
    return { file: this.file[slot]!, offset: this.offset[slot]!, bytes: this.bytes[slot]!, keys: this.keys[slot]! };
  }

  /** Returns a slot `unlink` took out of its chain to the free list. */
  release(slot: number): void {
    this.next[slot] = this.freeSlot;
    this.freeSlot = slot;
  }

  /** The slots of host `host`'s chain. */
  slotsOf(host: number): number[] {
    const out: number[] = [];
    if (host < this.head.length) for (let s = this.head[host]!; s >= 0; s = this.next[s]!) out.push(s);
    return out;
  }

  /** Hosts that may have a chain (ids below it). */
  get hostSpan(): number {
    return this.head.length;
  }

  get memoryBytes(): number {
    return this.file.length * 36 + this.head.byteLength + this.bestTop.byteLength;
  }

  private grow(): void {
    // ×1.5: at a window of 4 an extent holds 8 rows, and doubling left up to 9 B a spilled URL idle.
    const n = Math.ceil(this.file.length * 1.5);
    const g = <T extends Uint32Array | Float64Array | Float32Array | Int32Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a as never);
      return b;
    };
    this.file = g(this.file, (k) => new Uint32Array(k));
    this.offset = g(this.offset, (k) => new Float64Array(k));
    this.bytes = g(this.bytes, (k) => new Uint32Array(k));
    this.count = g(this.count, (k) => new Uint32Array(k));
    this.top = g(this.top, (k) => new Float32Array(k));
    this.keys = g(this.keys, (k) => new Float64Array(k));
    this.next = g(this.next, (k) => new Int32Array(k));
  }
}
