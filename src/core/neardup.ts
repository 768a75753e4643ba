/**
 * NearDupIndex: "is there a stored page whose simhash is within Hamming distance 3 of this
 * one?" over a growing set, with exact recall (DESIGN §6) — the mirror-collapse and soft-404
 * query.
 *
 * Manku–Jain–Das Sarma permuted tables: the 64 bits are four 16-bit blocks; two simhashes
 * within distance 3 agree on at least one whole block (pigeonhole), so four sorted copies,
 * each led by a different block, find every match with four short range scans. Entries are
 * added to a pending list that queries scan directly and that is folded into the sorted
 * copies lazily, so adding is cheap and a `find` right after an `add` is still exact. The
 * derivation is in core-rs/src/neardup.rs.
 *
 * Identity: the index holds distinct simhashes. Adding a simhash already present keeps the
 * first key (`add` returns false), so `len` counts distinct simhashes. `find` returns the key
 * of the earliest-added match, as a one-key `KeyArray`, so answers are deterministic.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { core } from './instance.js';
import { type KeyArray, keyCount } from './keys.js';
import { u64Lanes } from './lanes.js';
import { Resident, stageKeys } from './resident.js';
import { NEAR_DUP_DISTANCE } from './simhash.js';

/** Entries staged per wasm call (24 bytes each: 12 MiB of scratch). */
const CHUNK = 1 << 19;

const releaseIndex = (h: number): void => core().exports.meguri_neardup_free(h);

function checkK(what: string, k: number): void {
  if (!Number.isInteger(k) || k < 0 || k > NEAR_DUP_DISTANCE) {
    throw new InvalidArgumentError(`${what}: k must be an integer in [0, 3] (the largest distance with exact recall), received ${k}`);
  }
}

/** Simhashes as u32 lanes (2 per simhash) whatever form they came in. */
function simLanes(what: string, sims: BigUint64Array | Uint32Array): Uint32Array {
  if (sims instanceof BigUint64Array) return new Uint32Array(sims.buffer, sims.byteOffset, sims.length * 2);
  if (sims instanceof Uint32Array && sims.length % 2 === 0) return sims;
  throw new InvalidArgumentError(
    `${what}: expected simhashes as a BigUint64Array or a Uint32Array of [lo, hi] lanes (even length), received ${
      sims instanceof Uint32Array ? `a Uint32Array of length ${sims.length}` : typeof sims
    }`,
  );
}

/**
 * A near-duplicate index of (simhash → URLKey), in wasm memory. Owns its memory: call
 * `free()` (or use `using`) when done.
 *
 * @example
 * ```ts
 * using index = new NearDupIndex();
 * index.addBatch(simhashes, keys);
 * const original = index.find(simhashText(body)); // KeyArray of one key, or undefined
 * ```
 */
export class NearDupIndex extends Resident {
  /** Creates an empty index. */
  constructor() {
    super(core().exports.meguri_neardup_new(), 'NearDupIndex', releaseIndex);
  }

  /** Number of distinct simhashes stored. */
  get len(): number {
    return core().exports.meguri_neardup_len(this.handle) >>> 0;
  }

  /** Bytes of wasm memory the index holds (about 64 per entry once folded). */
  get memoryBytes(): number {
    return core().exports.meguri_neardup_memory_bytes(this.handle) >>> 0;
  }

  /**
   * Stores `sim` with key `i` of `keys`. Returns false (and keeps the earlier key) when the
   * same simhash is already stored.
   */
  add(sim: bigint, keys: KeyArray, i = 0): boolean {
    const n = keyCount(keys);
    if (!Number.isInteger(i) || i < 0 || i >= n) {
      throw new InvalidArgumentError(`NearDupIndex.add: key index ${i} is out of range for ${n} key(s)`);
    }
    const [lo, hi] = u64Lanes(sim, 'NearDupIndex.add: sim');
    const h = this.handle;
    const c = core();
    const base = c.scratch(32);
    stageKeys(keys, i, 1, base);
    const u32 = c.u32;
    u32[(base + 16) >>> 2] = lo;
    u32[(base + 20) >>> 2] = hi;
    return c.exports.meguri_neardup_add_batch(h, base + 16, base, 1, 0) === 1;
  }

  /**
   * Stores `sims[i]` with key i of `keys` for every i (first key wins for a repeated
   * simhash). `sims` is a BigUint64Array or a Uint32Array of [lo, hi] lanes. Returns how many
   * entries were stored.
   */
  addBatch(sims: BigUint64Array | Uint32Array, keys: KeyArray): number {
    const lanes = simLanes('NearDupIndex.addBatch', sims);
    const n = keyCount(keys);
    if (lanes.length !== n * 2) {
      throw new InvalidArgumentError(`NearDupIndex.addBatch: ${lanes.length / 2} simhashes for ${n} keys; expected one per key`);
    }
    const h = this.handle;
    const c = core();
    let stored = 0;
    for (let from = 0; from < n; from += CHUNK) {
      const count = Math.min(CHUNK, n - from);
      const base = c.scratch(count * 24);
      const simPtr = base + count * 16;
      stageKeys(keys, from, count, base);
      c.u32.set(lanes.subarray(from * 2, (from + count) * 2), simPtr >>> 2);
      stored += c.exports.meguri_neardup_add_batch(h, simPtr, base, count, 0) >>> 0;
    }
    return stored;
  }

  /** The key of the earliest-added entry within distance `k` (default 3) of `sim`, or undefined. */
  find(sim: bigint, k: number = NEAR_DUP_DISTANCE): KeyArray | undefined {
    checkK('NearDupIndex.find', k);
    const [lo, hi] = u64Lanes(sim, 'NearDupIndex.find: sim');
    const h = this.handle;
    const c = core();
    const base = c.scratch(32);
    const u32 = c.u32;
    u32[(base + 16) >>> 2] = lo;
    u32[(base + 20) >>> 2] = hi;
    c.exports.meguri_neardup_find_batch(h, base + 16, 1, k, base, base + 24);
    if (c.u8[base + 24] !== 1) return undefined;
    return c.u32.slice(base >>> 2, (base >>> 2) + 4);
  }

  /**
   * `find` for many simhashes in one call: `found[i]` is 1 when simhash i has a near entry,
   * whose key is then key i of `keys`; otherwise key i is zero.
   */
  findBatch(sims: BigUint64Array | Uint32Array, k: number = NEAR_DUP_DISTANCE): { found: Uint8Array; keys: KeyArray } {
    checkK('NearDupIndex.findBatch', k);
    const lanes = simLanes('NearDupIndex.findBatch', sims);
    const n = lanes.length / 2;
    const found = new Uint8Array(n);
    const keys = new Uint32Array(n * 4);
    const h = this.handle;
    const c = core();
    for (let from = 0; from < n; from += CHUNK) {
      const count = Math.min(CHUNK, n - from);
      // Layout: keys out (16·count) | simhashes (8·count) | found (count).
      const base = c.scratch(count * 25);
      const simPtr = base + count * 16;
      const foundPtr = simPtr + count * 8;
      c.u32.fill(0, base >>> 2, (base >>> 2) + count * 4);
      c.u32.set(lanes.subarray(from * 2, (from + count) * 2), simPtr >>> 2);
      c.exports.meguri_neardup_find_batch(h, simPtr, count, k, base, foundPtr);
      keys.set(c.u32.subarray(base >>> 2, (base >>> 2) + count * 4), from * 4);
      found.set(c.u8.subarray(foundPtr, foundPtr + count), from);
    }
    return { found, keys };
  }

  /** Keys of every entry within distance `k` (default 3) of `sim`, earliest-added first. */
  findAll(sim: bigint, k: number = NEAR_DUP_DISTANCE): KeyArray {
    checkK('NearDupIndex.findAll', k);
    const [lo, hi] = u64Lanes(sim, 'NearDupIndex.findAll: sim');
    const h = this.handle;
    const c = core();
    const count = c.exports.meguri_neardup_find_all(h, lo, hi, k) >>> 0;
    const ptr = c.exports.meguri_neardup_out_ptr(h) >>> 2;
    return c.u32.slice(ptr, ptr + count * 4);
  }

  /**
   * Folds pending entries into the sorted tables now. Queries do this on their own when the
   * pending list grows past about 4·√len; call it to pay the cost at a moment of your choosing.
   */
  flush(): void {
    core().exports.meguri_neardup_flush(this.handle);
  }
}
