/**
 * The frontier's exact URLKey → row index: an open-addressed hash table of row ids whose keys
 * are read from the URL table's `key` column, not stored again.
 *
 * Why not the seen-set's `DrumSet`: it keeps each key's 16 bytes, a payload and a tag in wasm
 * lines (≈ 30 bytes per key at 1M), while every key it held is already in the table. Here a
 * slot is the row id (4 bytes) plus a one-byte tag, so a key costs 5 bytes over the load
 * factor (kept in [0.57, 0.85): 5.9–8.8 bytes per key). Measured on the frontier bench's 1M
 * URLs: 30.3 → 6–9 bytes per URL.
 *
 * Linear probing over the tags: a miss (most of intake) reads tags until an empty one, in one
 * or two cache lines; only a tag match (1 in 255 for a wrong key) reads the table's key lanes.
 * Removal (`remove`, by tombstone) is for the spill tier, whose rows leave for disk and are reused. Growth is ×1.5 past 0.85 full and
 * rehashes every row from the key column.
 *
 * ```
 *  tags:  [0 |t7|0 |t2|t2|0 …]   0 = empty; 255 = removed; t = 1 + (key mix mod 254)
 *  rows:  [· |r7|· |r2|r9|· …]   the row whose key hashes here (or probed on from its home)
 *                 └─► table.key[4·row …] ─ compared lane by lane on a tag match
 * ```
 */
import type { KeyArray } from '../core/keys.js';
import type { UrlTable } from './table.js';

/** Load factor past which the table grows. */
const MAX_LOAD = 0.85;
/** Live load a rebuild that drops tombstones leaves at most. */
const REBUILD_LOAD = 0.6;
const MIN_CAP = 64;

/** Home hash of a key (lanes hostLo, hostHi, pathLo, pathHi): a u32. */
function homeHash(k: KeyArray, b: number): number {
  let h = Math.imul(k[b + 2]! ^ Math.imul(k[b]!, 0x9e3779b1), 0x85ebca6b) ^ k[b + 3]!;
  h ^= h >>> 15;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 13)) >>> 0;
}

/**
 * Home slot of a key in a table of `cap` slots: the hash scaled to [0, cap) (any capacity, so
 * growth can be ×1.5). h / 2^32 is exact and below 1 by at least 2^−32, more than the
 * product's rounding error, so the result stays below `cap`.
 */
function home(k: KeyArray, b: number, cap: number): number {
  return Math.floor((homeHash(k, b) / 0x1_0000_0000) * cap);
}

/** The tag of a removed entry's slot (a tombstone: probing goes on past it). */
const TOMB = 255;

/** One-byte tag of a key, never 0 (an empty slot) nor `TOMB`. */
function tagOf(k: KeyArray, b: number): number {
  return 1 + (((k[b + 3]! ^ k[b + 1]!) >>> 0) % 254);
}

/** The exact key → row index over a URL table's key column (see the module comment). */
export class RowIndex {
  private tags: Uint8Array;
  private slots: Uint32Array;
  private cap: number;
  /** Keys held. */
  len = 0;
  /** Tombstones (removed entries' slots), dropped by the next rebuild. */
  private tombs = 0;

  constructor(private readonly table: UrlTable, capacity = MIN_CAP) {
    this.cap = Math.max(MIN_CAP, Math.ceil(capacity / MAX_LOAD) + 1);
    this.tags = new Uint8Array(this.cap);
    this.slots = new Uint32Array(this.cap);
  }

  /** The index of a table's first `rows` rows (their keys distinct, as a valid table's are). */
  static ofRows(table: UrlTable, rows: number): RowIndex {
    const idx = new RowIndex(table, rows);
    const k = table.key;
    for (let r = 0; r < rows; r++) idx.place(k, r * 4, r);
    idx.len = rows;
    return idx;
  }

  /** Bytes held (tags and slots). */
  get memoryBytes(): number {
    return this.tags.byteLength + this.slots.byteLength;
  }

  /** Whether the last `find` found its key. */
  private found = false;

  /**
   * Slot of the key at lane `b` of `k`: where it is, or the slot where it would go — the first
   * tombstone on its probe path, else the empty slot ending it (then `found` is false).
   */
  private find(k: KeyArray, b: number): number {
    const tags = this.tags;
    const cap = this.cap;
    const tag = tagOf(k, b);
    let i = home(k, b, cap);
    const tk = this.table.key;
    const k0 = k[b]!;
    const k1 = k[b + 1]!;
    const k2 = k[b + 2]!;
    const k3 = k[b + 3]!;
    let tomb = -1;
    for (;;) {
      const t = tags[i]!;
      if (t === 0) {
        this.found = false;
        return tomb >= 0 ? tomb : i;
      }
      if (t === tag) {
        const r = this.slots[i]! * 4;
        if (tk[r + 2] === k2 && tk[r + 3] === k3 && tk[r] === k0 && tk[r + 1] === k1) {
          this.found = true;
          return i;
        }
      } else if (t === TOMB && tomb < 0) {
        tomb = i;
      }
      if (++i === cap) i = 0;
    }
  }

  /** Puts `row` (key at lane `b` of `k`, known absent) in its slot; no growth, no count. */
  private place(k: KeyArray, b: number, row: number): void {
    const tags = this.tags;
    const cap = this.cap;
    let i = home(k, b, cap);
    while (tags[i] !== 0) if (++i === cap) i = 0;
    tags[i] = tagOf(k, b);
    this.slots[i] = row;
  }

  /**
   * Room for `n` more keys: grows ×1.5 while the live keys would pass the load factor, and
   * rebuilds once tombstones would — to at most `REBUILD_LOAD` live, so a quarter of the slots
   * turn over before the next rebuild (removals stay O(1) amortized). Without removals this is
   * the plain ×1.5 growth.
   */
  private grow(n: number): void {
    if (this.len + this.tombs + n <= this.cap * MAX_LOAD) return;
    const load = this.tombs > 0 ? REBUILD_LOAD : MAX_LOAD;
    let cap = this.cap;
    while (this.len + n > cap * load) cap = Math.ceil(cap * 1.5);
    this.tombs = 0;
    const oldTags = this.tags;
    const oldSlots = this.slots;
    this.cap = cap;
    this.tags = new Uint8Array(cap);
    this.slots = new Uint32Array(cap);
    const k = this.table.key;
    for (let i = 0; i < oldTags.length; i++) {
      if (oldTags[i] === 0 || oldTags[i] === TOMB) continue;
      const r = oldSlots[i]!;
      this.place(k, r * 4, r);
    }
  }

  /** The row of key `i` of `keys`, or undefined. */
  get(keys: KeyArray, i = 0): number | undefined {
    const s = this.find(keys, i * 4);
    return this.found ? this.slots[s]! : undefined;
  }

  /** Rows of every key of `keys` into `out` (`missing` for an absent key); returns `out`. */
  getBatch(keys: KeyArray, out: Uint32Array, missing: number): Uint32Array {
    const n = keys.length >>> 2;
    for (let i = 0; i < n; i++) {
      const s = this.find(keys, i * 4);
      out[i] = this.found ? this.slots[s]! : missing;
    }
    return out;
  }

  /**
   * Inserts key i ↦ `rows[i]` for every absent key (present keys keep their row), each row's
   * key being already in the table's key column. Returns how many were new.
   */
  insertBatch(keys: KeyArray, rows: Uint32Array): number {
    const n = keys.length >>> 2;
    this.grow(n);
    let fresh = 0;
    for (let i = 0; i < n; i++) {
      const s = this.find(keys, i * 4);
      if (this.found) continue;
      if (this.tags[s] === TOMB) this.tombs--;
      this.tags[s] = tagOf(keys, i * 4);
      this.slots[s] = rows[i]!;
      fresh++;
    }
    this.len += fresh;
    return fresh;
  }

  /**
   * Removes the key at key index `i` of `keys` (the spill tier, when a row leaves for disk);
   * returns whether it was held. Its slot becomes a tombstone (probes go on past it, an insert
   * reuses it), dropped at the next rebuild: a backward shift instead read the key of every
   * later entry of the probe run, a cache miss each, and was a tenth of a budgeted intake.
   */
  remove(keys: KeyArray, i: number): boolean {
    const s = this.find(keys, i * 4);
    if (!this.found) return false;
    this.tags[s] = TOMB;
    this.tombs++;
    this.len--;
    return true;
  }

  /**
   * Removes every key whose row's `status` is `value`, in one sweep over the slots; returns
   * how many. For the spill tier, whose shed pass vacates thousands of rows at once: a probe
   * per row (`remove`) was half the cost of vacating one (two cache misses, tag and slot), the
   * sweep reads the tags and slots in order and the status column (a byte a row).
   */
  removeWhere(status: Uint8Array, value: number): number {
    const tags = this.tags;
    const slots = this.slots;
    let n = 0;
    for (let i = 0; i < this.cap; i++) {
      const t = tags[i]!;
      if (t === 0 || t === TOMB || status[slots[i]!] !== value) continue;
      tags[i] = TOMB;
      n++;
    }
    this.tombs += n;
    this.len -= n;
    return n;
  }

  /** Slots (the cost of `removeWhere`). */
  get capacity(): number {
    return this.cap;
  }

  /**
   * Every held row in URLKey order (HostKey high, low, PathKey high, low lanes, unsigned), as
   * the payloads of a `DrumSet.exportSorted` (the checkpoint's call). Rows are bucketed by the
   * top 16 bits of HostKey high in one pass in row order (the key column read sequentially),
   * each row's key copied beside it, then each bucket (about one host's rows) sorted on those
   * copies. Measured at 1M rows: an 8-pass LSD radix sort reading keys by row id took 5–9×
   * longer, and comparison sorts reading the key column a cache miss per comparison 2–3×.
   */
  exportSorted(): { payloads: Uint32Array } {
    // The held rows in increasing order, from a bitmap of them (no sort).
    const k = this.table.key;
    const held = new Uint8Array(k.length >>> 2);
    for (let i = 0; i < this.cap; i++) if (this.tags[i] !== 0 && this.tags[i] !== TOMB) held[this.slots[i]!] = 1;
    const rows = new Uint32Array(this.len);
    let m = 0;
    for (let r = 0; r < held.length; r++) if (held[r] !== 0) rows[m++] = r;
    const start = new Uint32Array(65537);
    for (let i = 0; i < m; i++) start[(k[rows[i]! * 4 + 1]! >>> 16) + 1]!++;
    for (let d = 0; d < 65536; d++) start[d + 1]! += start[d]!;
    const next = start.slice(0, 65536);
    const out = new Uint32Array(m);
    const ks = new Uint32Array(m * 4);
    for (let i = 0; i < m; i++) {
      const r = rows[i]!;
      const at = next[k[r * 4 + 1]! >>> 16]!++;
      out[at] = r;
      ks[at * 4] = k[r * 4 + 1]!;
      ks[at * 4 + 1] = k[r * 4]!;
      ks[at * 4 + 2] = k[r * 4 + 3]!;
      ks[at * 4 + 3] = k[r * 4 + 2]!;
    }
    for (let d = 0; d < 65536; d++) if (start[d + 1]! - start[d]! > 1) sortByKey(out, ks, start[d]!, start[d + 1]!);
    return { payloads: out };
  }

  /** Nothing to release (the index is plain typed arrays); kept for the index's owner. */
  free(): void {}
}

/** Whether entry a precedes entry b: `ks` holds each entry's lanes in comparison order. */
function less(ks: Uint32Array, a: number, b: number): boolean {
  const x = a * 4;
  const y = b * 4;
  return (ks[x]! - ks[y]! || ks[x + 1]! - ks[y + 1]! || ks[x + 2]! - ks[y + 2]! || ks[x + 3]! - ks[y + 3]!) < 0;
}

/** Swaps entries i and j (row and key lanes). */
function swap(rows: Uint32Array, ks: Uint32Array, i: number, j: number): void {
  const t = rows[i]!;
  rows[i] = rows[j]!;
  rows[j] = t;
  for (let l = 0; l < 4; l++) {
    const u = ks[i * 4 + l]!;
    ks[i * 4 + l] = ks[j * 4 + l]!;
    ks[j * 4 + l] = u;
  }
}

/**
 * Sorts entries [lo, hi) (rows and their key lanes) by key: quicksort on the middle entry
 * (keys are distinct) down to runs of 16, then insertion sort by swaps. Inline comparisons on
 * the bucket's own key copies: no comparator call and no cache miss per comparison.
 */
function sortByKey(rows: Uint32Array, ks: Uint32Array, lo: number, hi: number): void {
  while (hi - lo > 16) {
    // Park the pivot at lo, partition (lo, hi) around it, put it at its place.
    swap(rows, ks, lo, (lo + hi) >>> 1);
    let i = lo + 1;
    let j = hi - 1;
    for (;;) {
      while (i <= j && less(ks, i, lo)) i++;
      while (i <= j && less(ks, lo, j)) j--;
      if (i >= j) break;
      swap(rows, ks, i++, j--);
    }
    swap(rows, ks, lo, j);
    // [lo, j) < pivot at j < (j, hi): recurse on the smaller side, loop on the larger.
    if (j - lo < hi - j - 1) {
      sortByKey(rows, ks, lo, j);
      lo = j + 1;
    } else {
      sortByKey(rows, ks, j + 1, hi);
      hi = j;
    }
  }
  for (let i = lo + 1; i < hi; i++) for (let j = i; j > lo && less(ks, j, j - 1); j--) swap(rows, ks, j, j - 1);
}
