/**
 * SeenSet: the two-tier dedup authority of DESIGN §6 — a blocked Bloom filter beside the
 * exact key set (`DrumSet`), both resident in the WebAssembly core.
 *
 * The exact set answers every check-and-insert (one hash-table probe per key, a cost that
 * does not grow with the set: core-rs/src/drum.rs); the filter always holds every key of the
 * exact set (the invariant F ⊇ S of core-rs/src/seen.rs), so `maybeContains` and the filter
 * blob a checkpoint carries (`marshalFilter`, `marshalRibbon`) never answer a false negative.
 * Check-and-insert makes discovery idempotent — a key delivered twice creates one entry —
 * which is what lets the frontier accept at-least-once delivery of discoveries.
 *
 * Why the filter is no longer consulted on the way in: it was while the exact set was DRUM's
 * sorted runs, where a lookup was a gallop of ~2·log2(distance) cache misses and a filter
 * miss let a new key skip it. A table probe is one line, the same as a filter query, and
 * only the probe can tell a repeat inside the batch from a new key.
 *
 * Growth: the filter is planned for `capacity` keys. When the exact set passes that, the
 * filter is rebuilt at twice the capacity (repeatedly, until it fits) from the exact set, in
 * one core call with no copy through JavaScript, so the false-positive rate stays at `fpRate`
 * however large the crawl grows. Doubling makes the rebuild work geometric: every key is
 * re-added at most about twice over the set's life (the sum n + n/2 + n/4 + …), and the filter
 * costs between 1× and 2× its planned bits per key (≈ 9.9 to 19.8 at 1 %).
 */
import { BLOOM_MAX_CAPACITY, BloomFilter } from '../core/bloom.js';
import { DrumSet } from '../core/drum.js';
import { keyAt } from '../core/filter.js';
import { type KeyArray, keyCount } from '../core/keys.js';
import { buildRibbon, buildShardedRibbon, partitionForRibbon, ribbonBitsForFpr, ribbonShardCount } from '../core/ribbon.js';
import {
  SEEN_CHUNK,
  seenContainsChunk,
  seenContainsOne,
  seenFill,
  seenMergeChunk,
  seenMergeOne,
} from '../core/seen.js';
import { CorruptFilterError, InvalidArgumentError, UseAfterFreeError } from '../errors/index.js';
import { customField, defineOptions, numberField } from '../options/index.js';

/** Options of `new SeenSet(…)` and `SeenSet.fromKeys(…)`. */
export interface SeenSetOptions {
  /**
   * Keys the first filter is planned for: an integer in [1, 2³¹], default 2²⁰ (≈ 1.2 MiB of
   * filter at 1 %). Not a limit: the filter is rebuilt at twice the size whenever the set
   * outgrows it.
   */
  readonly capacity: number;
  /** Target filter false-positive rate in [1e-6, 0.5], default 0.01, kept across growth. */
  readonly fpRate: number;
  /** Buckets of the exact set: a power of two in [1, 65536], default 256. */
  readonly buckets: number;
  /**
   * Keys to size the exact set's tables for up front (`DrumSet`'s `expectedKeys`): an
   * integer in [0, 2³²), default 0 (grow from empty). Within the plan each key is written
   * about once instead of ≈ 3 times; the tables cost about 21 bytes per planned key at once.
   */
  readonly expectedKeys: number;
}

/** Options of `SeenSet.restore(…)`: the filter's plan comes from the blob. */
export interface SeenSetRestoreOptions {
  /** Buckets of the exact set: a power of two in [1, 65536], default 256. */
  readonly buckets: number;
}

/** Options of `SeenSet.marshalRibbon(…)`. */
export interface SeenSetRibbonOptions {
  /** Fingerprint width r in 1..16 (false-positive rate 2⁻ʳ); default the smallest r with 2⁻ʳ ≤ fpRate. */
  readonly bits: number;
}

const isBucketCount = (v: unknown): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65536 && (v & (v - 1)) === 0;

/**
 * Default bucket count, as `DrumSet`'s. With hash-table buckets the count only sets how
 * finely growth is split (each bucket rehashes alone, so at most 1/256 of the set is
 * allocated twice at once); a probe costs the same for any count.
 */
const DEFAULT_BUCKETS = 256;
const bucketsField = customField('a power of two in [1, 65536]', isBucketCount, () => DEFAULT_BUCKETS);

const resolveOptions = defineOptions<SeenSetOptions>('SeenSetOptions', {
  capacity: numberField({ min: 1, max: BLOOM_MAX_CAPACITY, integer: true, default: 1 << 20 }),
  fpRate: numberField({ min: 1e-6, max: 0.5, default: 0.01 }),
  buckets: bucketsField,
  expectedKeys: numberField({ min: 0, max: 2 ** 32 - 1, integer: true, default: 0 }),
});

const resolveRestoreOptions = defineOptions<SeenSetRestoreOptions>('SeenSetRestoreOptions', { buckets: bucketsField });

/** The growth rule: double `capacity` until it holds `len` keys (capped at 2³¹). */
function grownCapacity(capacity: number, len: number): number {
  let c = capacity;
  while (c < len && c < BLOOM_MAX_CAPACITY) c = Math.min(c * 2, BLOOM_MAX_CAPACITY);
  return c;
}

/** Proves a constructor call comes from `fromKeys` / `restore`. */
const adopt: unique symbol = Symbol('adopt');

/**
 * The seen-set: check-and-insert over URLKeys (`KeyArray`, four u32 lanes per key) with no
 * false negatives. Owns wasm memory: call `free()` (or use `using`) when done; any use after
 * that throws `UseAfterFreeError`. (Dropped without `free()`, its two tiers are released by
 * their own FinalizationRegistry backstops, whenever the garbage collector gets to them.)
 *
 * Verdict convention, as in `DrumSet.merge`: in a verdict array **1 = new** (recorded by this
 * call), **0 = already seen**. The single-key `seen` answers the question its name asks:
 * true = already seen.
 *
 * @example
 * ```ts
 * using seen = new SeenSet();
 * const verdicts = seen.merge(urlKeyBatch(canonicalUrls)); // 1 = new: schedule it
 * if (!seen.seen(key)) schedule(url);                      // single-key check-and-insert
 * ```
 */
export class SeenSet {
  /** The resolved options (`capacity` is the first plan; `capacity` the getter is the current one). */
  readonly options: Readonly<SeenSetOptions>;
  #set: DrumSet | undefined;
  #filter: BloomFilter | undefined;
  #capacity: number;
  #fpRate: number;
  #growths = 0;

  /** An empty seen-set. Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<SeenSetOptions> | null);
  /** @internal Adopts the two tiers built by `fromKeys` / `restore`. */
  constructor(token: typeof adopt, options: Readonly<SeenSetOptions>, set: DrumSet, filter: BloomFilter);
  constructor(
    options?: Partial<SeenSetOptions> | null | typeof adopt,
    resolved?: Readonly<SeenSetOptions>,
    set?: DrumSet,
    filter?: BloomFilter,
  ) {
    if (options === adopt) {
      this.options = resolved!;
      this.#set = set!;
      this.#filter = filter!;
    } else {
      this.options = resolveOptions(options);
      this.#set = new DrumSet({ buckets: this.options.buckets, expectedKeys: this.options.expectedKeys });
      try {
        this.#filter = new BloomFilter({ capacity: this.options.capacity, fpRate: this.options.fpRate });
      } catch (err) {
        this.#set.free();
        throw err;
      }
    }
    this.#capacity = this.#filter.capacity;
    this.#fpRate = this.#filter.fpRate;
  }

  /**
   * Rebuilds both tiers from the exact keys of a checkpoint: `sortedKeys` in URLKey order
   * with no repeats (a `exportSorted()` result or a partition's key column). The filter is
   * planned for `options.capacity`, doubled until it holds every key, and filled from the
   * exact set in one core call. Throws `InvalidArgumentError` naming the first key out of
   * order or repeated.
   */
  static fromKeys(sortedKeys: KeyArray, options?: Partial<SeenSetOptions> | null): SeenSet {
    const o = resolveOptions(options);
    const n = keyCount(sortedKeys);
    const set = DrumSet.fromSorted(sortedKeys, new Uint32Array(n), { buckets: o.buckets });
    let filter: BloomFilter | undefined;
    try {
      filter = new BloomFilter({ capacity: grownCapacity(o.capacity, n), fpRate: o.fpRate });
      seenFill(set, filter);
    } catch (err) {
      filter?.free();
      set.free();
      throw err;
    }
    return new SeenSet(adopt, o, set, filter);
  }

  /**
   * Recovers a seen-set from the exact keys of a checkpoint (`sortedKeys`, as for
   * `fromKeys`) and the filter blob `marshalFilter()` wrote in the same checkpoint, keeping
   * the filter's plan (capacity, fpRate) and growth state. Every key is checked against the
   * loaded filter (one batch query: the same order of work as refilling it), because a blob
   * from another checkpoint would turn into false negatives. Throws `CorruptFilterError` for
   * a damaged or non-Bloom blob, or one that does not hold exactly these keys.
   */
  static restore(sortedKeys: KeyArray, filterBlob: Uint8Array, options?: Partial<SeenSetRestoreOptions> | null): SeenSet {
    const { buckets } = resolveRestoreOptions(options);
    const n = keyCount(sortedKeys);
    const filter = BloomFilter.load(filterBlob);
    let set: DrumSet | undefined;
    try {
      if (filter.len !== n) {
        throw new CorruptFilterError(`SeenSet.restore: the filter blob holds ${filter.len} keys but the checkpoint has ${n}; expected the blob marshaled with these keys`);
      }
      const verdicts = filter.mayContainBatch(sortedKeys);
      const missing = verdicts.indexOf(0);
      if (missing >= 0) {
        throw new CorruptFilterError(`SeenSet.restore: key ${missing} of the checkpoint is not in the filter blob; the blob belongs to another key set`);
      }
      set = DrumSet.fromSorted(sortedKeys, new Uint32Array(n), { buckets });
    } catch (err) {
      filter.free();
      throw err;
    }
    const o: SeenSetOptions = Object.freeze({ capacity: filter.capacity, fpRate: filter.fpRate, buckets, expectedKeys: 0 });
    return new SeenSet(adopt, o, set, filter);
  }

  #tiers(): { set: DrumSet; filter: BloomFilter } {
    const set = this.#set;
    const filter = this.#filter;
    if (set === undefined || filter === undefined) throw new UseAfterFreeError('SeenSet');
    return { set, filter };
  }

  /** Rebuilds the filter larger from the exact set once the set has outgrown it. */
  #growIfNeeded(set: DrumSet): void {
    const len = set.len;
    if (len <= this.#capacity || this.#capacity >= BLOOM_MAX_CAPACITY) return;
    const capacity = grownCapacity(this.#capacity, len);
    const next = new BloomFilter({ capacity, fpRate: this.#fpRate });
    try {
      seenFill(set, next);
    } catch (err) {
      next.free();
      throw err;
    }
    this.#filter!.free();
    this.#filter = next;
    this.#capacity = capacity;
    this.#growths++;
  }

  /**
   * Check-and-insert of key `i` of `keys` (default the first): true when the key was already
   * seen, false when it is new — and now recorded. Idempotent: asking twice answers false,
   * then true.
   */
  seen(keys: KeyArray, i = 0): boolean {
    const { set, filter } = this.#tiers();
    keyAt(keys, i);
    const isNew = seenMergeOne(set, filter, keys, i);
    if (isNew) this.#growIfNeeded(set);
    return !isNew;
  }

  /**
   * @internal Runs `f` with the two tiers (for a fused core call that merges into them, such
   * as `admitLinksBatch`), then rebuilds the filter larger if the set outgrew it.
   */
  withTiers<T>(f: (set: DrumSet, filter: BloomFilter) => T): T {
    const { set, filter } = this.#tiers();
    try {
      return f(set, filter);
    } finally {
      this.#growIfNeeded(set);
    }
  }

  /**
   * Check-and-insert of a batch: one verdict per key, **1 = new** (now recorded), **0 =
   * already seen** — the `DrumSet.merge` convention. A key repeated inside the batch is new
   * at most at its first occurrence, so merging the same batch again (at-least-once
   * redelivery) answers 0 for every key. Crosses into wasm once per 2¹⁶ keys.
   */
  merge(keys: KeyArray): Uint8Array {
    const n = keyCount(keys);
    const verdicts = new Uint8Array(n);
    this.#mergeChunks(keys, n, verdicts);
    return verdicts;
  }

  /**
   * Records every key of `keys` (repeats and already-seen keys are harmless) without
   * returning verdicts: the seed-loop form of `merge`. Returns how many keys were new.
   */
  insertBatch(keys: KeyArray): number {
    return this.#mergeChunks(keys, keyCount(keys), undefined);
  }

  #mergeChunks(keys: KeyArray, n: number, verdicts: Uint8Array | undefined): number {
    const { set } = this.#tiers();
    let added = 0;
    for (let from = 0; from < n; from += SEEN_CHUNK) {
      const count = Math.min(SEEN_CHUNK, n - from);
      // Re-read the filter each chunk: growth after the previous chunk replaces it.
      added += seenMergeChunk(set, this.#filter!, keys, from, count, verdicts);
      this.#growIfNeeded(set);
    }
    return added;
  }

  /** Exact membership of key `i` of `keys`, without inserting (one exact-set probe). */
  contains(keys: KeyArray, i = 0): boolean {
    const { set, filter } = this.#tiers();
    keyAt(keys, i);
    return seenContainsOne(set, filter, keys, i);
  }

  /** `contains` for every key: `out[i]` = 1 when key i is in the set (into `out` when given). */
  containsBatch(keys: KeyArray, out?: Uint8Array): Uint8Array {
    const { set, filter } = this.#tiers();
    const n = keyCount(keys);
    const result = out ?? new Uint8Array(n);
    if (!(result instanceof Uint8Array) || result.length < n) {
      throw new InvalidArgumentError(`SeenSet.containsBatch: out must be a Uint8Array of at least ${n} bytes`);
    }
    for (let from = 0; from < n; from += SEEN_CHUNK) {
      seenContainsChunk(set, filter, keys, from, Math.min(SEEN_CHUNK, n - from), result);
    }
    return result;
  }

  /**
   * The filter's verdict alone for key `i`: false is authoritative (never seen), true is
   * "probably" — on a key never seen, a false positive at about `fpRate`.
   */
  maybeContains(keys: KeyArray, i = 0): boolean {
    return this.#tiers().filter.mayContain(keys, i);
  }

  /** `maybeContains` for every key (1 maybe, 0 certainly not seen), into `out` when given. */
  maybeContainsBatch(keys: KeyArray, out?: Uint8Array): Uint8Array {
    return this.#tiers().filter.mayContainBatch(keys, out);
  }

  /** Number of distinct keys held. */
  get len(): number {
    return this.#tiers().set.len;
  }

  /** The key count the current filter is planned for (grows by doubling). */
  get capacity(): number {
    this.#tiers();
    return this.#capacity;
  }

  /** The filter's target false-positive rate. */
  get fpRate(): number {
    this.#tiers();
    return this.#fpRate;
  }

  /** How many times the filter has been rebuilt larger. */
  get growths(): number {
    this.#tiers();
    return this.#growths;
  }

  /** Resident filter bits per held key (0 when empty): between 1× and 2× the plan's ≈ 9.9 at 1 %. */
  get bitsPerUrl(): number {
    const { set, filter } = this.#tiers();
    const n = set.len;
    return n === 0 ? 0 : filter.payloadBits / n;
  }

  /** Bytes of wasm memory held: the exact set's runs and table plus the filter's bits. */
  get memoryBytes(): number {
    const { set, filter } = this.#tiers();
    return set.memoryBytes + filter.payloadBits / 8;
  }

  /** Every key held, in URLKey order: the checkpoint form that `fromKeys` / `restore` read. */
  exportSorted(): KeyArray {
    return this.#tiers().set.exportSorted().keys;
  }

  /**
   * The filter as a kind-0 blob (`loadFilter` reads it; `restore` pairs it with the keys).
   * Deterministic: the same keys under the same plan give the same bytes.
   */
  marshalFilter(): Uint8Array {
    return this.#tiers().filter.marshal();
  }

  /**
   * Freezes the exact keys into a ribbon filter blob, the static form a cold partition
   * carries: kind 1 up to 2²⁰ keys, the sharded kind 2 above. `loadFilter` reads either. The
   * blob answers "maybe" for every key held, with false-positive rate 2⁻ᵇⁱᵗˢ.
   */
  marshalRibbon(options?: Partial<SeenSetRibbonOptions> | null): Uint8Array {
    const { set } = this.#tiers();
    const resolve = defineOptions<SeenSetRibbonOptions>('SeenSet.marshalRibbon', {
      bits: numberField({ min: 1, max: 16, integer: true, default: ribbonBitsForFpr(this.#fpRate) }),
    });
    const { bits } = resolve(options);
    const keys = set.exportSorted().keys;
    const shards = ribbonShardCount(keyCount(keys));
    return shards === 1 ? buildRibbon(keys, { bits }) : buildShardedRibbon(partitionForRibbon(keys, shards), { bits });
  }

  /** Whether `free()` has been called. */
  get freed(): boolean {
    return this.#set === undefined;
  }

  /** Releases both tiers' wasm memory. Idempotent; any later use throws `UseAfterFreeError`. */
  free(): void {
    const set = this.#set;
    const filter = this.#filter;
    this.#set = undefined;
    this.#filter = undefined;
    set?.free();
    filter?.free();
  }

  /** Same as `free()`, so `using seen = new SeenSet()` releases at scope exit. */
  [Symbol.dispose](): void {
    this.free();
  }
}
