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

/** Every export the core provides. Later kernels extend this intersection. */
export type CoreExports = MemoryExports & HashExports;

/** Names checked at load time, so a stale or foreign binary fails loudly and early. */
export const REQUIRED_FUNCTIONS: readonly string[] = [
  'meguri_abi_version',
  'meguri_alloc',
  'meguri_free',
  'meguri_xxh64',
  'meguri_xxh64_batch',
];
