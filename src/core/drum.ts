/**
 * DrumSet: the exact URLKey set with a u32 payload per key (a row id), resident in wasm.
 *
 * The seen-set's exact tier behind the Bloom filter and the frontier's key → row index
 * (DESIGN §6). Keys are bucketed by the high bits of their HostKey, so a host's keys share a
 * bucket; each bucket is an open-addressed hash table of 128-byte lines (six keys with their
 * payloads and tags per line), grown by half when it passes 7/8 full. A merge, a lookup or an
 * insert reads about one line per key whatever the set's size, and a key is moved at most
 * about three times over its life (growth rehashes one bucket at a time). The name is
 * historical: the set began as IRLbot's DRUM (sorted runs merged per batch), which in memory
 * slowed with the set's size (223 ns/key at 1M, 781 at 10M); the derivation, the measured
 * alternatives and the element-move and line-read bounds its tests hold are in
 * core-rs/src/drum.rs.
 *
 * Ordered export sorts one bucket at a time, so checkpoints (`exportSorted`, `fromSorted`)
 * keep their URLKey order and bytes. Every batch method takes a packed `KeyArray` (4 u32
 * lanes per key) and crosses the wasm boundary once per chunk of up to 2^20 keys.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { customField, defineOptions, numberField } from '../options/index.js';
import { core } from './instance.js';
import { type KeyArray, keyCount, keyToHex } from './keys.js';
import { Resident, stageKeys } from './resident.js';

/** Options of `new DrumSet(…)`. */
export interface DrumSetOptions {
  /**
   * Bucket count, a power of two in [1, 65536] (default 256). Key k lands in bucket
   * `HostKey(k) >> (64 − log2(buckets))`. Each bucket's table grows on its own, so more
   * buckets make each growth step smaller (36 bytes of header per bucket).
   */
  buckets: number;
  /**
   * Keys to size the tables for up front, an integer in [0, 2³²), default 0 (grow from
   * empty). A set that stays within its plan writes each key about once instead of ≈ 3
   * times (no rehash as it grows); the tables are allocated at once, about 21 bytes per
   * planned key. More keys than planned are fine: the tables then grow as usual.
   */
  expectedKeys: number;
}

const isBucketCount = (v: unknown): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65536 && (v & (v - 1)) === 0;

const resolveOptions = defineOptions<DrumSetOptions>('DrumSet', {
  buckets: customField('a power of two in [1, 65536]', isBucketCount, () => 256),
  expectedKeys: numberField({ min: 0, max: 2 ** 32 - 1, integer: true, default: 0 }),
});

/** Keys staged per wasm call: 2^20 keys is 21 MiB of scratch (keys, payloads, verdicts). */
const CHUNK = 1 << 20;

/** The value `getBatch` writes for an absent key unless told otherwise. */
export const DRUM_MISSING = 0xffffffff;

const releaseDrum = (h: number): void => core().exports.meguri_drum_free(h);

function checkPayloads(what: string, payloads: Uint32Array | undefined, n: number): void {
  if (payloads === undefined) return;
  if (!(payloads instanceof Uint32Array) || payloads.length !== n) {
    throw new InvalidArgumentError(
      `${what}: expected payloads as a Uint32Array of ${n} values (one per key), received ${
        payloads instanceof Uint32Array ? `length ${payloads.length}` : typeof payloads
      }`,
    );
  }
}

function checkIndex(what: string, keys: KeyArray, i: number): void {
  const n = keyCount(keys);
  if (!Number.isInteger(i) || i < 0 || i >= n) {
    throw new InvalidArgumentError(`${what}: key index ${i} is out of range for ${n} key(s)`);
  }
}

/**
 * An exact set of URLKeys with a u32 payload each, in wasm memory. Owns its memory: call
 * `free()` (or use `using`) when done.
 *
 * @example
 * ```ts
 * using set = new DrumSet();
 * const verdicts = set.merge(keys, rowIds); // 1 = new (inserted), 0 = seen before
 * ```
 */
export class DrumSet extends Resident {
  /** The resolved options. */
  readonly options: Readonly<DrumSetOptions>;

  /** Creates an empty set. Throws `InvalidArgumentError` on a bad bucket count. */
  constructor(options?: Partial<DrumSetOptions>) {
    const resolved = resolveOptions(options);
    const bits = Math.log2(resolved.buckets);
    const ex = core().exports;
    const h = resolved.expectedKeys === 0 ? ex.meguri_drum_new(bits) : ex.meguri_drum_new_planned(bits, resolved.expectedKeys);
    if (h === 0) throw new InvalidArgumentError(`DrumSet: the core refused ${resolved.buckets} buckets`);
    super(h, 'DrumSet', releaseDrum);
    this.options = resolved;
  }

  /** Number of distinct keys held. */
  get len(): number {
    return core().exports.meguri_drum_len(this.handle) >>> 0;
  }

  /** Bytes of wasm memory the set holds (table capacities and bucket headers), for bytes/key figures. */
  get memoryBytes(): number {
    return core().exports.meguri_drum_memory_bytes(this.handle) >>> 0;
  }

  /**
   * Classifies and inserts a batch. Returns one verdict per key: 1 = new, inserted with its
   * payload (0 when `payloads` is omitted); 0 = already present, payload untouched. A key
   * repeated inside the batch is new only at its first occurrence.
   */
  merge(keys: KeyArray, payloads?: Uint32Array): Uint8Array {
    const n = keyCount(keys);
    checkPayloads('DrumSet.merge', payloads, n);
    const verdicts = new Uint8Array(n);
    this.mergeChunks(keys, payloads, n, verdicts);
    return verdicts;
  }

  /**
   * Inserts every absent key with its payload (default 0); present keys keep theirs. The
   * insert-only form of `merge`, for seed loops and recovery that do not need verdicts.
   * Returns how many keys were new.
   */
  insertBatch(keys: KeyArray, payloads?: Uint32Array): number {
    const n = keyCount(keys);
    checkPayloads('DrumSet.insertBatch', payloads, n);
    return this.mergeChunks(keys, payloads, n, undefined);
  }

  private mergeChunks(keys: KeyArray, payloads: Uint32Array | undefined, n: number, verdicts: Uint8Array | undefined): number {
    const h = this.handle;
    const c = core();
    let added = 0;
    for (let from = 0; from < n; from += CHUNK) {
      const count = Math.min(CHUNK, n - from);
      // Layout: keys (16·count) | payloads (4·count) | verdicts (count).
      const base = c.scratch(count * 21);
      const payPtr = base + count * 16;
      const verdictPtr = payPtr + count * 4;
      stageKeys(keys, from, count, base);
      if (payloads) c.u32.set(payloads.subarray(from, from + count), payPtr >>> 2);
      added += c.exports.meguri_drum_merge(h, base, payloads ? payPtr : 0, count, verdicts ? verdictPtr : 0) >>> 0;
      if (verdicts) verdicts.set(c.u8.subarray(verdictPtr, verdictPtr + count), from);
    }
    return added;
  }

  /** Whether key `i` of `keys` is present. */
  contains(keys: KeyArray, i = 0): boolean {
    checkIndex('DrumSet.contains', keys, i);
    const h = this.handle;
    const c = core();
    const base = c.scratch(32);
    stageKeys(keys, i, 1, base);
    c.exports.meguri_drum_contains_batch(h, base, 1, base + 16);
    return c.u8[base + 16] === 1;
  }

  /** Membership of every key: `out[i]` = 1 if key i is present, else 0. */
  containsBatch(keys: KeyArray, out?: Uint8Array): Uint8Array {
    const n = keyCount(keys);
    const result = out ?? new Uint8Array(n);
    if (!(result instanceof Uint8Array) || result.length < n) {
      throw new InvalidArgumentError(`DrumSet.containsBatch: out must be a Uint8Array of at least ${n} bytes`);
    }
    const h = this.handle;
    this.lookupChunks(keys, n, 1, (base, count, outPtr, from) => {
      core().exports.meguri_drum_contains_batch(h, base, count, outPtr);
      result.set(core().u8.subarray(outPtr, outPtr + count), from);
    });
    return result;
  }

  /** Payload of key `i` of `keys`, or `undefined` when the key is absent. */
  get(keys: KeyArray, i = 0): number | undefined {
    checkIndex('DrumSet.get', keys, i);
    const h = this.handle;
    const c = core();
    const base = c.scratch(32);
    stageKeys(keys, i, 1, base);
    c.exports.meguri_drum_get_batch(h, base, 1, DRUM_MISSING, base + 16);
    const v = c.u32[(base + 16) >>> 2]!;
    // The sentinel is also a legal payload; confirm before reporting absence.
    if (v === DRUM_MISSING && !this.contains(keys, i)) return undefined;
    return v;
  }

  /**
   * Payload of every key into `out` (default a new Uint32Array), `missing` (default
   * 0xffffffff) for absent keys. Use `containsBatch` when payloads may take the sentinel value.
   */
  getBatch(keys: KeyArray, out?: Uint32Array, missing: number = DRUM_MISSING): Uint32Array {
    const n = keyCount(keys);
    const result = out ?? new Uint32Array(n);
    if (!(result instanceof Uint32Array) || result.length < n) {
      throw new InvalidArgumentError(`DrumSet.getBatch: out must be a Uint32Array of at least ${n} values`);
    }
    if (!Number.isInteger(missing) || missing < 0 || missing > 0xffffffff) {
      throw new InvalidArgumentError(`DrumSet.getBatch: missing must be a u32, received ${missing}`);
    }
    const h = this.handle;
    this.lookupChunks(keys, n, 4, (base, count, outPtr, from) => {
      core().exports.meguri_drum_get_batch(h, base, count, missing, outPtr);
      result.set(core().u32.subarray(outPtr >>> 2, (outPtr >>> 2) + count), from);
    });
    return result;
  }

  /**
   * Stages `keys` chunk by chunk (keys, then `outBytes` per key of output) and hands each
   * chunk's layout to `run`, which makes the wasm call and copies its results out.
   */
  private lookupChunks(
    keys: KeyArray,
    n: number,
    outBytes: number,
    run: (base: number, count: number, outPtr: number, from: number) => void,
  ): void {
    const c = core();
    for (let from = 0; from < n; from += CHUNK) {
      const count = Math.min(CHUNK, n - from);
      const base = c.scratch(count * (16 + outBytes));
      stageKeys(keys, from, count, base);
      run(base, count, base + count * 16, from);
    }
  }

  /**
   * Every key in URLKey order (HostKey then PathKey, unsigned) with its payload: the
   * checkpoint form (each bucket's table is sorted as it is reached).
   */
  exportSorted(): { keys: KeyArray; payloads: Uint32Array } {
    const h = this.handle;
    const c = core();
    const n = c.exports.meguri_drum_len(h) >>> 0;
    const keys = new Uint32Array(n * 4);
    const payloads = new Uint32Array(n);
    for (let from = 0; from < n; from += CHUNK) {
      const count = Math.min(CHUNK, n - from);
      const base = c.scratch(count * 20);
      const payPtr = base + count * 16;
      const got = c.exports.meguri_drum_export(h, from, count, base, payPtr) >>> 0;
      const u32 = c.u32;
      keys.set(u32.subarray(base >>> 2, (base >>> 2) + got * 4), from * 4);
      payloads.set(u32.subarray(payPtr >>> 2, (payPtr >>> 2) + got), from);
    }
    return { keys, payloads };
  }

  /**
   * Rebuilds a set from keys already in URLKey order with no repeats (an `exportSorted`
   * result, or a checkpoint's key column), in one pass. Throws
   * `InvalidArgumentError` naming the first key that is out of order or repeated.
   */
  static fromSorted(keys: KeyArray, payloads: Uint32Array, options?: Partial<DrumSetOptions>): DrumSet {
    const n = keyCount(keys);
    if (payloads === undefined) {
      throw new InvalidArgumentError('DrumSet.fromSorted: payloads are required (one u32 per key)');
    }
    checkPayloads('DrumSet.fromSorted', payloads, n);
    const set = new DrumSet(options);
    try {
      const h = set.handle;
      const c = core();
      for (let from = 0; from < n; from += CHUNK) {
        const count = Math.min(CHUNK, n - from);
        const base = c.scratch(count * 20);
        const payPtr = base + count * 16;
        stageKeys(keys, from, count, base);
        c.u32.set(payloads.subarray(from, from + count), payPtr >>> 2);
        const bad = c.exports.meguri_drum_append_sorted(h, base, payPtr, count);
        if (bad >= 0) {
          const at = from + bad;
          throw new InvalidArgumentError(
            `DrumSet.fromSorted: key ${at} (${keyToHex(keys, at)}) is not greater than the key before it; expected keys sorted in URLKey order with no repeats`,
          );
        }
      }
    } catch (err) {
      set.free();
      throw err;
    }
    return set;
  }
}
