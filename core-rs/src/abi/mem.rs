//! Scratch memory for batch calls: the TypeScript side allocates a buffer here, copies keys
//! or strings in, makes one call, and frees it.

use std::alloc::{alloc, dealloc, Layout};

/// Every allocation handed to JS is 16-byte aligned, so any typed-array view (u8 to u64 and
/// 128-bit keys) over it is aligned.
const ALIGN: usize = 16;

fn layout(len: usize) -> Option<Layout> {
    Layout::from_size_align(len.max(1), ALIGN).ok()
}

/// Allocates `len` bytes (16-byte aligned) and returns their offset, or 0 when the request
/// cannot be met (the JS side turns 0 into an out-of-memory error).
#[no_mangle]
pub extern "C" fn meguri_alloc(len: usize) -> *mut u8 {
    match layout(len) {
        // SAFETY: the layout has non-zero size (len.max(1)) and a valid power-of-two align.
        Some(l) => unsafe { alloc(l) },
        None => std::ptr::null_mut(),
    }
}

/// Frees a buffer from [`meguri_alloc`].
///
/// # Safety
/// `ptr` must come from `meguri_alloc(len)` with this same `len` and not have been freed;
/// a null `ptr` is ignored.
#[no_mangle]
pub unsafe extern "C" fn meguri_free(ptr: *mut u8, len: usize) {
    if ptr.is_null() {
        return;
    }
    if let Some(l) = layout(len) {
        // SAFETY: the caller guarantees ptr was allocated with exactly this layout.
        unsafe { dealloc(ptr, l) }
    }
}
