//! Exports for the batch canonicalizer ([`crate::canon`]): one call per page, links packed
//! as UTF-8 with a u32 offset table, results as three u32 lanes per link plus an arena for
//! the rewritten ones.

use super::packed;
use crate::canon;

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
    // SAFETY: every region is valid for its length and disjoint from the outputs per the
    // contract; empty regions are never dereferenced.
    let (page, (data, offsets), lanes, arena) = unsafe {
        (
            if base_len == 0 { None } else { Some(std::slice::from_raw_parts(base, base_len)) },
            packed(data, data_len, offsets, count),
            if count == 0 { &mut [][..] } else { std::slice::from_raw_parts_mut(lanes, count * 3) },
            if arena_len == 0 { &mut [][..] } else { std::slice::from_raw_parts_mut(arena, arena_len) },
        )
    };
    canon::canonicalize_batch(page, data, offsets, lanes, arena)
}
