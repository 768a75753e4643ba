/**
 * NearDup: "is there a page already stored whose content is a near duplicate of this one?",
 * keyed by URLKey — the mirror-collapse and soft-404 query of DESIGN §6, over the wasm
 * `NearDupIndex` (Manku–Jain–Das Sarma permuted tables, exact recall within Hamming 3;
 * core-rs/src/neardup.rs holds the derivation).
 *
 * What this layer adds to the index: one fixed near-dup distance per instance (an option,
 * default `NEAR_DUP_DISTANCE` = 3, the threshold `classifyChange` uses), the dedup reading of
 * a zero simhash — the simhash of an empty or tokenless body, "no signal" (src/dedup/
 * content.ts) — which is never stored and never matched, so empty pages do not collapse into
 * one another, and `findOrAdd`, the collapse decision in one call.
 *
 * Identity follows the index: simhashes are distinct, the first key stored for a simhash
 * keeps it, and `find` answers the earliest-added near entry, so answers are deterministic.
 */
import { type KeyArray, keyCount } from '../core/keys.js';
import { NearDupIndex } from '../core/neardup.js';
import { NEAR_DUP_DISTANCE } from '../core/simhash.js';
import { InvalidArgumentError, UseAfterFreeError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { checkKeyArg } from './args.js';

/** Options of `new NearDup(…)`. */
export interface NearDupOptions {
  /**
   * Largest Hamming distance between two simhashes that makes their pages near duplicates:
   * an integer in [0, 3] (3 is the largest with exact recall), default 3.
   */
  readonly distance: number;
}

const resolveOptions = defineOptions<NearDupOptions>('NearDupOptions', {
  distance: numberField({ min: 0, max: NEAR_DUP_DISTANCE, integer: true, default: NEAR_DUP_DISTANCE }),
});

const U64_MAX = (1n << 64n) - 1n;

function checkSim(what: string, sim: bigint): void {
  if (typeof sim !== 'bigint' || sim < 0n || sim > U64_MAX) {
    throw new InvalidArgumentError(`${what}: expected a simhash as a bigint in [0, 2^64), received ${typeof sim === 'bigint' ? sim : typeof sim}`);
  }
}

/** Simhashes as [lo, hi] u32 lanes, whichever form they came in (checked by the index). */
function lanesOf(sims: BigUint64Array | Uint32Array): Uint32Array {
  return sims instanceof BigUint64Array ? new Uint32Array(sims.buffer, sims.byteOffset, sims.length * 2) : sims;
}

/**
 * A near-duplicate index from simhash to URLKey. Owns wasm memory: call `free()` (or use
 * `using`) when done; any use after that throws `UseAfterFreeError`.
 *
 * @example
 * ```ts
 * using near = new NearDup();
 * const original = near.findOrAdd(simhashText(body), key); // undefined: first of its kind
 * if (original) collapseInto(original);                    // a mirror of an earlier page
 * ```
 */
export class NearDup {
  /** The resolved options. */
  readonly options: Readonly<NearDupOptions>;
  #index: NearDupIndex | undefined;

  /** An empty index. Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<NearDupOptions> | null) {
    this.options = resolveOptions(options);
    this.#index = new NearDupIndex();
  }

  #live(): NearDupIndex {
    const index = this.#index;
    if (index === undefined) throw new UseAfterFreeError('NearDup');
    return index;
  }

  /** The near-dup distance this instance answers for. */
  get distance(): number {
    return this.options.distance;
  }

  /** Number of distinct (non-zero) simhashes stored. */
  get len(): number {
    return this.#live().len;
  }

  /** Bytes of wasm memory the index holds (about 64 per entry once folded). */
  get memoryBytes(): number {
    return this.#live().memoryBytes;
  }

  /**
   * Stores `sim` for key `i` of `keys` (default the first). Returns false — and stores
   * nothing — when the same simhash is already stored (the earlier key keeps it) or when
   * `sim` is 0 (no signal).
   */
  add(sim: bigint, keys: KeyArray, i = 0): boolean {
    const index = this.#live();
    checkSim('NearDup.add', sim);
    checkKeyArg(keys, i, 'NearDup.add');
    return sim !== 0n && index.add(sim, keys, i);
  }

  /**
   * Stores `sims[i]` for key i of `keys` for every i, in one boundary crossing per chunk;
   * zero simhashes and repeats are skipped as in `add`. `sims` is a BigUint64Array or a
   * Uint32Array of [lo, hi] lanes. Returns how many entries were stored.
   */
  addBatch(sims: BigUint64Array | Uint32Array, keys: KeyArray): number {
    const index = this.#live();
    const lanes = lanesOf(sims);
    const n = keyCount(keys);
    if (!(lanes instanceof Uint32Array) || lanes.length !== n * 2) {
      throw new InvalidArgumentError(
        `NearDup.addBatch: expected one simhash per key (${n}), as a BigUint64Array or [lo, hi] u32 lanes, received ${
          lanes instanceof Uint32Array ? `${lanes.length / 2} simhash(es)` : typeof sims
        }`,
      );
    }
    let zeros = 0;
    for (let k = 0; k < n; k++) if ((lanes[2 * k]! | lanes[2 * k + 1]!) === 0) zeros++;
    if (zeros === 0) return index.addBatch(lanes, keys);
    // Drop the no-signal entries, keeping order (so "first key wins" is unchanged).
    const keptSims = new Uint32Array((n - zeros) * 2);
    const keptKeys = new Uint32Array((n - zeros) * 4);
    let j = 0;
    for (let k = 0; k < n; k++) {
      if ((lanes[2 * k]! | lanes[2 * k + 1]!) === 0) continue;
      keptSims.set(lanes.subarray(2 * k, 2 * k + 2), 2 * j);
      keptKeys.set(keys.subarray(4 * k, 4 * k + 4), 4 * j);
      j++;
    }
    return index.addBatch(keptSims, keptKeys);
  }

  /** The key of the earliest-added entry within `distance` of `sim`, as a one-key KeyArray, or undefined. */
  find(sim: bigint): KeyArray | undefined {
    const index = this.#live();
    checkSim('NearDup.find', sim);
    return sim === 0n ? undefined : index.find(sim, this.options.distance);
  }

  /**
   * `find` for many simhashes in one boundary crossing per chunk: `found[i]` is 1 when
   * simhash i has a near entry, whose key is then key i of `keys` (zero lanes otherwise).
   * `sims` is a BigUint64Array or a Uint32Array of [lo, hi] lanes.
   */
  findBatch(sims: BigUint64Array | Uint32Array): { found: Uint8Array; keys: KeyArray } {
    const result = this.#live().findBatch(sims, this.options.distance);
    const lanes = lanesOf(sims);
    for (let k = 0; k < result.found.length; k++) {
      if ((lanes[2 * k]! | lanes[2 * k + 1]!) === 0 && result.found[k] === 1) {
        result.found[k] = 0; // 0 is no signal: never matched, as in `find`
        result.keys.fill(0, 4 * k, 4 * k + 4);
      }
    }
    return result;
  }

  /** Keys of every entry within `distance` of `sim`, earliest-added first (empty for 0). */
  findAll(sim: bigint): KeyArray {
    const index = this.#live();
    checkSim('NearDup.findAll', sim);
    return sim === 0n ? new Uint32Array(0) : index.findAll(sim, this.options.distance);
  }

  /**
   * The collapse decision in one call: the key of the earliest stored page near `sim`, or —
   * when there is none — undefined, after storing `sim` for key `i` of `keys`. A zero
   * simhash is never near anything and is not stored.
   */
  findOrAdd(sim: bigint, keys: KeyArray, i = 0): KeyArray | undefined {
    const index = this.#live();
    checkSim('NearDup.findOrAdd', sim);
    checkKeyArg(keys, i, 'NearDup.findOrAdd');
    if (sim === 0n) return undefined;
    const near = index.find(sim, this.options.distance);
    if (near === undefined) index.add(sim, keys, i);
    return near;
  }

  /** Folds pending entries into the sorted tables now (queries do it on their own when needed). */
  flush(): void {
    this.#live().flush();
  }

  /** Whether `free()` has been called. */
  get freed(): boolean {
    return this.#index === undefined;
  }

  /** Releases the index's wasm memory. Idempotent; any later use throws `UseAfterFreeError`. */
  free(): void {
    const index = this.#index;
    this.#index = undefined;
    index?.free();
  }

  /** Same as `free()`, so `using near = new NearDup()` releases at scope exit. */
  [Symbol.dispose](): void {
    this.free();
  }
}
