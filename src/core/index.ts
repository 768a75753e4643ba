/**
 * src/core: the WebAssembly core, its loader and the typed wrappers over its kernels.
 *
 * Owns: the one shared instance per realm, memory views that survive growth, scratch
 * buffers for batch calls, and the TypeScript faces of the Rust kernels. Never: network,
 * file or clock access (the Node file read is isolated in `./node.ts`), or per-key boundary
 * crossings inside a loop (every kernel has a batch form). Wasm-resident objects (filters)
 * have one owner and are released with `free()` / `using`.
 */
export { Core, type CoreSource, core, isCoreLoaded, loadCore, loadCoreFrom } from './instance.js';
export { EXPECTED_ABI_VERSION, type CoreExports } from './abi.js';
export { lanesToHex, lanesToU64, u64Lanes } from './lanes.js';
export { xxh64, xxh64Batch, xxh64BatchLanes, xxh64Lanes } from './hash.js';
export {
  KEY_BYTES,
  KEY_LANES,
  type KeyArray,
  compareKeys,
  hostKeyOf,
  keyCount,
  keyFromHex,
  keyFromParts,
  keyLaneOffset,
  keysEqual,
  keyToHex,
  pathKeyOf,
} from './keys.js';
export { DRUM_MISSING, DrumSet, type DrumSetOptions } from './drum.js';
export { TimingWheel, type TimingWheelOptions } from './wheel.js';
export {
  NEAR_DUP_DISTANCE,
  SIMHASH_SEED,
  type SimhashFeature,
  hamming,
  hammingLanes,
  near,
  simhash,
  simhashText,
  simhashTextBatch,
  simhashTextBatchLanes,
  simhashTextLanes,
  simhashUtf8,
} from './simhash.js';
export { Resident } from './resident.js';
export { BLOOM_MAX_CAPACITY, BloomFilter, type BloomFilterOptions } from './bloom.js';
export { type FilterKind, MembershipFilter, ResidentFilter, loadFilter } from './filter.js';
export {
  RIBBON_MAX_BITS,
  RIBBON_MAX_SHARDS,
  RIBBON_SHARD_TARGET,
  type RibbonOptions,
  buildRibbon,
  buildShardedRibbon,
  buildShardedRibbonFromLoader,
  partitionForRibbon,
  ribbonBitsForFpr,
  ribbonShardCount,
  ribbonShardIndex,
  ribbonShardIndexBatch,
} from './ribbon.js';
export { NearDupIndex } from './neardup.js';
