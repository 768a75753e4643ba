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

/// Geometric growth of linear memory (wasm only).
///
/// The standard allocator asks `memory.grow` for just the pages each request lacks, so a
/// kernel that grows many runs by a few KiB each (a DRUM merge touching 256 buckets) grows
/// memory hundreds of times per call. Each grow is costly on the JS side: V8 replaces the
/// memory's `ArrayBuffer` and re-accounts external memory, which can start a full garbage
/// collection of the embedder's heap — measured at up to a second per grow next to a
/// million-entry JS `Map` (bench/suites/drum.bench.mjs), turning a 0.5 s merge into minutes.
///
/// This wrapper notices when an allocation made memory grow and immediately allocates and
/// frees a block of 1/8 of the memory size. The freed block merges back into the allocator's
/// top chunk (which wasm never returns), so the next allocations are served from it: memory
/// grows by at least 12.5 % at a time and the number of grows is logarithmic in the heap size,
/// for at most 12.5 % of headroom.
#[cfg(target_arch = "wasm32")]
mod geometric {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::arch::wasm32::memory_size;

    const PAGE: usize = 65_536;

    pub struct Geometric;

    impl Geometric {
        /// Called after an allocation that may have grown memory from `before` pages.
        ///
        /// # Safety
        /// Only called from the allocator entry points below, which hold no allocator lock
        /// (the wasm target is single-threaded).
        unsafe fn headroom_after(&self, before: usize) {
            if memory_size(0) == before {
                return;
            }
            let extra = (memory_size(0) * PAGE / 8).max(PAGE);
            if let Ok(l) = Layout::from_size_align(extra, 16) {
                // SAFETY: `l` has non-zero size and a valid alignment; the block is freed with
                // the same layout before anyone else can see it.
                unsafe {
                    let p = System.alloc(l);
                    if !p.is_null() {
                        System.dealloc(p, l);
                    }
                }
            }
        }
    }

    // SAFETY: every method forwards to `System` with the caller's arguments unchanged, so
    // System's guarantees (alignment, size, validity until dealloc) carry over; the extra
    // headroom allocation is freed before returning and never escapes.
    unsafe impl GlobalAlloc for Geometric {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            let before = memory_size(0);
            // SAFETY: forwarded from GlobalAlloc::alloc's contract.
            let p = unsafe { System.alloc(l) };
            // SAFETY: see headroom_after.
            unsafe { self.headroom_after(before) };
            p
        }

        unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
            let before = memory_size(0);
            // SAFETY: forwarded from GlobalAlloc::alloc_zeroed's contract.
            let p = unsafe { System.alloc_zeroed(l) };
            // SAFETY: see headroom_after.
            unsafe { self.headroom_after(before) };
            p
        }

        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            // SAFETY: forwarded from GlobalAlloc::dealloc's contract.
            unsafe { System.dealloc(p, l) }
        }

        unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
            let before = memory_size(0);
            // SAFETY: forwarded from GlobalAlloc::realloc's contract.
            let q = unsafe { System.realloc(p, l, new_size) };
            // SAFETY: see headroom_after.
            unsafe { self.headroom_after(before) };
            q
        }
    }

    #[global_allocator]
    static ALLOCATOR: Geometric = Geometric;
}
