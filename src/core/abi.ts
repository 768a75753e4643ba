/**
 * The typed shape of the WebAssembly core's exports (core-rs/src/abi). This is the one place
 * the raw exports are described; wrappers elsewhere call through these types, so a changed
 * signature is a compile error here instead of a silent misread at run time.
 *
 * Conventions (mirroring core-rs/src/abi/mod.rs): pointers are byte offsets into
 * `memory`; u64 values cross as (lo, hi) u32 pairs or through memory; a 128-bit URLKey is
 * 16 bytes, HostKey then PathKey, each little-endian (u32 lanes `[hostLo, hostHi, pathLo,
 * pathHi]`). Every pointer argument names memory the caller owns for the call's duration.
 */

/** The ABI version this build of the TypeScript side was written against. */
export const EXPECTED_ABI_VERSION = 1;

/** Memory management and versioning. */
export interface MemoryExports {
  readonly memory: WebAssembly.Memory;
  meguri_abi_version(): number;
  meguri_alloc(len: number): number;
  meguri_free(ptr: number, len: number): void;
}

/** xxHash64 (core-rs/src/abi/hash.rs). */
export interface HashExports {
  meguri_xxh64(ptr: number, len: number, seedLo: number, seedHi: number, out: number): void;
  meguri_xxh64_batch(
    data: number,
    dataLen: number,
    offsets: number,
    count: number,
    seedLo: number,
    seedHi: number,
    out: number,
  ): void;
}

/**
 * Origin-memoized URL keys (core-rs/src/abi/urlkey.rs). `h` is an origin table handle;
 * URLs and origins are packed UTF-8 with a u32 offset table; an id of `u32::MAX` (-1 from
 * `meguri_urlkey_one`) means the origin is not held. `ids` may be 0 in `meguri_urlkey_batch`.
 */
/** Batch canonicalizer (core-rs/src/abi/canon.rs): one call per page's links. */
export interface CanonExports {
  meguri_canon_batch(
    base: number,
    baseLen: number,
    data: number,
    dataLen: number,
    offsets: number,
    count: number,
    lanes: number,
    arena: number,
    arenaLen: number,
  ): number;
  /** Returns how many link indexes it wrote to `pending` (links left to the caller). */
  meguri_admit_links(
    origins: number,
    set: number,
    filter: number,
    base: number,
    baseLen: number,
    data: number,
    dataLen: number,
    offsets: number,
    count: number,
    seedLo: number,
    seedHi: number,
    lanes: number,
    arena: number,
    arenaLen: number,
    keys: number,
    verdicts: number,
    pending: number,
  ): number;
}

export interface UrlKeyExports {
  meguri_urlkey_table_new(): number;
  meguri_urlkey_table_free(h: number): void;
  meguri_urlkey_table_len(h: number): number;
  meguri_urlkey_table_memory_bytes(h: number): number;
  meguri_urlkey_table_clear(h: number): void;
  meguri_urlkey_table_insert_batch(h: number, data: number, dataLen: number, offsets: number, count: number, hosts: number, ids: number): void;
  meguri_urlkey_batch(
    h: number,
    data: number,
    dataLen: number,
    offsets: number,
    count: number,
    seedLo: number,
    seedHi: number,
    keys: number,
    ids: number,
    misses: number,
  ): number;
  meguri_urlkey_one(h: number, url: number, len: number, seedLo: number, seedHi: number, key: number): number;
}

/** DRUM exact key set (core-rs/src/abi/drum.rs). `h` is a set handle; 0 = absent array. */
export interface DrumExports {
  meguri_drum_new(bits: number): number;
  meguri_drum_new_planned(bits: number, expected: number): number;
  meguri_drum_free(h: number): void;
  meguri_drum_len(h: number): number;
  meguri_drum_memory_bytes(h: number): number;
  meguri_drum_merge(h: number, keys: number, payloads: number, n: number, verdicts: number): number;
  meguri_drum_contains_batch(h: number, keys: number, n: number, out: number): void;
  meguri_drum_get_batch(h: number, keys: number, n: number, missing: number, out: number): void;
  meguri_drum_export(h: number, from: number, count: number, outKeys: number, outPayloads: number): number;
  meguri_drum_append_sorted(h: number, keys: number, payloads: number, n: number): number;
}

/** Hierarchical timing wheel (core-rs/src/abi/wheel.rs). `h` is a wheel handle. */
export interface WheelExports {
  meguri_wheel_new(now: number): number;
  meguri_wheel_free(h: number): void;
  meguri_wheel_len(h: number): number;
  meguri_wheel_now(h: number): number;
  meguri_wheel_memory_bytes(h: number): number;
  meguri_wheel_schedule(h: number, id: number, tick: number): void;
  meguri_wheel_schedule_batch(h: number, ids: number, ticks: number, n: number): void;
  meguri_wheel_cancel(h: number, id: number): number;
  /** The tick, or -1 when the id is not scheduled. */
  meguri_wheel_tick_of(h: number, id: number): number;
  /** The earliest tick, or -1 when empty. */
  meguri_wheel_next_tick(h: number): number;
  meguri_wheel_advance(h: number, now: number): number;
  meguri_wheel_out_ptr(h: number): number;
}

/** Simhash (core-rs/src/abi/simhash.rs): packed UTF-8 with a u32 offset table. */
export interface SimhashExports {
  meguri_simhash_text_batch(data: number, dataLen: number, offsets: number, count: number, out: number): void;
  meguri_simhash_features(data: number, dataLen: number, offsets: number, weights: number, count: number, out: number): void;
}

/**
 * Exports shared by the filters (core-rs/src/abi/filter.rs): byte buffers the core hands
 * back (serialized blobs) and the read-only resident filter loaded from any blob kind.
 * Handles are opaque pointers; status codes are the `BlobError` discriminants.
 */
export interface FilterExports {
  meguri_bytes_ptr(bytes: number): number;
  meguri_bytes_len(bytes: number): number;
  meguri_bytes_free(bytes: number): void;
  meguri_filter_load(ptr: number, len: number, statusOut: number): number;
  meguri_filter_free(filter: number): void;
  meguri_filter_kind(filter: number): number;
  meguri_filter_len(filter: number): number;
  meguri_filter_payload_bits(filter: number): number;
  meguri_filter_query_batch(filter: number, keys: number, count: number, out: number): void;
  meguri_filter_query_key(filter: number, h0: number, h1: number, p0: number, p1: number): number;
}

/** The mutable blocked Bloom filter (core-rs/src/abi/bloom.rs). */
export interface BloomExports {
  meguri_bloom_new(capacity: number, fpRate: number): number;
  meguri_bloom_free(filter: number): void;
  meguri_bloom_add_batch(filter: number, keys: number, count: number): void;
  meguri_bloom_add_key(filter: number, h0: number, h1: number, p0: number, p1: number): void;
  meguri_bloom_query_batch(filter: number, keys: number, count: number, out: number): void;
  meguri_bloom_query_key(filter: number, h0: number, h1: number, p0: number, p1: number): number;
  meguri_bloom_len(filter: number): number;
  meguri_bloom_capacity(filter: number): number;
  meguri_bloom_fp_rate(filter: number): number;
  meguri_bloom_probes(filter: number): number;
  meguri_bloom_payload_bits(filter: number): number;
  meguri_bloom_marshal(filter: number): number;
  meguri_bloom_load(ptr: number, len: number, statusOut: number): number;
}

/** Ribbon construction and shard routing (core-rs/src/abi/ribbon.rs). */
export interface RibbonExports {
  meguri_ribbon_builder_new(shardCount: number, bits: number, expectedLen: number): number;
  meguri_ribbon_builder_free(builder: number): void;
  meguri_ribbon_builder_add_shard(builder: number, index: number, keys: number, count: number, detailOut: number): number;
  meguri_ribbon_builder_finish(builder: number, statusOut: number, detailOut: number): number;
  meguri_ribbon_shard_index_batch(keys: number, count: number, log2: number, out: number): void;
}

/**
 * The seen-set's batch step (core-rs/src/abi/seen.rs): a DRUM set handle and a Bloom handle
 * in one call. `out` may be 0 in `meguri_seen_merge` (no verdicts wanted).
 */
export interface SeenExports {
  meguri_seen_merge(set: number, filter: number, keys: number, n: number, out: number): number;
  meguri_seen_contains(set: number, filter: number, keys: number, n: number, out: number): void;
  meguri_seen_fill(set: number, filter: number): void;
}

/** Near-duplicate index (core-rs/src/abi/neardup.rs). `h` is an index handle. */
export interface NearDupExports {
  meguri_neardup_new(): number;
  meguri_neardup_free(h: number): void;
  meguri_neardup_len(h: number): number;
  meguri_neardup_memory_bytes(h: number): number;
  meguri_neardup_flush(h: number): void;
  meguri_neardup_add_batch(h: number, sims: number, keys: number, n: number, added: number): number;
  meguri_neardup_find_batch(h: number, sims: number, n: number, k: number, outKeys: number, found: number): void;
  meguri_neardup_find_all(h: number, lo: number, hi: number, k: number): number;
  meguri_neardup_out_ptr(h: number): number;
}

/** Every export the core provides. Later kernels extend this intersection. */
export type CoreExports = MemoryExports &
  HashExports &
  DrumExports &
  WheelExports &
  SimhashExports &
  FilterExports &
  BloomExports &
  RibbonExports &
  SeenExports &
  NearDupExports &
  UrlKeyExports &
  CanonExports;

/** Names checked at load time, so a stale or foreign binary fails loudly and early. */
export const REQUIRED_FUNCTIONS: readonly string[] = [
  'meguri_abi_version',
  'meguri_alloc',
  'meguri_free',
  'meguri_xxh64',
  'meguri_xxh64_batch',
  'meguri_drum_new',
  'meguri_drum_new_planned',
  'meguri_drum_free',
  'meguri_drum_len',
  'meguri_drum_memory_bytes',
  'meguri_drum_merge',
  'meguri_drum_contains_batch',
  'meguri_drum_get_batch',
  'meguri_drum_export',
  'meguri_drum_append_sorted',
  'meguri_wheel_new',
  'meguri_wheel_free',
  'meguri_wheel_len',
  'meguri_wheel_now',
  'meguri_wheel_memory_bytes',
  'meguri_wheel_schedule',
  'meguri_wheel_schedule_batch',
  'meguri_wheel_cancel',
  'meguri_wheel_tick_of',
  'meguri_wheel_next_tick',
  'meguri_wheel_advance',
  'meguri_wheel_out_ptr',
  'meguri_simhash_text_batch',
  'meguri_simhash_features',
  'meguri_bytes_ptr',
  'meguri_bytes_len',
  'meguri_bytes_free',
  'meguri_filter_load',
  'meguri_filter_free',
  'meguri_filter_kind',
  'meguri_filter_len',
  'meguri_filter_payload_bits',
  'meguri_filter_query_batch',
  'meguri_filter_query_key',
  'meguri_bloom_new',
  'meguri_bloom_free',
  'meguri_bloom_add_batch',
  'meguri_bloom_add_key',
  'meguri_bloom_query_batch',
  'meguri_bloom_query_key',
  'meguri_bloom_len',
  'meguri_bloom_capacity',
  'meguri_bloom_fp_rate',
  'meguri_bloom_probes',
  'meguri_bloom_payload_bits',
  'meguri_bloom_marshal',
  'meguri_bloom_load',
  'meguri_ribbon_builder_new',
  'meguri_ribbon_builder_free',
  'meguri_ribbon_builder_add_shard',
  'meguri_ribbon_builder_finish',
  'meguri_ribbon_shard_index_batch',
  'meguri_seen_merge',
  'meguri_seen_contains',
  'meguri_seen_fill',
  'meguri_neardup_new',
  'meguri_neardup_free',
  'meguri_neardup_len',
  'meguri_neardup_memory_bytes',
  'meguri_neardup_flush',
  'meguri_neardup_add_batch',
  'meguri_neardup_find_batch',
  'meguri_neardup_find_all',
  'meguri_neardup_out_ptr',
  'meguri_urlkey_table_new',
  'meguri_urlkey_table_free',
  'meguri_urlkey_table_len',
  'meguri_urlkey_table_memory_bytes',
  'meguri_urlkey_table_clear',
  'meguri_urlkey_table_insert_batch',
  'meguri_urlkey_batch',
  'meguri_urlkey_one',
  'meguri_canon_batch',
  'meguri_admit_links',
];
