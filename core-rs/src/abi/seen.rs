//! Exports for the seen-set's batch step ([`crate::seen`]): one call that takes a DRUM set
//! handle (from `meguri_drum_new`) and a blocked Bloom handle (from `meguri_bloom_new` or
//! `meguri_bloom_load`) together. Keys cross as 16-byte URLKeys, 8-byte aligned.

use super::filter::{keys, verdicts};
use crate::bloom::BlockedBloom;
use crate::drum::DrumSet;
use crate::filter::UrlKey;
use crate::seen;

/// Classifies and inserts `n` keys through the filter ([`seen::merge`]): writes 1 (new) or
/// 0 (seen) per key to `out` when it is not null, adds every new key to both structures, and
/// returns the number of new keys.
///
/// # Safety
/// `set` and `filter` are live handles, distinct objects, neither referenced elsewhere for
/// the call, and every key of `set` has been added to `filter` (the SeenSet wrapper pairs
/// them so, and this call keeps it so); `keys_ptr` holds `n` keys (8-byte aligned); `out` is
/// null or has `n` writable bytes. None of these regions overlap each other or the handles'
/// own memory.
#[no_mangle]
pub unsafe extern "C" fn meguri_seen_merge(
    set: *mut DrumSet,
    filter: *mut BlockedBloom,
    keys_ptr: *const UrlKey,
    n: usize,
    out: *mut u8,
) -> usize {
    // SAFETY: `keys_ptr` holds n aligned keys per the contract.
    let ks = unsafe { keys(keys_ptr, n) };
    // SAFETY: both handles are live and unaliased for the call per the contract.
    let (set, filter) = unsafe { (&mut *set, &mut *filter) };
    if out.is_null() {
        let mut scratch = vec![0u8; n];
        seen::merge(set, filter, ks, &mut scratch)
    } else {
        // SAFETY: a non-null `out` has n writable bytes aliasing nothing else.
        seen::merge(set, filter, ks, unsafe { verdicts(out, n) })
    }
}

/// Writes 1 (present) or 0 (absent) per key to `out` from the exact set ([`seen::contains`]).
/// `filter` is part of the signature the TypeScript side pairs with every seen-set call; the
/// lookup no longer reads it (an exact probe costs what a filter query would).
///
/// # Safety
/// `set` and `filter` are live handles (read only during the call) paired as in
/// [`meguri_seen_merge`]; `keys_ptr` holds `n` keys (8-byte aligned); `out` has `n` writable
/// bytes overlapping neither the keys nor the handles' memory.
#[no_mangle]
pub unsafe extern "C" fn meguri_seen_contains(
    set: *const DrumSet,
    filter: *const BlockedBloom,
    keys_ptr: *const UrlKey,
    n: usize,
    out: *mut u8,
) {
    // SAFETY: per the contract: live handles, n aligned keys, n writable output bytes.
    let (set, ks, out) = unsafe { (&*set, keys(keys_ptr, n), verdicts(out, n)) };
    let _ = filter;
    seen::contains(set, ks, out);
}

/// Adds every key of `set` to `filter` ([`seen::fill`]).
///
/// # Safety
/// `set` is a live DRUM handle and `filter` a live Bloom handle, distinct objects; `filter`
/// is not referenced elsewhere for the call.
#[no_mangle]
pub unsafe extern "C" fn meguri_seen_fill(set: *const DrumSet, filter: *mut BlockedBloom) {
    // SAFETY: both handles are live, and the filter is exclusively ours for the call.
    let (set, filter) = unsafe { (&*set, &mut *filter) };
    seen::fill(set, filter);
}
