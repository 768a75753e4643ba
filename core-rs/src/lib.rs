//! meguri_core: the data structures on meguri's hot paths, compiled to WebAssembly.
//!
//! The crate is split the way DESIGN.md §3 asks: algorithm modules (`hash`, and the filter,
//! simhash, DRUM and wheel modules as they land) are safe Rust over slices, and every raw
//! pointer and `extern "C"` export lives under [`abi`], where each function documents the
//! contract its TypeScript caller must keep. Nothing here does I/O, reads a clock or keeps
//! global mutable state beyond the allocator, so the same binary serves Node and browsers.
//!
//! The crate must build with Debian's rustc 1.63 and has no crates.io dependencies.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod abi;
pub mod bloom;
pub mod filter;
pub mod hash;
pub mod ribbon;
