//! Exports for the simhash ([`crate::simhash`]). Texts and features cross as UTF-8 packed
//! back to back with a u32 offset table, one call per batch.

use super::packed;
use crate::simhash;

/// Simhashes `count` UTF-8 texts, text `i` spanning `offsets[i]..offsets[i+1]` of `data`,
/// writing one u64 per text to `out`.
///
/// # Safety
/// As for [`packed`], plus: `out` points to `count` writable aligned u64 slots that overlap
/// neither input.
#[no_mangle]
pub unsafe extern "C" fn meguri_simhash_text_batch(data: *const u8, data_len: usize, offsets: *const u32, count: usize, out: *mut u64) {
    // SAFETY: the input contract is packed's; `out` holds `count` disjoint slots.
    let ((data, offsets), out) = unsafe { (packed(data, data_len, offsets, count), std::slice::from_raw_parts_mut(out, count)) };
    simhash::simhash_text_batch(data, offsets, out);
}

/// Simhash of `count` weighted features: feature `j` spans `offsets[j]..offsets[j+1]` of
/// `data` and weighs `weights[j]`; the u64 result is written to `out`.
///
/// # Safety
/// As for [`packed`], plus: `weights` points to `count` aligned f64 values and `out` to one
/// writable aligned u64 slot.
#[no_mangle]
pub unsafe extern "C" fn meguri_simhash_features(
    data: *const u8,
    data_len: usize,
    offsets: *const u32,
    weights: *const f64,
    count: usize,
    out: *mut u64,
) {
    // SAFETY: the input contract is packed's; `weights` holds `count` values.
    let ((data, offsets), weights) = unsafe {
        (
            packed(data, data_len, offsets, count),
            if count == 0 { &[][..] } else { std::slice::from_raw_parts(weights, count) },
        )
    };
    let h = simhash::simhash_features(data, offsets, weights);
    // SAFETY: `out` is one writable aligned u64 slot per the contract.
    unsafe { out.write(h) }
}
