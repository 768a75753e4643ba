/**
 * Ribbon filters: the static, frozen form of a seen-set (DESIGN §6), built in the
 * WebAssembly core (core-rs/src/ribbon.rs holds the derivation: Dillinger & Walzer's
 * standard ribbon with 128-bit coefficient rows and r-bit fingerprints).
 *
 * A ribbon is built once over a fixed key set and is then read-only: its false-positive
 * rate is exactly 2⁻ʳ and it costs about 1.05·r bits per key, against ≈ 1.44·log2(1/ε)
 * for a Bloom filter. Builds return serialized blobs (kind 1, or kind 2 when sharded);
 * `loadFilter` turns any blob into a `ResidentFilter`.
 *
 * Large sets are sharded: `ribbonShardCount(n)` picks a power-of-two shard count keeping
 * each shard at or under 2²⁰ keys, `ribbonShardIndex` routes a key, and each shard is its
 * own linear system, so the overhead stays at its one-million-key value and the build holds
 * one shard's keys at a time (`buildShardedRibbonFromLoader`).
 */
import { InvalidArgumentError, WasmOutOfMemoryError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { keyAt, keyBatch, requireInteger, takeBytes, withKeysInCore } from './filter.js';
import { core } from './instance.js';
import { KEY_BYTES, type KeyArray, keyCount, keyToHex } from './keys.js';

export { type FilterKind, ResidentFilter, loadFilter } from './filter.js';

/** Largest fingerprint width. */
export const RIBBON_MAX_BITS = 16;
/** A sharded build keeps each shard at or under this many keys. */
export const RIBBON_SHARD_TARGET = 2 ** 20;
/** The most shards a sharded ribbon may have. */
export const RIBBON_MAX_SHARDS = 4096;

/** Options of the ribbon builds. */
export interface RibbonOptions {
  /** Fingerprint width r in 1..16 (false-positive rate 2⁻ʳ); default 7 (≈ 0.8 %). */
  bits?: number;
}

const ribbonSettings = defineOptions<Required<RibbonOptions>>('RibbonOptions', {
  bits: numberField({ min: 1, max: RIBBON_MAX_BITS, integer: true, default: 7 }),
});

/**
 * The fingerprint width meeting a target false-positive rate: the smallest r with
 * 2⁻ʳ ≤ fp, i.e. ⌈−log2 fp⌉, clamped to 1..16 (1e-4 → 14, 0.01 → 7).
 */
export function ribbonBitsForFpr(fp: number): number {
  if (typeof fp !== 'number' || !(fp > 0 && fp <= 1)) {
    throw new InvalidArgumentError(`ribbonBitsForFpr: expected a false-positive rate in (0, 1], received ${String(fp)}`);
  }
  return Math.min(RIBBON_MAX_BITS, Math.max(1, Math.ceil(-Math.log2(fp))));
}

/**
 * The shard count for a set of `n` keys: 1 while n ≤ 2²⁰ (a small set stays one ribbon),
 * otherwise the smallest power of two keeping every shard at or under 2²⁰ keys, capped at
 * 4096. A seal partitions its keys with this count, and the blob records it.
 */
export function ribbonShardCount(n: number): number {
  requireInteger('ribbonShardCount: n', n, 0, Number.MAX_SAFE_INTEGER);
  let shards = 1;
  while (shards * RIBBON_SHARD_TARGET < n && shards < RIBBON_MAX_SHARDS) shards *= 2;
  return shards;
}

function shardLog2(shards: number): number {
  requireInteger('shards', shards, 1, RIBBON_MAX_SHARDS);
  if ((shards & (shards - 1)) !== 0) {
    throw new InvalidArgumentError(`shards: expected a power of two in [1, ${RIBBON_MAX_SHARDS}], received ${shards}`);
  }
  return 31 - Math.clz32(shards);
}

/**
 * The shard (of `shards`, a power of two) that key `i` of `keys` (default the first) belongs
 * to: the high log2(shards) bits of a shard hash of the key. A seal and its queries must use
 * the same shard count. `ribbonShardIndex(key, shards)` routes a one-key array.
 */
export function ribbonShardIndex(keys: KeyArray, shards: number, i = 0): number {
  const log2 = shardLog2(shards);
  const at = keyAt(keys, i);
  const c = core();
  const base = c.scratch(32);
  c.u32.set(keys.subarray(at, at + 4), base >>> 2);
  c.exports.meguri_ribbon_shard_index_batch(base, 1, log2, base + 16);
  return c.u32[(base + 16) >>> 2]!;
}

/** `ribbonShardIndex` for every key, into `out` (allocated when not given). */
export function ribbonShardIndexBatch(keys: KeyArray, shards: number, out?: Uint32Array): Uint32Array {
  const log2 = shardLog2(shards);
  const n = keyCount(keys);
  const result = out ?? new Uint32Array(n);
  if (!(result instanceof Uint32Array) || result.length < n) {
    throw new InvalidArgumentError(`out must be a Uint32Array of at least ${n} elements`);
  }
  const ex = core().exports;
  let from = 0;
  keyBatch(keys, (ptr, count) => {
    // The scratch region holds the chunk's keys; the indexes go right after them.
    const outPtr = ptr + count * KEY_BYTES;
    ex.meguri_ribbon_shard_index_batch(ptr, count, log2, outPtr);
    result.set(core().u32.subarray(outPtr >>> 2, (outPtr >>> 2) + count), from);
    from += count;
  }, 4);
  return result;
}

/**
 * Splits keys into `shards` arrays by `ribbonShardIndex`, the input `buildShardedRibbon`
 * expects. Convenience for sets already in memory; a streaming seal routes as it spills.
 */
export function partitionForRibbon(keys: KeyArray, shards: number): KeyArray[] {
  const n = keyCount(keys);
  const index = ribbonShardIndexBatch(keys, shards);
  const sizes = new Uint32Array(shards);
  for (let k = 0; k < n; k++) sizes[index[k]!]!++;
  const parts = Array.from(sizes, (s) => new Uint32Array(s * 4));
  // Lane copies, not a subarray per key: 10M keys partition in ~0.2 s instead of ~1.7 s.
  const fill = new Uint32Array(shards);
  for (let k = 0; k < n; k++) {
    const s = index[k]!;
    const part = parts[s]!;
    const to = fill[s]! * 4;
    fill[s]!++;
    const at = k * 4;
    part[to] = keys[at]!;
    part[to + 1] = keys[at + 1]!;
    part[to + 2] = keys[at + 2]!;
    part[to + 3] = keys[at + 3]!;
  }
  return parts;
}

/** Status codes of the builder exports (core-rs/src/abi/ribbon.rs). */
const MISROUTED = 1;
const OUT_OF_MEMORY = 2;
const COUNT_MISMATCH = 7;

/** One build: owns the core-side builder for its duration. */
class Build {
  private handle: number;

  constructor(
    private readonly shards: number,
    private readonly bits: number,
    private readonly n: number,
  ) {
    this.handle = core().exports.meguri_ribbon_builder_new(shards, bits, n);
    if (this.handle === 0) throw new InvalidArgumentError(`ribbon build: ${shards} shard(s) of ${bits} bits over ${n} keys is out of range`);
  }

  add(index: number, keys: KeyArray): void {
    const ex = core().exports;
    withKeysInCore(keys, (ptr, count) => {
      const detail = core().scratch(16);
      const status = ex.meguri_ribbon_builder_add_shard(this.handle, index, ptr, count, detail);
      if (status === 0) return;
      const d = core().f64[detail >>> 3]!;
      if (status === MISROUTED) {
        const belongs = ribbonShardIndex(keys, this.shards, d);
        throw new InvalidArgumentError(
          `shard ${index} holds key ${d} (${keyToHex(keys, d)}), which belongs to shard ${belongs} of ${this.shards}: partition keys with ribbonShardIndex`,
        );
      }
      if (status === OUT_OF_MEMORY) throw new WasmOutOfMemoryError(`ribbon build: no memory to solve shard ${index} (${count} keys)`);
      throw new InvalidArgumentError(`ribbon build: shard ${index} of ${count} keys was refused (status ${status})`);
    });
  }

  finish(): Uint8Array {
    const c = core();
    const out = c.scratch(16);
    const blob = c.exports.meguri_ribbon_builder_finish(this.handle, out, out + 8);
    if (blob !== 0) return takeBytes(blob);
    const status = c.u32[out >>> 2]!;
    const d = c.f64[(out + 8) >>> 3]!;
    if (status === COUNT_MISMATCH) {
      throw new InvalidArgumentError(`ribbon build: n is ${this.n} but the shards hold ${d} keys in all`);
    }
    throw new InvalidArgumentError(`ribbon build: shard ${d} was never added (status ${status})`);
  }

  dispose(): void {
    if (this.handle !== 0) core().exports.meguri_ribbon_builder_free(this.handle);
    this.handle = 0;
  }
}

/**
 * Builds a ribbon filter over `keys` (repeats are tolerated and counted in `len`) and
 * returns its kind-1 blob. One linear system: fine up to a few million keys; beyond
 * `RIBBON_SHARD_TARGET`, `buildShardedRibbon` keeps the overhead and memory lower.
 */
export function buildRibbon(keys: KeyArray, options?: RibbonOptions): Uint8Array {
  const { bits } = ribbonSettings(options);
  const b = new Build(1, bits, keyCount(keys));
  try {
    b.add(0, keys);
    return b.finish();
  } finally {
    b.dispose();
  }
}

/**
 * Builds a ribbon over keys already partitioned by `ribbonShardIndex(…, shardKeys.length)`
 * (see `partitionForRibbon`). One shard yields the kind-1 blob `buildRibbon` would; more
 * yield a kind-2 sharded blob. A key in the wrong shard throws `InvalidArgumentError`
 * (a misrouted key would otherwise become a false negative).
 */
export function buildShardedRibbon(shardKeys: readonly KeyArray[], options?: RibbonOptions): Uint8Array {
  const { bits } = ribbonSettings(options);
  if (!Array.isArray(shardKeys)) throw new InvalidArgumentError(`buildShardedRibbon: expected an array of KeyArrays, received ${typeof shardKeys}`);
  shardLog2(shardKeys.length);
  let n = 0;
  for (const keys of shardKeys) n += keyCount(keys);
  const b = new Build(shardKeys.length, bits, n);
  try {
    shardKeys.forEach((keys, i) => b.add(i, keys));
    return b.finish();
  } finally {
    b.dispose();
  }
}

/**
 * The streaming build of a large seal: solves shard i from `await load(i)` for i = 0, 1, …
 * in turn, so memory holds the solutions and one shard's keys, never the whole set. `n` is
 * the total key count over all shards (checked). Returns the kind-2 blob (kind 1 when
 * `shardCount` is 1). If `load` throws, the build is abandoned and its memory released.
 */
export async function buildShardedRibbonFromLoader(
  shardCount: number,
  n: number,
  load: (i: number) => KeyArray | Promise<KeyArray>,
  options?: RibbonOptions,
): Promise<Uint8Array> {
  const { bits } = ribbonSettings(options);
  shardLog2(shardCount);
  requireInteger('buildShardedRibbonFromLoader: n', n, 0, Number.MAX_SAFE_INTEGER);
  if (typeof load !== 'function') throw new InvalidArgumentError(`buildShardedRibbonFromLoader: load must be a function, received ${typeof load}`);
  const b = new Build(shardCount, bits, n);
  try {
    for (let i = 0; i < shardCount; i++) {
      const keys = await load(i);
      if (!(keys instanceof Uint32Array)) {
        throw new InvalidArgumentError(`buildShardedRibbonFromLoader: load(${i}) returned ${typeof keys}, expected a KeyArray`);
      }
      b.add(i, keys);
    }
    return b.finish();
  } finally {
    b.dispose();
  }
}
