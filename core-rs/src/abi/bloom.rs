//! Exports for the mutable blocked Bloom filter (`crate::bloom`).

use super::filter::{bytes, into_bytes_handle, keys, put_status, verdicts};
use super::join_u64;
use crate::bloom::BlockedBloom;
use crate::filter::{open, BlobError, Membership, UrlKey, KIND_BLOOM};

/// A new empty filter sized for `capacity` keys (a positive integer below 2⁵³, passed as
/// a double) at `fp_rate`; null when no plan fits or memory runs out.
#[no_mangle]
pub extern "C" fn meguri_bloom_new(capacity: f64, fp_rate: f64) -> *mut BlockedBloom {
    if !(capacity >= 1.0 && capacity <= 9_007_199_254_740_992.0) || !(fp_rate > 0.0 && fp_rate < 1.0) {
        return std::ptr::null_mut();
    }
    match BlockedBloom::new(capacity as u64, fp_rate) {
        Some(f) => Box::into_raw(Box::new(f)),
        None => std::ptr::null_mut(),
    }
}

/// Releases a filter.
///
/// # Safety
/// `f` must be a live handle from [`meguri_bloom_new`] or [`meguri_bloom_load`] (or null,
/// ignored); it is dead afterwards.
#[no_mangle]
pub unsafe extern "C" fn meguri_bloom_free(f: *mut BlockedBloom) {
    if !f.is_null() {
        // SAFETY: f came from Box::into_raw in this module and is freed once.
        drop(unsafe { Box::from_raw(f) });
    }
}

/// Adds `count` keys.
///
/// # Safety
/// `f` live and not aliased for the call; `keys_ptr` holds `count` keys (8-byte aligned)
/// outside the filter's own memory.
#[no_mangle]
pub unsafe extern "C" fn meguri_bloom_add_batch(f: *mut BlockedBloom, keys_ptr: *const UrlKey, count: usize) {
    // SAFETY: per the contract above.
    let (f, ks) = unsafe { (&mut *f, keys(keys_ptr, count)) };
    f.add_batch(ks);
}

/// Adds one key given as four u32 lanes.
///
/// # Safety
/// `f` must be a live filter handle, not aliased for the call.
#[no_mangle]
pub unsafe extern "C" fn meguri_bloom_add_key(f: *mut BlockedBloom, h0: u32, h1: u32, p0: u32, p1: u32) {
    // SAFETY: f is live and exclusively ours for the call.
    unsafe { &mut *f }.add(&[join_u64(h0, h1), join_u64(p0, p1)]);
}

/// Writes one verdict byte per key.
///
/// # Safety
/// `f` live; `keys_ptr` holds `count` keys; `out` has `count` writable bytes overlapping
/// neither the keys nor the filter.
#[no_mangle]
pub unsafe extern "C" fn meguri_bloom_query_batch(f: *const BlockedBloom, keys_ptr: *const UrlKey, count: usize, out: *mut u8) {
    // SAFETY: per the contract above.
    let (f, ks, out) = unsafe { (&*f, keys(keys_ptr, count), verdicts(out, count)) };
    f.may_contain_batch(ks, out);
}

/// The verdict for one key given as four u32 lanes.
///
/// # Safety
/// `f` must be a live filter handle.
#[no_mangle]
pub unsafe extern "C" fn meguri_bloom_query_key(f: *const BlockedBloom, h0: u32, h1: u32, p0: u32, p1: u32) -> u32 {
    // SAFETY: f is live.
    u32::from(unsafe { &*f }.may_contain(&[join_u64(h0, h1), join_u64(p0, p1)]))
}

/// `add` calls so far, as a double.
///
/// # Safety
/// `f` must be a live filter handle.
#[no_mangle]
pub unsafe extern "C" fn meguri_bloom_len(f: *const BlockedBloom) -> f64 {
    // SAFETY: f is live.
    unsafe { &*f }.len() as f64
}

/// The planned capacity, as a double.
///
/// # Safety
/// `f` must be a live filter handle.
#[no_mangle]
pub unsafe extern "C" fn meguri_bloom_capacity(f: *const BlockedBloom) -> f64 {
    // SAFETY: f is live.
    unsafe { &*f }.capacity() as f64
}

/// The target false-positive rate the filter was planned for.
///
/// # Safety
/// `f` must be a live filter handle.
#[no_mangle]
pub unsafe extern "C" fn meguri_bloom_fp_rate(f: *const BlockedBloom) -> f64 {
    // SAFETY: f is live.
    unsafe { &*f }.fp_rate()
}

/// Probes per key.
///
/// # Safety
/// `f` must be a live filter handle.
#[no_mangle]
pub unsafe extern "C" fn meguri_bloom_probes(f: *const BlockedBloom) -> u32 {
    // SAFETY: f is live.
    unsafe { &*f }.probes()
}

/// Size of the bit array in bits, as a double.
///
/// # Safety
/// `f` must be a live filter handle.
#[no_mangle]
pub unsafe extern "C" fn meguri_bloom_payload_bits(f: *const BlockedBloom) -> f64 {
    // SAFETY: f is live.
    unsafe { &*f }.payload_bits() as f64
}

/// Serializes the filter; returns a byte-buffer handle (see `meguri_bytes_ptr`).
///
/// # Safety
/// `f` must be a live filter handle.
#[no_mangle]
pub unsafe extern "C" fn meguri_bloom_marshal(f: *const BlockedBloom) -> *mut Vec<u8> {
    // SAFETY: f is live.
    into_bytes_handle(unsafe { &*f }.to_blob())
}

/// Restores a mutable filter from a kind-0 blob. Returns its handle, or null with a
/// `BlobError` code in `status` (`WrongKind` for a valid blob of another kind).
///
/// # Safety
/// `ptr..ptr + len` readable for the call; `status` null or a writable aligned u32.
#[no_mangle]
pub unsafe extern "C" fn meguri_bloom_load(ptr: *const u8, len: usize, status: *mut u32) -> *mut BlockedBloom {
    // SAFETY: the caller staged len readable bytes at ptr.
    let blob = unsafe { bytes(ptr, len) };
    let parsed = open(blob).and_then(|(kind, body)| {
        if kind == KIND_BLOOM {
            BlockedBloom::from_body(body)
        } else {
            Err(BlobError::WrongKind)
        }
    });
    let (handle, code) = match parsed {
        Ok(f) => (Box::into_raw(Box::new(f)), 0),
        Err(e) => (std::ptr::null_mut(), e as u32),
    };
    // SAFETY: per the contract on status.
    unsafe { put_status(status, code) };
    handle
}
