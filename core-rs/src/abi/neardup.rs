//! Exports for the near-duplicate index ([`crate::neardup`]). Simhashes cross as u32 lane
//! pairs `[lo, hi]`, keys as four u32 lanes; the index is an opaque handle.

use crate::drum::{key_from_lanes, key_to_lanes};
use crate::neardup::{NearDup, MAX_DISTANCE};

/// Turns a handle back into an exclusive reference.
///
/// # Safety
/// `h` must be a live handle from [`meguri_neardup_new`] with no other reference alive (the
/// single-threaded JS caller never overlaps calls).
unsafe fn index_mut<'a>(h: *mut NearDup) -> &'a mut NearDup {
    // SAFETY: the caller guarantees `h` is live and unaliased for the call.
    unsafe { &mut *h }
}

#[inline]
fn sim_of(lanes: &[u32], i: usize) -> u64 {
    u64::from(lanes[2 * i]) | (u64::from(lanes[2 * i + 1]) << 32)
}

/// Creates an empty index and returns its handle.
#[no_mangle]
pub extern "C" fn meguri_neardup_new() -> *mut NearDup {
    Box::into_raw(Box::new(NearDup::new()))
}

/// Frees an index.
///
/// # Safety
/// `h` must come from [`meguri_neardup_new`] and not have been freed; null is ignored.
#[no_mangle]
pub unsafe extern "C" fn meguri_neardup_free(h: *mut NearDup) {
    if !h.is_null() {
        // SAFETY: the caller guarantees `h` is a live box from meguri_neardup_new, freed once.
        drop(unsafe { Box::from_raw(h) });
    }
}

/// Number of distinct simhashes stored.
///
/// # Safety
/// `h` must be a live handle from [`meguri_neardup_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_neardup_len(h: *mut NearDup) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { index_mut(h) }.len()
}

/// Bytes of linear memory the index holds.
///
/// # Safety
/// `h` must be a live handle from [`meguri_neardup_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_neardup_memory_bytes(h: *mut NearDup) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { index_mut(h) }.memory_bytes()
}

/// Folds pending entries into the sorted tables (queries do this lazily; exposed so a caller
/// can pay it at a moment of its choosing).
///
/// # Safety
/// `h` must be a live handle from [`meguri_neardup_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_neardup_flush(h: *mut NearDup) {
    // SAFETY: forwarded from this function's contract.
    unsafe { index_mut(h) }.flush()
}

/// Adds `n` simhashes (lane pairs at `sims`) with their keys (4 lanes each at `keys`);
/// `added[i]` (when non-null) becomes 1 if entry `i` was stored, 0 if its simhash was already
/// present. Returns the number stored.
///
/// # Safety
/// `h` live; `sims` points to `2n` and `keys` to `4n` aligned u32 values; `added` is null or
/// points to `n` writable bytes overlapping neither.
#[no_mangle]
pub unsafe extern "C" fn meguri_neardup_add_batch(h: *mut NearDup, sims: *const u32, keys: *const u32, n: usize, added: *mut u8) -> usize {
    if n == 0 {
        return 0;
    }
    // SAFETY: per the contract, the input regions hold 2n and 4n lanes.
    let (sims, keys) = unsafe { (std::slice::from_raw_parts(sims, 2 * n), std::slice::from_raw_parts(keys, 4 * n)) };
    let mut flags = if added.is_null() {
        None
    } else {
        // SAFETY: non-null `added` holds n writable bytes aliasing no input.
        Some(unsafe { std::slice::from_raw_parts_mut(added, n) })
    };
    // SAFETY: `h` is live and unaliased per the contract.
    let index = unsafe { index_mut(h) };
    let mut count = 0;
    for i in 0..n {
        let stored = index.add(sim_of(sims, i), key_from_lanes(keys, i));
        count += stored as usize;
        if let Some(f) = flags.as_deref_mut() {
            f[i] = stored as u8;
        }
    }
    count
}

/// For each of `n` simhashes, writes the key of the earliest-added entry within distance
/// `k` (≤ 3) to `out_keys` (4 lanes) and 1 to `found[i]`, or 0 to `found[i]` (leaving those
/// lanes untouched) when none is near.
///
/// # Safety
/// `h` live; `sims` points to `2n` aligned u32 values; `out_keys` to `4n` writable aligned u32
/// slots and `found` to `n` writable bytes, the three regions disjoint.
#[no_mangle]
pub unsafe extern "C" fn meguri_neardup_find_batch(h: *mut NearDup, sims: *const u32, n: usize, k: u32, out_keys: *mut u32, found: *mut u8) {
    if n == 0 || k > MAX_DISTANCE {
        return;
    }
    // SAFETY: per the contract, the regions are valid for these lengths and disjoint.
    let (sims, out_keys, found) = unsafe {
        (
            std::slice::from_raw_parts(sims, 2 * n),
            std::slice::from_raw_parts_mut(out_keys, 4 * n),
            std::slice::from_raw_parts_mut(found, n),
        )
    };
    // SAFETY: `h` is live and unaliased per the contract.
    let index = unsafe { index_mut(h) };
    for i in 0..n {
        match index.find(sim_of(sims, i), k) {
            Some(key) => {
                key_to_lanes(key, out_keys, i);
                found[i] = 1;
            }
            None => found[i] = 0,
        }
    }
}

/// Finds every entry within distance `k` (≤ 3) of the simhash `(lo, hi)` and returns how many;
/// their keys (4 lanes each, insertion order) are at [`meguri_neardup_out_ptr`] until the next
/// call on this index.
///
/// # Safety
/// `h` must be a live handle from [`meguri_neardup_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_neardup_find_all(h: *mut NearDup, lo: u32, hi: u32, k: u32) -> usize {
    if k > MAX_DISTANCE {
        return 0;
    }
    // SAFETY: forwarded from this function's contract.
    unsafe { index_mut(h) }.find_all(u64::from(lo) | (u64::from(hi) << 32), k).len() / 4
}

/// Byte offset of the lanes the last [`meguri_neardup_find_all`] produced.
///
/// # Safety
/// `h` must be a live handle from [`meguri_neardup_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_neardup_out_ptr(h: *mut NearDup) -> *const u32 {
    // SAFETY: forwarded from this function's contract.
    unsafe { index_mut(h) }.last_out().as_ptr()
}
