//! meguri_core: the data structures on meguri's hot paths, compiled to WebAssembly.
//!
//! The crate is split the way DESIGN.md §3 asks: algorithm modules (`hash`, and the filter,
//! simhash, DRUM and wheel modules as they land) are safe Rust over slices, and every raw
//! pointer and `extern "C"` export lives under [`abi`], where each function documents the
//! contract its TypeScript caller must keep. Nothing here does I/O, reads a clock or keeps
//! global mutable state beyond the allocator and the per-page scratch buffers of `canon` and
//! `intake` (capacity kept between calls, never contents an answer depends on), so the same
//! binary serves Node and browsers.
//!
//! The crate must build with Debian's rustc 1.63 and has no crates.io dependencies.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod abi;
pub mod bloom;
pub mod canon;
pub mod drum;
pub mod filter;
pub mod hash;
pub mod intake;
pub mod neardup;
pub mod ribbon;
pub mod seen;
pub mod simhash;
pub mod urlkey;
pub mod wheel;

/// Helpers shared by the unit tests.
#[cfg(test)]
pub(crate) mod testutil {
    /// SplitMix64, a tiny deterministic generator for the tests.
    pub struct Rng(pub u64);

    impl Rng {
        /// The next 64 random bits.
        pub fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            crate::hash::mix64(self.0)
        }

        /// A value in `0..n`.
        pub fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }
}
