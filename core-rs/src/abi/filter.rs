//! Exports shared by every filter: key slices, byte buffers handed back to JS (serialized
//! blobs), and the read-only [`ResidentFilter`] loaded from any blob kind.

use crate::filter::{Membership, ResidentFilter, UrlKey};

/// Views `count` keys at `ptr`.
///
/// # Safety
/// When `count > 0`, `ptr` must be 8-byte aligned and `ptr..ptr + 16·count` readable and not
/// written for the lifetime `'a` the caller picks (the duration of one export call).
pub(crate) unsafe fn keys<'a>(ptr: *const UrlKey, count: usize) -> &'a [UrlKey] {
    if count == 0 {
        &[]
    } else {
        // SAFETY: forwarded from this function's contract.
        unsafe { std::slice::from_raw_parts(ptr, count) }
    }
}

/// Views `count` verdict bytes at `ptr` for writing.
///
/// # Safety
/// When `count > 0`, `ptr..ptr + count` must be writable and overlap nothing else the call
/// reads or writes.
pub(crate) unsafe fn verdicts<'a>(ptr: *mut u8, count: usize) -> &'a mut [u8] {
    if count == 0 {
        &mut []
    } else {
        // SAFETY: forwarded from this function's contract.
        unsafe { std::slice::from_raw_parts_mut(ptr, count) }
    }
}

/// Views `len` bytes at `ptr` (a blob staged by the caller).
///
/// # Safety
/// When `len > 0`, `ptr..ptr + len` must be readable for the call.
pub(crate) unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: forwarded from this function's contract.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// Writes a status code through an optional out-pointer.
///
/// # Safety
/// `out` must be null or point to a writable, 4-byte aligned u32.
pub(crate) unsafe fn put_status(out: *mut u32, status: u32) {
    if !out.is_null() {
        // SAFETY: non-null and, per the contract, writable and aligned.
        unsafe { out.write(status) }
    }
}

/// Moves a buffer to the heap and returns its handle (see [`meguri_bytes_ptr`]).
pub(crate) fn into_bytes_handle(v: Vec<u8>) -> *mut Vec<u8> {
    Box::into_raw(Box::new(v))
}

/// Start of a byte buffer returned by another export (a serialized blob).
///
/// # Safety
/// `b` must be a live handle from an export documented to return one.
#[no_mangle]
pub unsafe extern "C" fn meguri_bytes_ptr(b: *const Vec<u8>) -> *const u8 {
    // SAFETY: b is a live handle, so it points to a valid Vec.
    unsafe { (*b).as_ptr() }
}

/// Length of a byte buffer handle.
///
/// # Safety
/// `b` must be a live byte-buffer handle.
#[no_mangle]
pub unsafe extern "C" fn meguri_bytes_len(b: *const Vec<u8>) -> usize {
    // SAFETY: b is a live handle.
    unsafe { (*b).len() }
}

/// Releases a byte buffer handle.
///
/// # Safety
/// `b` must be a live byte-buffer handle (or null, ignored); it is dead afterwards.
#[no_mangle]
pub unsafe extern "C" fn meguri_bytes_free(b: *mut Vec<u8>) {
    if !b.is_null() {
        // SAFETY: b came from Box::into_raw in into_bytes_handle and is freed once.
        drop(unsafe { Box::from_raw(b) });
    }
}

/// Parses a blob of any kind (`len` bytes at `ptr`) into a resident filter. Returns its
/// handle, or null with the `BlobError` code written to `status` (0 on success).
///
/// # Safety
/// `ptr..ptr + len` readable for the call; `status` null or a writable aligned u32.
#[no_mangle]
pub unsafe extern "C" fn meguri_filter_load(ptr: *const u8, len: usize, status: *mut u32) -> *mut ResidentFilter {
    // SAFETY: the caller staged len readable bytes at ptr.
    let blob = unsafe { bytes(ptr, len) };
    match ResidentFilter::load(blob) {
        Ok(f) => {
            // SAFETY: per the contract on status.
            unsafe { put_status(status, 0) };
            Box::into_raw(Box::new(f))
        }
        Err(e) => {
            // SAFETY: per the contract on status.
            unsafe { put_status(status, e as u32) };
            std::ptr::null_mut()
        }
    }
}

/// Releases a resident filter.
///
/// # Safety
/// `f` must be a live handle from [`meguri_filter_load`] (or null, ignored); dead afterwards.
#[no_mangle]
pub unsafe extern "C" fn meguri_filter_free(f: *mut ResidentFilter) {
    if !f.is_null() {
        // SAFETY: f came from Box::into_raw in meguri_filter_load and is freed once.
        drop(unsafe { Box::from_raw(f) });
    }
}

/// The blob kind of a resident filter: 0 Bloom, 1 ribbon, 2 sharded ribbon.
///
/// # Safety
/// `f` must be a live resident-filter handle.
#[no_mangle]
pub unsafe extern "C" fn meguri_filter_kind(f: *const ResidentFilter) -> u32 {
    // SAFETY: f is live.
    u32::from(unsafe { &*f }.kind())
}

/// Keys the filter holds, as a double (exact below 2⁵³).
///
/// # Safety
/// `f` must be a live resident-filter handle.
#[no_mangle]
pub unsafe extern "C" fn meguri_filter_len(f: *const ResidentFilter) -> f64 {
    // SAFETY: f is live.
    unsafe { &*f }.len() as f64
}

/// Payload bits of the filter, as a double.
///
/// # Safety
/// `f` must be a live resident-filter handle.
#[no_mangle]
pub unsafe extern "C" fn meguri_filter_payload_bits(f: *const ResidentFilter) -> f64 {
    // SAFETY: f is live.
    unsafe { &*f }.payload_bits() as f64
}

/// Writes one verdict byte (1 maybe, 0 absent) per key.
///
/// # Safety
/// `f` live; `keys` holds `count` keys as in [`keys`]; `out` has `count` writable bytes that
/// do not overlap `keys`.
#[no_mangle]
pub unsafe extern "C" fn meguri_filter_query_batch(f: *const ResidentFilter, keys_ptr: *const UrlKey, count: usize, out: *mut u8) {
    // SAFETY: per the contract above.
    let (f, ks, out) = unsafe { (&*f, keys(keys_ptr, count), verdicts(out, count)) };
    f.may_contain_batch(ks, out);
}

/// The verdict for one key passed as its four u32 lanes (host lo, host hi, path lo, path hi).
///
/// # Safety
/// `f` must be a live resident-filter handle.
#[no_mangle]
pub unsafe extern "C" fn meguri_filter_query_key(f: *const ResidentFilter, h0: u32, h1: u32, p0: u32, p1: u32) -> u32 {
    let key = [super::join_u64(h0, h1), super::join_u64(p0, p1)];
    // SAFETY: f is live.
    u32::from(unsafe { &*f }.may_contain(&key))
}
