//! Exports for the batch canonicalizer ([`crate::canon`]): one call per page, links packed
//! as UTF-8 with a u32 offset table, results as three u32 lanes per link plus an arena for
//! the rewritten ones.

use super::packed;
use crate::bloom::BlockedBloom;
use crate::canon;
use crate::drum::DrumSet;
use crate::intake;
use crate::urlkey::OriginTable;

/// Canonicalizes `count` links against the page URL `base..base+base_len` (`base_len` 0: no
/// page URL); see [`canon::canonicalize_batch`]. Writes `3·count` u32 lanes to `lanes` and
/// rewritten URLs into `arena..arena+arena_len`; returns the arena bytes used.
///
/// # Safety
/// As for [`packed`] over `data`/`offsets`, plus: `base..base+base_len` readable; `lanes`
/// points to `3·count` writable aligned u32 slots and `arena` to `arena_len` writable bytes;
/// the outputs overlap neither each other nor any input.
#[no_mangle]
pub unsafe extern "C" fn meguri_canon_batch(
    base: *const u8,
    base_len: usize,
    data: *const u8,
    data_len: usize,
    offsets: *const u32,
    count: usize,
    lanes: *mut u32,
    arena: *mut u8,
    arena_len: usize,
) -> usize {
    // SAFETY: this function's contract is `page_io`'s.
    let io = unsafe { page_io(base, base_len, data, data_len, offsets, count, lanes, arena, arena_len) };
    canon::canonicalize_batch(io.page, io.data, io.offsets, io.lanes, io.arena)
}

/// The inputs and outputs both exports share: a page's links and their canonical forms.
struct PageIo<'a> {
    page: Option<&'a [u8]>,
    data: &'a [u8],
    offsets: &'a [u32],
    lanes: &'a mut [u32],
    arena: &'a mut [u8],
}

/// Builds the [`PageIo`] of a canonicalizing export's arguments.
///
/// # Safety
/// [`meguri_canon_batch`]'s contract: `base..base+base_len` readable (any `base` when
/// `base_len` is 0), `data`/`offsets` as for [`packed`], `lanes` pointing to `3·count`
/// writable aligned u32 slots and `arena` to `arena_len` writable bytes, the outputs
/// overlapping neither each other nor any input, for the lifetime `'a` the caller picks.
#[allow(clippy::too_many_arguments)]
unsafe fn page_io<'a>(
    base: *const u8,
    base_len: usize,
    data: *const u8,
    data_len: usize,
    offsets: *const u32,
    count: usize,
    lanes: *mut u32,
    arena: *mut u8,
    arena_len: usize,
) -> PageIo<'a> {
    // SAFETY: every region is valid for its length and disjoint from the outputs per the
    // contract; empty regions are never dereferenced.
    unsafe {
        let (data, offsets) = packed(data, data_len, offsets, count);
        PageIo {
            page: if base_len == 0 { None } else { Some(std::slice::from_raw_parts(base, base_len)) },
            data,
            offsets,
            lanes: if count == 0 { &mut [][..] } else { std::slice::from_raw_parts_mut(lanes, count * 3) },
            arena: if arena_len == 0 { &mut [][..] } else { std::slice::from_raw_parts_mut(arena, arena_len) },
        }
    }
}

/// A page's intake in one call ([`crate::intake::admit_links`]): canonicalize as
/// [`meguri_canon_batch`] (same `lanes` and `arena`), key the answered links whose origin is
/// in the table `origins` into `keys` (two u64 per link), merge them into the seen-set pair
/// writing `verdicts`, and write the indexes of the links left to the caller (declined or of
/// an unknown origin) in ascending order to `pending`. Returns how many are pending.
///
/// # Safety
/// As for [`meguri_canon_batch`], plus: `origins` is a live origin-table handle, `set` a live
/// DRUM handle and `filter` a live Bloom handle paired with it (every key of `set` is in
/// `filter`), all distinct and not referenced elsewhere for the call; `keys` points to
/// `2·count` writable aligned u64 slots, `verdicts` to `count` writable bytes and `pending`
/// to `count` writable aligned u32 slots, overlapping nothing else.
#[no_mangle]
pub unsafe extern "C" fn meguri_admit_links(
    origins: *mut OriginTable,
    set: *mut DrumSet,
    filter: *mut BlockedBloom,
    base: *const u8,
    base_len: usize,
    data: *const u8,
    data_len: usize,
    offsets: *const u32,
    count: usize,
    seed_lo: u32,
    seed_hi: u32,
    lanes: *mut u32,
    arena: *mut u8,
    arena_len: usize,
    keys: *mut u64,
    verdicts: *mut u8,
    pending: *mut u32,
) -> usize {
    if count == 0 {
        return 0;
    }
    // SAFETY: per the contract: live, distinct, unaliased handles; readable inputs; disjoint
    // writable outputs of the stated lengths (count > 0 here); the page's regions as
    // `page_io` requires.
    let (origins, set, filter, io, keys, verdicts, pending) = unsafe {
        (
            &mut *origins,
            &mut *set,
            &mut *filter,
            page_io(base, base_len, data, data_len, offsets, count, lanes, arena, arena_len),
            std::slice::from_raw_parts_mut(keys, count * 2),
            std::slice::from_raw_parts_mut(verdicts, count),
            std::slice::from_raw_parts_mut(pending, count),
        )
    };
    let seed = super::join_u64(seed_lo, seed_hi);
    intake::admit_links(origins, set, filter, io.page, io.data, io.offsets, seed, io.lanes, io.arena, keys, verdicts, pending)
}
