//! Exports for origin-memoized URL keys ([`crate::urlkey`]). The origin table is an opaque
//! handle from [`meguri_urlkey_table_new`]; URLs and origins cross as UTF-8 packed back to
//! back with a u32 offset table; keys come back as 16-byte URLKeys (HostKey, then PathKey,
//! little-endian u64s).

use super::{join_u64, packed};
use crate::urlkey::OriginTable;

/// Turns a handle back into a shared reference.
///
/// # Safety
/// `h` must be a live handle from [`meguri_urlkey_table_new`] not mutably referenced
/// elsewhere for the call.
unsafe fn table_ref<'a>(h: *const OriginTable) -> &'a OriginTable {
    // SAFETY: the caller guarantees `h` is live and not mutably aliased.
    unsafe { &*h }
}

/// Turns a handle back into an exclusive reference.
///
/// # Safety
/// `h` must be a live handle from [`meguri_urlkey_table_new`] with no other reference alive
/// for the call (the single-threaded JS caller never overlaps calls).
unsafe fn table_mut<'a>(h: *mut OriginTable) -> &'a mut OriginTable {
    // SAFETY: the caller guarantees `h` is live and unaliased.
    unsafe { &mut *h }
}

/// Creates an empty origin table and returns its handle.
#[no_mangle]
pub extern "C" fn meguri_urlkey_table_new() -> *mut OriginTable {
    Box::into_raw(Box::new(OriginTable::new()))
}

/// Frees an origin table.
///
/// # Safety
/// `h` must come from [`meguri_urlkey_table_new`] and not have been freed; null is ignored.
#[no_mangle]
pub unsafe extern "C" fn meguri_urlkey_table_free(h: *mut OriginTable) {
    if !h.is_null() {
        // SAFETY: the caller guarantees `h` is a live box from meguri_urlkey_table_new, freed once.
        drop(unsafe { Box::from_raw(h) });
    }
}

/// Number of origins held.
///
/// # Safety
/// `h` must be a live handle from [`meguri_urlkey_table_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_urlkey_table_len(h: *const OriginTable) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { table_ref(h) }.len()
}

/// Bytes of linear memory the table holds.
///
/// # Safety
/// `h` must be a live handle from [`meguri_urlkey_table_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_urlkey_table_memory_bytes(h: *const OriginTable) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { table_ref(h) }.memory_bytes()
}

/// Forgets every origin (ids restart at 0).
///
/// # Safety
/// `h` must be a live handle from [`meguri_urlkey_table_new`], not referenced elsewhere for
/// the call.
#[no_mangle]
pub unsafe extern "C" fn meguri_urlkey_table_clear(h: *mut OriginTable) {
    // SAFETY: forwarded from this function's contract.
    unsafe { table_mut(h) }.clear();
}

/// Inserts `count` origins packed in `data` (origin `i` spans `offsets[i]..offsets[i+1]`)
/// with HostKeys `hosts[i]`, writing each origin's id, or `u32::MAX` when it is not a
/// memoizable origin, to `ids[i]`. May grow memory.
///
/// # Safety
/// `h` is a live handle not referenced elsewhere for the call; `data`/`offsets` as for a
/// packed batch (`data..data+data_len` readable, `count + 1` aligned non-decreasing offsets
/// at most `data_len`); `hosts` points to `count` aligned u64 values and `ids` to `count`
/// writable aligned u32 slots. No region overlaps `ids` or the table's own memory.
#[no_mangle]
pub unsafe extern "C" fn meguri_urlkey_table_insert_batch(
    h: *mut OriginTable,
    data: *const u8,
    data_len: usize,
    offsets: *const u32,
    count: usize,
    hosts: *const u64,
    ids: *mut u32,
) {
    // SAFETY: per the contract: a live unaliased handle, readable packed input and hosts,
    // `count` writable id slots overlapping nothing else.
    let (table, (data, offsets), hosts, ids) = unsafe {
        (
            table_mut(h),
            packed(data, data_len, offsets, count),
            std::slice::from_raw_parts(hosts, count),
            std::slice::from_raw_parts_mut(ids, count),
        )
    };
    table.insert_batch(data, offsets, hosts, ids);
}

/// Keys `count` URLs packed in `data` (URL `i` spans `offsets[i]..offsets[i+1]`): writes URLKey
/// `i` (HostKey 0 when the origin is not held) to `keys[i]`, the origin's id or `u32::MAX` to
/// `ids[i]` when `ids` is not null, and the indexes of the URLs whose origin was not found,
/// in order, to the front of `misses`. The PathKey seed is `(seed_lo, seed_hi)`. Returns the
/// number of misses.
///
/// # Safety
/// `h` is a live handle not referenced elsewhere for the call (the table keeps per-batch
/// scratch, which may grow memory); `data`/`offsets` as for a packed batch
/// (`data..data+data_len` readable, `count + 1` aligned non-decreasing offsets at most
/// `data_len`); `keys` points to
/// `count` writable 16-byte keys (8-byte aligned), `misses` to `count` writable aligned u32
/// slots, `ids` is null or points to `count` writable aligned u32 slots. The output regions
/// overlap neither each other, the inputs, nor the table's memory.
#[no_mangle]
pub unsafe extern "C" fn meguri_urlkey_batch(
    h: *mut OriginTable,
    data: *const u8,
    data_len: usize,
    offsets: *const u32,
    count: usize,
    seed_lo: u32,
    seed_hi: u32,
    keys: *mut u64,
    ids: *mut u32,
    misses: *mut u32,
) -> usize {
    // SAFETY: per the contract: a live unaliased handle, readable packed input, disjoint
    // writable outputs.
    let (table, (data, offsets), keys, misses) = unsafe {
        (
            table_mut(h),
            packed(data, data_len, offsets, count),
            std::slice::from_raw_parts_mut(keys, 2 * count),
            std::slice::from_raw_parts_mut(misses, count),
        )
    };
    let ids = if ids.is_null() {
        None
    } else {
        // SAFETY: a non-null `ids` has `count` writable slots overlapping nothing else.
        Some(unsafe { std::slice::from_raw_parts_mut(ids, count) })
    };
    table.key_batch(data, offsets, join_u64(seed_lo, seed_hi), keys, ids, misses)
}

/// Keys the one URL of `len` bytes at `url`, writing its URLKey (HostKey 0 on a miss) to
/// `key`, and returns the origin's id, or -1 when the origin is not held.
///
/// # Safety
/// `h` is a live handle; `url..url+len` readable (any `url` when `len` is 0); `key` points to
/// 16 writable bytes, 8-byte aligned, overlapping neither the URL nor the table.
#[no_mangle]
pub unsafe extern "C" fn meguri_urlkey_one(h: *const OriginTable, url: *const u8, len: usize, seed_lo: u32, seed_hi: u32, key: *mut u64) -> i32 {
    // SAFETY: per the contract: a live handle and `len` readable bytes.
    let (table, url) = unsafe { (table_ref(h), if len == 0 { &[][..] } else { std::slice::from_raw_parts(url, len) }) };
    let (k, id) = table.key_one(url, join_u64(seed_lo, seed_hi));
    // SAFETY: `key` is two writable aligned u64 slots per the contract.
    unsafe {
        key.write(k[0]);
        key.add(1).write(k[1]);
    }
    id as i32
}
