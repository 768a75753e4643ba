/**
 * The blocked Bloom filter: the mutable, one-sided first tier of the seen-set (DESIGN §6),
 * resident in the WebAssembly core (core-rs/src/bloom.rs holds the derivation).
 *
 * Each key touches one 512-bit block (one cache line) and sets or tests k bits derived from
 * its own bits, so an operation costs one cache miss. Sized from `(capacity, fpRate)` for
 * the fewest whole blocks meeting the target under the blocked layout's exact model: at the
 * 1 % default that is k = 6 and ≈ 9.9 bits per key. No false negatives, ever; adding past
 * `capacity` is allowed and only raises the false-positive rate (the owner — the SeenSet —
 * rebuilds a larger filter from its exact key set when a crawl outgrows the plan).
 */
import { WasmOutOfMemoryError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { MembershipFilter, type MembershipOps, keyAt, keyBatch, loadBlob, takeBytes } from './filter.js';
import { core } from './instance.js';
import type { KeyArray } from './keys.js';

/** Options of `new BloomFilter(…)`. */
export interface BloomFilterOptions {
  /** Keys the filter is planned for: a positive integer up to 2³¹. */
  capacity: number;
  /** Target false-positive rate at capacity, in [1e-6, 0.5]; default 0.01. */
  fpRate?: number;
}

interface BloomSettings {
  capacity: number | undefined;
  fpRate: number;
}

/** Largest capacity accepted: 2³¹ keys is ≈ 2.5 GiB of filter at 1 %, near wasm32's limit. */
export const BLOOM_MAX_CAPACITY = 2 ** 31;

const settings = defineOptions<BloomSettings>(
  'BloomFilter',
  {
    capacity: numberField({ min: 1, max: BLOOM_MAX_CAPACITY, integer: true }),
    fpRate: numberField({ min: 1e-6, max: 0.5, default: 0.01 }),
  },
  (o) => (o.capacity === undefined ? 'capacity is required (the number of keys to plan for)' : undefined),
);

let bloomOps: MembershipOps | undefined;
function bloomFilterOps(): MembershipOps {
  const ex = core().exports;
  bloomOps ??= {
    queryKey: ex.meguri_bloom_query_key,
    queryBatch: ex.meguri_bloom_query_batch,
    len: ex.meguri_bloom_len,
    payloadBits: ex.meguri_bloom_payload_bits,
    release: ex.meguri_bloom_free,
  };
  return bloomOps;
}

/** Proves a constructor call with a handle comes from `BloomFilter.load`. */
const adopt: unique symbol = Symbol('adopt');

/**
 * A blocked Bloom filter over URLKeys (`KeyArray`, four u32 lanes per key), living in wasm
 * memory until `free()`.
 *
 * @example
 * using f = new BloomFilter({ capacity: 1_000_000 });
 * f.addBatch(keys);
 * const verdicts = f.mayContainBatch(candidates); // 0 = certainly new, 1 = probably seen
 */
export class BloomFilter extends MembershipFilter {
  /** Builds an empty filter planned for `capacity` keys at `fpRate` (default 1 %). */
  constructor(options: BloomFilterOptions);
  /** @internal Adopts a handle from `BloomFilter.load`. */
  constructor(options: typeof adopt, handle: number);
  constructor(options: BloomFilterOptions | typeof adopt, handle = 0) {
    let h = handle;
    if (options !== adopt) {
      const o = settings(options);
      h = core().exports.meguri_bloom_new(o.capacity!, o.fpRate);
      if (h === 0) {
        throw new WasmOutOfMemoryError(`BloomFilter: could not allocate a filter for ${o.capacity!} keys at fpRate ${o.fpRate}`);
      }
    }
    super(h, 'BloomFilter', bloomFilterOps());
  }

  /**
   * Restores a filter from `marshal()` bytes, mutable again. Throws `CorruptFilterError`
   * for a truncated, corrupted or foreign blob, including a valid blob of another kind.
   */
  static load(bytes: Uint8Array): BloomFilter {
    const ex = core().exports;
    return new BloomFilter(adopt, loadBlob(bytes, 'bloom', (p, n, s) => ex.meguri_bloom_load(p, n, s)));
  }

  /** Records key `i` of `keys` (default the first). */
  add(keys: KeyArray, i = 0): void {
    const h = this.handle;
    const at = keyAt(keys, i);
    core().exports.meguri_bloom_add_key(h, keys[at]!, keys[at + 1]!, keys[at + 2]!, keys[at + 3]!);
  }

  /** Records every key of `keys`, crossing into wasm once per 64 Ki keys. */
  addBatch(keys: KeyArray): void {
    const h = this.handle;
    const ex = core().exports;
    keyBatch(keys, (k, n) => ex.meguri_bloom_add_batch(h, k, n));
  }

  /** The capacity the filter was planned for. */
  get capacity(): number {
    return core().exports.meguri_bloom_capacity(this.handle);
  }

  /** The target false-positive rate at capacity. */
  get fpRate(): number {
    return core().exports.meguri_bloom_fp_rate(this.handle);
  }

  /** Probes (bits set or tested) per key. */
  get probes(): number {
    return core().exports.meguri_bloom_probes(this.handle);
  }

  /** Serializes the filter as a kind-0 blob for `BloomFilter.load` or `loadFilter`. */
  marshal(): Uint8Array {
    return takeBytes(core().exports.meguri_bloom_marshal(this.handle));
  }
}
