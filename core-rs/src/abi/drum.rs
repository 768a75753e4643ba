//! Exports for the DRUM exact key set ([`crate::drum`]).
//!
//! Keys cross as u32 lanes, four per key (`[hostLo, hostHi, pathLo, pathHi]`); the set is an
//! opaque handle from [`meguri_drum_new`]. An optional array is passed as a null pointer
//! (offset 0, which the allocator never returns) when absent.

use crate::drum::{key_from_lanes, DrumSet, Key, MAX_BUCKET_BITS};

/// Reads `n` keys from lanes at `keys` into a vector of [`Key`]s.
///
/// # Safety
/// `keys` must point to `4 * n` readable, 4-byte-aligned u32 values (any pointer when `n` is 0).
unsafe fn read_keys(keys: *const u32, n: usize) -> Vec<Key> {
    if n == 0 {
        return Vec::new();
    }
    // SAFETY: the caller guarantees 4·n aligned u32 values are readable at `keys`.
    let lanes = unsafe { std::slice::from_raw_parts(keys, n * 4) };
    (0..n).map(|i| key_from_lanes(lanes, i)).collect()
}

/// Turns a handle back into a shared reference.
///
/// # Safety
/// `h` must be a live handle from [`meguri_drum_new`] with no `&mut` alive.
unsafe fn set_ref<'a>(h: *const DrumSet) -> &'a DrumSet {
    // SAFETY: the caller guarantees `h` is live and not mutably borrowed.
    unsafe { &*h }
}

/// Turns a handle back into an exclusive reference.
///
/// # Safety
/// `h` must be a live handle from [`meguri_drum_new`] with no other reference alive (the
/// single-threaded JS caller never overlaps calls).
unsafe fn set_mut<'a>(h: *mut DrumSet) -> &'a mut DrumSet {
    // SAFETY: the caller guarantees `h` is live and unaliased for the call.
    unsafe { &mut *h }
}

/// Creates an empty set with `2^bits` buckets and returns its handle, or null when `bits`
/// exceeds 16.
#[no_mangle]
pub extern "C" fn meguri_drum_new(bits: u32) -> *mut DrumSet {
    if bits > MAX_BUCKET_BITS {
        return std::ptr::null_mut();
    }
    Box::into_raw(Box::new(DrumSet::new(bits)))
}

/// Creates an empty set with `2^bits` buckets sized up front for `expected` keys
/// ([`DrumSet::with_capacity`]) and returns its handle, or null when `bits` exceeds 16 or
/// `expected` is not a whole number in `0..2³²`.
#[no_mangle]
pub extern "C" fn meguri_drum_new_planned(bits: u32, expected: f64) -> *mut DrumSet {
    if bits > MAX_BUCKET_BITS || !(0.0..4_294_967_296.0).contains(&expected) || expected.fract() != 0.0 {
        return std::ptr::null_mut();
    }
    Box::into_raw(Box::new(DrumSet::with_capacity(bits, expected as usize)))
}

/// Frees a set.
///
/// # Safety
/// `h` must come from [`meguri_drum_new`] and not have been freed; null is ignored. The handle
/// is dangling afterwards.
#[no_mangle]
pub unsafe extern "C" fn meguri_drum_free(h: *mut DrumSet) {
    if !h.is_null() {
        // SAFETY: the caller guarantees `h` is a live box from meguri_drum_new, freed once.
        drop(unsafe { Box::from_raw(h) });
    }
}

/// Number of distinct keys in the set.
///
/// # Safety
/// `h` must be a live handle from [`meguri_drum_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_drum_len(h: *const DrumSet) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { set_ref(h) }.len()
}

/// Bytes of linear memory the set holds (run capacities plus the bucket table).
///
/// # Safety
/// `h` must be a live handle from [`meguri_drum_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_drum_memory_bytes(h: *const DrumSet) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { set_ref(h) }.memory_bytes()
}

/// Classifies and inserts `n` keys; see [`DrumSet::merge`]. Returns the number of new keys.
///
/// # Safety
/// `h` live; `keys` points to `4n` aligned u32 lanes; `payloads` is null or points to `n`
/// aligned u32 values; `verdicts` is null or points to `n` writable bytes that overlap neither
/// input. All regions lie in linear memory owned by the caller for the call's duration.
#[no_mangle]
pub unsafe extern "C" fn meguri_drum_merge(
    h: *mut DrumSet,
    keys: *const u32,
    payloads: *const u32,
    n: usize,
    verdicts: *mut u8,
) -> usize {
    // SAFETY: `keys` holds 4n lanes per the contract.
    let ks = unsafe { read_keys(keys, n) };
    let pays = if payloads.is_null() || n == 0 {
        None
    } else {
        // SAFETY: non-null `payloads` holds n aligned u32 values per the contract.
        Some(unsafe { std::slice::from_raw_parts(payloads, n) })
    };
    let out = if verdicts.is_null() || n == 0 {
        None
    } else {
        // SAFETY: non-null `verdicts` holds n writable bytes that alias no input.
        Some(unsafe { std::slice::from_raw_parts_mut(verdicts, n) })
    };
    // SAFETY: `h` is live and unaliased per the contract.
    unsafe { set_mut(h) }.merge(&ks, pays, out)
}

/// Looks up `n` keys read from `keys`, writing `f(payload)` for key `i` to `out[i]`.
///
/// # Safety
/// `h` live; `keys` points to `4n` aligned u32 lanes; `out` points to `n` writable aligned
/// slots of `T` not overlapping `keys`.
unsafe fn lookup_each<T>(h: *const DrumSet, keys: *const u32, n: usize, out: *mut T, f: impl Fn(Option<u32>) -> T) {
    if n == 0 {
        return;
    }
    // SAFETY: `keys` holds 4n lanes per the contract.
    let ks = unsafe { read_keys(keys, n) };
    // SAFETY: `out` holds n writable slots disjoint from `keys` per the contract.
    let out = unsafe { std::slice::from_raw_parts_mut(out, n) };
    // SAFETY: `h` is live per the contract.
    unsafe { set_ref(h) }.lookup_batch(&ks, |i, got| out[i] = f(got));
}

/// Writes 1 or 0 to `out[i]` for whether key `i` is present.
///
/// # Safety
/// `h` live; `keys` points to `4n` aligned u32 lanes; `out` points to `n` writable bytes not
/// overlapping `keys`.
#[no_mangle]
pub unsafe extern "C" fn meguri_drum_contains_batch(h: *const DrumSet, keys: *const u32, n: usize, out: *mut u8) {
    // SAFETY: this function's contract is lookup_each's, with T = u8.
    unsafe { lookup_each(h, keys, n, out, |got| got.is_some() as u8) }
}

/// Writes the payload of key `i` to `out[i]`, or `missing` when the key is absent.
///
/// # Safety
/// `h` live; `keys` points to `4n` aligned u32 lanes; `out` points to `n` writable aligned u32
/// slots not overlapping `keys`.
#[no_mangle]
pub unsafe extern "C" fn meguri_drum_get_batch(h: *const DrumSet, keys: *const u32, n: usize, missing: u32, out: *mut u32) {
    // SAFETY: this function's contract is lookup_each's, with T = u32.
    unsafe { lookup_each(h, keys, n, out, |got| got.unwrap_or(missing)) }
}

/// Copies up to `count` keys (ranks `from..`) in key order to `out_keys` (4 lanes each) and
/// their payloads to `out_payloads`; returns how many were written. Compacts the set first.
///
/// # Safety
/// `h` live; `out_keys` points to `4·count` writable aligned u32 slots and `out_payloads` to
/// `count`, the two disjoint.
#[no_mangle]
pub unsafe extern "C" fn meguri_drum_export(
    h: *mut DrumSet,
    from: usize,
    count: usize,
    out_keys: *mut u32,
    out_payloads: *mut u32,
) -> usize {
    if count == 0 {
        return 0;
    }
    // SAFETY: per the contract, both output regions are valid for these lengths and disjoint.
    let (ks, ps) = unsafe {
        (std::slice::from_raw_parts_mut(out_keys, count * 4), std::slice::from_raw_parts_mut(out_payloads, count))
    };
    // SAFETY: `h` is live and unaliased per the contract.
    unsafe { set_mut(h) }.export(from, ks, ps)
}

/// Appends `n` keys that must be strictly increasing and greater than every key held, with
/// their payloads. Returns -1 on success, or the index of the first out-of-order key (the keys
/// before it have been appended).
///
/// # Safety
/// `h` live; `keys` points to `4n` aligned u32 lanes; `payloads` to `n` aligned u32 values.
#[no_mangle]
pub unsafe extern "C" fn meguri_drum_append_sorted(h: *mut DrumSet, keys: *const u32, payloads: *const u32, n: usize) -> i32 {
    if n == 0 {
        return -1;
    }
    // SAFETY: `keys` holds 4n lanes and `payloads` n values per the contract.
    let (ks, ps) = unsafe { (read_keys(keys, n), std::slice::from_raw_parts(payloads, n)) };
    // SAFETY: `h` is live and unaliased per the contract.
    match unsafe { set_mut(h) }.append_sorted(&ks, ps) {
        Ok(()) => -1,
        Err(i) => i as i32,
    }
}
