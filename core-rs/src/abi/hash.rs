//! Exports for xxHash64.

use super::{join_u64, packed};
use crate::hash;

/// Hashes `len` bytes at `ptr` with the seed `(seed_lo, seed_hi)` and writes the u64 result
/// little-endian to `out`.
///
/// # Safety
/// `ptr..ptr+len` must be readable (any `ptr` when `len` is 0) and `out` must point to 8
/// writable bytes inside linear memory, 8-byte aligned.
#[no_mangle]
pub unsafe extern "C" fn meguri_xxh64(ptr: *const u8, len: usize, seed_lo: u32, seed_hi: u32, out: *mut u64) {
    let bytes = if len == 0 {
        &[][..]
    } else {
        // SAFETY: the caller guarantees ptr..ptr+len is readable.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    };
    let h = hash::xxh64(bytes, join_u64(seed_lo, seed_hi));
    // SAFETY: the caller guarantees out is a valid, aligned u64 slot.
    unsafe { out.write(h) }
}

/// Hashes `count` strings packed in `data` (`data_len` bytes) where string `i` spans
/// `offsets[i]..offsets[i+1]`, writing `count` u64 hashes to `out`.
///
/// # Safety
/// `data..data+data_len` readable; `offsets` points to `count + 1` aligned u32 values, each
/// at most `data_len` and non-decreasing; `out` points to `count` writable aligned u64 slots
/// that do not overlap the inputs.
#[no_mangle]
pub unsafe extern "C" fn meguri_xxh64_batch(
    data: *const u8,
    data_len: usize,
    offsets: *const u32,
    count: usize,
    seed_lo: u32,
    seed_hi: u32,
    out: *mut u64,
) {
    // SAFETY: per the contract above, each region is valid for the stated length and the
    // output does not alias the inputs.
    let ((data, offsets), out) = unsafe { (packed(data, data_len, offsets, count), std::slice::from_raw_parts_mut(out, count)) };
    hash::xxh64_batch(data, offsets, join_u64(seed_lo, seed_hi), out);
}
