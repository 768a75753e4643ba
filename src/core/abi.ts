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

/** Every export the core provides. Later kernels extend this intersection. */
export type CoreExports = MemoryExports & HashExports & FilterExports & BloomExports & RibbonExports;

/** Names checked at load time, so a stale or foreign binary fails loudly and early. */
export const REQUIRED_FUNCTIONS: readonly string[] = [
  'meguri_abi_version',
  'meguri_alloc',
  'meguri_free',
  'meguri_xxh64',
  'meguri_xxh64_batch',
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
];
