//! The C-ABI surface the TypeScript wrappers call: the only place in the crate with raw
//! pointers and `extern "C"` functions.
//!
//! Conventions every export follows (src/core/abi.ts types them once on the TS side):
//! - Pointers are byte offsets into the module's linear memory, obtained from
//!   [`mem::meguri_alloc`] (or pointing into an object the crate handed out) and valid for
//!   the lengths stated in each function's `# Safety` section.
//! - 64-bit values cross as two u32 halves (`lo`, `hi`) or through memory, so the JS side
//!   needs no BigInt on hot paths.
//! - A 128-bit URLKey is 16 bytes in memory: HostKey as a little-endian u64, then PathKey as
//!   a little-endian u64 (as u32 lanes: `[hostLo, hostHi, pathLo, pathHi]`).
//! - Objects (filters, indexes) are heap boxes returned as opaque handles and released by
//!   their own `*_free` export; a handle is never used after it is freed.
//! - Nothing here panics on well-formed input; a violated precondition aborts the instance
//!   (panic = "abort"), which the TS side reports as a `WasmAbiError` rather than guessing.

pub mod bloom;
pub mod canon;
pub mod drum;
pub mod filter;
pub mod hash;
pub mod mem;
pub mod neardup;
pub mod ribbon;
pub mod seen;
pub mod simhash;
pub mod urlkey;
pub mod wheel;

/// Bumped whenever an export changes signature or meaning; the loader refuses a binary whose
/// version it was not written for.
pub const ABI_VERSION: u32 = 1;

/// Returns [`ABI_VERSION`].
#[no_mangle]
pub extern "C" fn meguri_abi_version() -> u32 {
    ABI_VERSION
}

/// Joins two u32 halves into a u64.
#[inline(always)]
pub(crate) fn join_u64(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | (u64::from(hi) << 32)
}

/// Builds the `data` and `offsets` slices of a packed string batch.
///
/// # Safety
/// `data..data+data_len` readable (any `data` when `data_len` is 0); `offsets` points to
/// `count + 1` aligned u32 values, non-decreasing and at most `data_len`.
pub(crate) unsafe fn packed<'a>(data: *const u8, data_len: usize, offsets: *const u32, count: usize) -> (&'a [u8], &'a [u32]) {
    // SAFETY: per the contract, both regions are readable for these lengths.
    unsafe {
        (
            if data_len == 0 { &[][..] } else { std::slice::from_raw_parts(data, data_len) },
            std::slice::from_raw_parts(offsets, count + 1),
        )
    }
}
