//! Exports for building ribbon filters (`crate::ribbon`) and routing keys to shards.
//! Querying a built ribbon goes through the resident-filter exports in `abi::filter`.

use super::filter::{into_bytes_handle, keys, put_status};
use crate::filter::UrlKey;
use crate::ribbon::{shard_index, BuildError, BuilderError, RibbonBuilder};

/// Status codes of the builder exports (0 is success).
const MISROUTED: u32 = 1;
const OUT_OF_MEMORY: u32 = 2;
const UNSOLVABLE: u32 = 3;
const BAD_INDEX: u32 = 4;
const REPEATED: u32 = 5;
const MISSING: u32 = 6;
const COUNT_MISMATCH: u32 = 7;

/// Encodes a builder error as (status, detail).
fn code(e: BuilderError) -> (u32, f64) {
    match e {
        BuilderError::Build(BuildError::Misrouted(at)) => (MISROUTED, at as f64),
        BuilderError::Build(BuildError::OutOfMemory) => (OUT_OF_MEMORY, 0.0),
        BuilderError::Build(BuildError::Unsolvable) => (UNSOLVABLE, 0.0),
        BuilderError::BadIndex => (BAD_INDEX, 0.0),
        BuilderError::Repeated => (REPEATED, 0.0),
        BuilderError::Missing(i) => (MISSING, f64::from(i)),
        BuilderError::CountMismatch(n) => (COUNT_MISMATCH, n as f64),
    }
}

/// Writes a detail value through an optional out-pointer.
///
/// # Safety
/// `out` must be null or a writable, 8-byte aligned f64.
unsafe fn put_detail(out: *mut f64, v: f64) {
    if !out.is_null() {
        // SAFETY: non-null and, per the contract, writable and aligned.
        unsafe { out.write(v) }
    }
}

/// A builder for `shard_count` shards (a power of two, 1..=4096) of `bits`-bit
/// fingerprints (1..=16) over `expected_len` keys in all (a double below 2⁵³); null for
/// out-of-range arguments.
#[no_mangle]
pub extern "C" fn meguri_ribbon_builder_new(shard_count: u32, bits: u32, expected_len: f64) -> *mut RibbonBuilder {
    if !(expected_len >= 0.0 && expected_len <= 9_007_199_254_740_992.0) {
        return std::ptr::null_mut();
    }
    match RibbonBuilder::new(shard_count, bits, expected_len as u64) {
        Some(b) => Box::into_raw(Box::new(b)),
        None => std::ptr::null_mut(),
    }
}

/// Releases a builder.
///
/// # Safety
/// `b` must be a live handle from [`meguri_ribbon_builder_new`] (or null, ignored); it is
/// dead afterwards.
#[no_mangle]
pub unsafe extern "C" fn meguri_ribbon_builder_free(b: *mut RibbonBuilder) {
    if !b.is_null() {
        // SAFETY: b came from Box::into_raw above and is freed once.
        drop(unsafe { Box::from_raw(b) });
    }
}

/// Solves shard `index` over `count` keys at `keys_ptr`. Returns 0, or a status code with a
/// detail (the misrouted key's position) written to `detail`.
///
/// # Safety
/// `b` live and not aliased; `keys_ptr` holds `count` keys (8-byte aligned) outside the
/// builder's memory; `detail` null or a writable aligned f64.
#[no_mangle]
pub unsafe extern "C" fn meguri_ribbon_builder_add_shard(
    b: *mut RibbonBuilder,
    index: u32,
    keys_ptr: *const UrlKey,
    count: usize,
    detail: *mut f64,
) -> u32 {
    // SAFETY: per the contract above.
    let (b, ks) = unsafe { (&mut *b, keys(keys_ptr, count)) };
    match b.add_shard(index, ks) {
        Ok(()) => 0,
        Err(e) => {
            let (status, d) = code(e);
            // SAFETY: per the contract on detail.
            unsafe { put_detail(detail, d) };
            status
        }
    }
}

/// Emits the blob once every shard is in: a byte-buffer handle, or null with a status code
/// in `status` and its detail (missing shard, actual key count) in `detail`.
///
/// # Safety
/// `b` live; `status` null or a writable aligned u32; `detail` null or a writable aligned f64.
#[no_mangle]
pub unsafe extern "C" fn meguri_ribbon_builder_finish(b: *const RibbonBuilder, status: *mut u32, detail: *mut f64) -> *mut Vec<u8> {
    // SAFETY: b is live.
    match unsafe { &*b }.finish() {
        Ok(blob) => {
            // SAFETY: per the contract on status.
            unsafe { put_status(status, 0) };
            into_bytes_handle(blob)
        }
        Err(e) => {
            let (s, d) = code(e);
            // SAFETY: per the contracts on status and detail.
            unsafe {
                put_status(status, s);
                put_detail(detail, d);
            }
            std::ptr::null_mut()
        }
    }
}

/// Writes the shard (of `2^log2`, log2 ≤ 12) of each of `count` keys as a u32.
///
/// # Safety
/// `keys_ptr` holds `count` keys; `out` has `count` writable, 4-byte aligned u32 slots that
/// do not overlap the keys.
#[no_mangle]
pub unsafe extern "C" fn meguri_ribbon_shard_index_batch(keys_ptr: *const UrlKey, count: usize, log2: u32, out: *mut u32) {
    let log2 = log2.min(crate::ribbon::MAX_SHARDS.trailing_zeros());
    // SAFETY: per the contract above.
    let ks = unsafe { keys(keys_ptr, count) };
    let out = if count == 0 {
        &mut []
    } else {
        // SAFETY: out has count writable aligned u32 slots, disjoint from the keys.
        unsafe { std::slice::from_raw_parts_mut(out, count) }
    };
    for (k, o) in ks.iter().zip(out.iter_mut()) {
        *o = shard_index(k, log2);
    }
}
