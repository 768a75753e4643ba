//! Blocked Bloom filter: the mutable first tier of the seen-set (DESIGN §6).
//!
//! ## Problem
//! Answer "was this URLKey added?" with no false negatives, a false-positive rate near a
//! target ε (1 % by default) at a planned capacity n, as few bits per key as that layout
//! allows, and one cache miss per operation.
//!
//! ## Layout (after Putze, Sanders & Singler, "Cache-, hash- and space-efficient Bloom
//! filters", 2007, and RocksDB's FastLocalBloom)
//! The bit array is split into `blocks` blocks of B = 512 bits (one 64-byte cache line;
//! `Block` is 64-byte aligned). A key touches exactly one block, chosen from its
//! [`key_digest`] `a` by `block = ⌊(a >> 32)·blocks / 2³²⌋`, and sets or tests `k` bits
//! inside it. The probe positions are not rehashes of the key: a second word
//! `b = mix64(a)` supplies seven independent 9-bit positions (`b & 511`, `(b >> 9) & 511`, …,
//! 63 bits); for k > 7 the next word is `mix64(b + φ)`, and so on. Positions may repeat,
//! which the formula below accounts for.
//!
//! ## False-positive rate
//! With n keys spread over `blocks` blocks, a block's load is ≈ Poisson(λ), λ = n/blocks =
//! B/c for c bits per key. A block holding j keys has each bit still clear with probability
//! (1 − 1/B)^{kj}, so an absent key (k fresh uniform positions in a uniform block) passes with
//!
//! ```text
//!   FPR(c, k) = Σ_{j ≥ 0} Pois(j; B/c) · (1 − (1 − 1/B)^{k·j})^k
//! ```
//!
//! The load variance across blocks is what costs a blocked filter space against the
//! classic (1 − e^{−k/c})^k: at ε = 1 % the optimum is k = 6 at c ≈ 9.90 bits/key (the
//! classic filter needs 9.59), at 0.1 % k = 9 at c ≈ 15.5. [`plan`] picks the fewest whole
//! blocks for which some k in 1..=16 meets ε, and that k; ε is clamped to [1e-6, 0.5]
//! by the TypeScript wrapper (1e-6 needs k = 16 at ≈ 38.5 bits/key).
//!
//! ## Batches
//! `add_batch` and `may_contain_batch` work in groups of `GROUP` = 64 keys: first locate
//! every key of the group and read its block's first word, then set or test the bits. The
//! reads of a group do not depend on each other, so their cache misses overlap instead of
//! queuing. Measured in the wasm build (CPU time per key, median of 5 runs on a shared
//! 2-core machine): 1M-key filter, add 126 → 90 ns and query 182 → 103 ns; 10M keys, add
//! 208 → 112 ns and query 258 → 128 ns. Groups of 8 or 32 measured the same then; with
//! `add_batch` locating the group before a separate loop of bare block loads, 64 keys
//! keep more misses in flight (the seen-set's merge, wasm, CPU time: see DESIGN's seen-set
//! section for the figures).
//!
//! ## Invariants
//! No false negatives: `add(x)` sets every bit `may_contain(x)` tests, and bits are never
//! cleared. `len` counts `add` calls (a repeated key counts again); adding past `capacity`
//! is allowed and only raises the false-positive rate.

use crate::filter::{self, fastrange32, key_digest, BlobError, Membership, Put, Reader, UrlKey, KIND_BLOOM};
use crate::hash::mix64;

/// Bits per block: one cache line.
pub const BLOCK_BITS: u32 = 512;
/// Most probes per key a filter may use.
pub const MAX_PROBES: u32 = 16;
/// Salt of the Bloom key digest (see `filter::key_digest`).
const SALT: u64 = 0x5BD1_E995_2F0E_4C3B;
/// Probe positions drawn from one 64-bit word (7 × 9 bits).
const PROBES_PER_WORD: u32 = 7;
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
/// Keys located ahead in the batch loops (see `add_batch`).
const GROUP: usize = 64;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Block([u64; 8]);

/// A blocked Bloom filter over URLKeys.
pub struct BlockedBloom {
    blocks: Vec<Block>,
    probes: u32,
    capacity: u64,
    fp_rate: f64,
    len: u64,
    /// Sink for the block words `add_batch` reads ahead, so the reads are not optimized away.
    touched: u64,
}

/// Expected false-positive rate of `probes` probes per key with `load` keys per 512-bit
/// block on average (the formula in the module comment).
pub fn expected_fpr(load: f64, probes: u32) -> f64 {
    if load <= 0.0 {
        return 0.0;
    }
    // Past ~600 keys per block a 512-bit block is saturated for any k; the Poisson weights
    // would also underflow, so report "always positive".
    if load > 600.0 {
        return 1.0;
    }
    let clear_per_key = (1.0 - 1.0 / f64::from(BLOCK_BITS)).powi(probes as i32);
    let last = (load + 12.0 * load.sqrt() + 30.0) as u32;
    let mut weight = (-load).exp();
    let mut clear = 1.0;
    let mut sum = 0.0;
    for j in 0..=last {
        if j > 0 {
            weight *= load / f64::from(j);
            clear *= clear_per_key;
        }
        sum += weight * (1.0 - clear).powi(probes as i32);
    }
    sum
}

/// The best probe count for a load, and its expected rate.
fn best_probes(load: f64) -> (u32, f64) {
    let mut best = (1, expected_fpr(load, 1));
    for k in 2..=MAX_PROBES {
        let f = expected_fpr(load, k);
        if f < best.1 {
            best = (k, f);
        }
    }
    best
}

/// Sizes a filter: the fewest blocks (and the probe count) whose expected false-positive
/// rate at `capacity` keys is at most `fp_rate`. `None` when more than `u32::MAX` blocks
/// would be needed.
pub fn plan(capacity: u64, fp_rate: f64) -> Option<(u32, u32)> {
    let capacity = capacity.max(1) as f64;
    let fits = |blocks: u64| best_probes(capacity / blocks as f64).1 <= fp_rate;
    let mut hi: u64 = 1;
    while !fits(hi) {
        hi = hi.checked_mul(2)?;
        if hi > u64::from(u32::MAX) * 2 {
            return None;
        }
    }
    let mut lo = hi / 2; // does not fit (or is 0)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let blocks = u32::try_from(hi).ok()?;
    Some((blocks, best_probes(capacity / f64::from(blocks)).0))
}

/// Calls `f` with each of the key's `probes` bit positions inside its block.
#[inline(always)]
fn for_each_probe(bits: u64, probes: u32, mut f: impl FnMut(usize)) {
    let mut source = bits;
    let mut word = bits;
    for i in 0..probes {
        if i != 0 && i % PROBES_PER_WORD == 0 {
            source = mix64(source.wrapping_add(GOLDEN));
            word = source;
        }
        f((word & 511) as usize);
        word >>= 9;
    }
}

impl BlockedBloom {
    /// An empty filter planned for `capacity` keys at `fp_rate`, or `None` when the plan
    /// or its memory cannot be had.
    pub fn new(capacity: u64, fp_rate: f64) -> Option<Self> {
        let (blocks, probes) = plan(capacity, fp_rate)?;
        Self::with_shape(blocks, probes, capacity, fp_rate)
    }

    /// An empty filter of exactly `blocks` blocks and `probes` probes per key.
    pub fn with_shape(blocks: u32, probes: u32, capacity: u64, fp_rate: f64) -> Option<Self> {
        if blocks == 0 || probes == 0 || probes > MAX_PROBES {
            return None;
        }
        let mut v: Vec<Block> = Vec::new();
        v.try_reserve_exact(blocks as usize).ok()?;
        v.resize(blocks as usize, Block([0; 8]));
        Some(BlockedBloom { blocks: v, probes, capacity, fp_rate, len: 0, touched: 0 })
    }

    #[inline(always)]
    fn locate(&self, key: &UrlKey) -> (usize, u64) {
        let a = key_digest(key, SALT);
        let block = fastrange32(a >> 32, self.blocks.len() as u64) as usize;
        (block, mix64(a))
    }

    /// Records `key` as added.
    #[inline]
    pub fn add(&mut self, key: &UrlKey) {
        let (b, bits) = self.locate(key);
        let probes = self.probes;
        let block = &mut self.blocks[b].0;
        for_each_probe(bits, probes, |p| block[p >> 6] |= 1u64 << (p & 63));
        self.len += 1;
    }

    /// Records every key of the batch.
    pub fn add_batch(&mut self, keys: &[UrlKey]) {
        let mut at = [(0usize, 0u64); GROUP];
        for group in keys.chunks(GROUP) {
            // Locate the whole group, then touch each block in a loop of a few instructions
            // per key before writing any: the group's cache misses then overlap instead of
            // each waiting behind the previous store, and with the hashing done first, more
            // of them fit in the reorder window at once (see `crate::drum` on wasm's lack of
            // a prefetch instruction).
            for (slot, k) in at.iter_mut().zip(group) {
                *slot = self.locate(k);
            }
            let mut touched = 0u64;
            for &(b, _) in &at[..group.len()] {
                touched ^= self.blocks[b].0[0];
            }
            self.touched ^= touched;
            let probes = self.probes;
            for &(b, bits) in &at[..group.len()] {
                let block = &mut self.blocks[b].0;
                for_each_probe(bits, probes, |p| block[p >> 6] |= 1u64 << (p & 63));
            }
            self.len += group.len() as u64;
        }
    }

    /// The capacity the filter was planned for.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The target false-positive rate at capacity.
    pub fn fp_rate(&self) -> f64 {
        self.fp_rate
    }

    /// Probes per key.
    pub fn probes(&self) -> u32 {
        self.probes
    }

    /// Number of 512-bit blocks.
    pub fn blocks(&self) -> u32 {
        self.blocks.len() as u32
    }

    /// Serializes the filter as a kind-0 blob (layout in `filter`).
    pub fn to_blob(&self) -> Vec<u8> {
        let mut out = filter::begin(KIND_BLOOM, 32 + 64 * self.blocks.len());
        out.put_u32(self.blocks.len() as u32);
        out.put_u32(self.probes);
        out.put_u64(self.capacity);
        out.put_u64(self.len);
        out.put_u64(self.fp_rate.to_bits());
        for b in &self.blocks {
            out.put_words(&b.0);
        }
        filter::seal(&mut out);
        out
    }

    /// Parses the body of a kind-0 blob whose envelope `filter::open` accepted.
    pub fn from_body(body: &[u8]) -> Result<Self, BlobError> {
        let mut r = Reader::new(body);
        let blocks = r.u32()?;
        let probes = r.u32()?;
        let capacity = r.u64()?;
        let len = r.u64()?;
        let fp_rate = r.f64()?;
        let size = (blocks as usize).checked_mul(64).ok_or(BlobError::BadParams)?;
        if blocks == 0 || probes == 0 || probes > MAX_PROBES || r.remaining() != size {
            return Err(BlobError::BadParams);
        }
        let mut f = Self::with_shape(blocks, probes, capacity, fp_rate).ok_or(BlobError::BadParams)?;
        let mut words = Vec::with_capacity(8);
        for b in f.blocks.iter_mut() {
            words.clear();
            r.words_into(8, &mut words)?;
            b.0.copy_from_slice(&words);
        }
        f.len = len;
        Ok(f)
    }
}

/// Whether every probe bit of a key is set in `block`, whose word 0 the caller passes as
/// `first` (already read ahead in the batch path). Builds the key's 512-bit mask and tests it
/// with no data-dependent branch. (A `core::arch::wasm32` v128 version of the test measured
/// no difference: the block's cache miss, not this arithmetic, is the cost.)
#[inline(always)]
fn covers(first: u64, block: &[u64; 8], bits: u64, probes: u32) -> bool {
    let mut mask = [0u64; 8];
    for_each_probe(bits, probes, |p| mask[p >> 6] |= 1u64 << (p & 63));
    let mut missing = mask[0] & !first;
    for w in 1..8 {
        missing |= mask[w] & !block[w];
    }
    missing == 0
}

impl Membership for BlockedBloom {
    /// Whether `key` may have been added. `false` is authoritative.
    #[inline]
    fn may_contain(&self, key: &UrlKey) -> bool {
        let (b, bits) = self.locate(key);
        let block = &self.blocks[b].0;
        covers(block[0], block, bits, self.probes)
    }

    /// Two passes per group of keys, as in `add_batch`: locate and read each block's first
    /// word, then test the masks against blocks that are by now in cache.
    fn may_contain_batch(&self, keys: &[UrlKey], out: &mut [u8]) {
        assert!(keys.len() == out.len(), "one verdict slot per key");
        let mut at = [(0usize, 0u64); GROUP];
        let mut first = [0u64; GROUP];
        for (group, verdicts) in keys.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
            for ((slot, w0), k) in at.iter_mut().zip(first.iter_mut()).zip(group) {
                *slot = self.locate(k);
                *w0 = self.blocks[slot.0].0[0];
            }
            for ((&(b, bits), &w0), v) in at.iter().zip(first.iter()).zip(verdicts.iter_mut()) {
                *v = u8::from(covers(w0, &self.blocks[b].0, bits, self.probes));
            }
        }
    }

    /// `add` calls so far.
    fn len(&self) -> u64 {
        self.len
    }

    /// Size of the bit array in bits.
    fn payload_bits(&self) -> u64 {
        self.blocks.len() as u64 * u64::from(BLOCK_BITS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stream of well-spread keys (SplitMix64 over a counter from a random
    /// base, so streams of different seeds do not overlap).
    fn keys(seed: u64, n: usize) -> Vec<UrlKey> {
        let base = mix64(seed ^ 0x0123_4567_89AB_CDEF);
        (0..n as u64).map(|i| [mix64(base.wrapping_add(2 * i)), mix64(base.wrapping_add(2 * i + 1))]).collect()
    }

    #[test]
    fn model_matches_the_known_optimum() {
        let (blocks, probes) = plan(1_000_000, 0.01).unwrap();
        let bits_per_key = f64::from(blocks) * 512.0 / 1e6;
        assert_eq!(probes, 6);
        assert!((9.85..9.95).contains(&bits_per_key), "{bits_per_key}");
        let (_, probes) = plan(1_000_000, 0.001).unwrap();
        assert_eq!(probes, 9);
        assert_eq!(plan(1, 0.5).unwrap().0, 1);
    }

    #[test]
    fn no_false_negatives_and_fpr_near_the_model() {
        let n = 200_000;
        let mut f = BlockedBloom::new(n as u64, 0.01).unwrap();
        let present = keys(1, n);
        f.add_batch(&present);
        assert!(present.iter().all(|k| f.may_contain(k)));
        let absent = keys(2, 400_000);
        let hits = absent.iter().filter(|k| f.may_contain(k)).count() as f64;
        let rate = hits / absent.len() as f64;
        // σ = sqrt(0.01·0.99/4e5) ≈ 1.6e-4: 5σ either side of the model's 1 %.
        assert!((0.0092..0.0108).contains(&rate), "measured FPR {rate}");
    }

    #[test]
    fn structured_keys_spread_like_random_ones() {
        // One host, sequential paths; and sequential hosts with one path.
        let n = 100_000u64;
        for shape in 0..2 {
            let mut f = BlockedBloom::new(n, 0.01).unwrap();
            let make = |i: u64| if shape == 0 { [7, i] } else { [i, 7] };
            for i in 0..n {
                f.add(&make(i));
            }
            assert!((0..n).all(|i| f.may_contain(&make(i))));
            let fp = (n..n + 200_000).filter(|&i| f.may_contain(&make(i))).count() as f64 / 2e5;
            assert!(fp < 0.0115, "shape {shape}: {fp}");
        }
    }

    #[test]
    fn blob_round_trip() {
        let mut f = BlockedBloom::new(5000, 0.02).unwrap();
        f.add_batch(&keys(3, 4000));
        let blob = f.to_blob();
        let g = match filter::ResidentFilter::load(&blob).unwrap() {
            filter::ResidentFilter::Bloom(g) => g,
            _ => panic!("wrong kind"),
        };
        assert_eq!((g.len(), g.probes(), g.blocks(), g.capacity()), (f.len(), f.probes(), f.blocks(), f.capacity()));
        assert_eq!(g.to_blob(), blob);
        let probe = keys(4, 20_000);
        assert!(probe.iter().all(|k| f.may_contain(k) == g.may_contain(k)));
    }

    #[test]
    fn many_probes_use_several_words() {
        let mut f = BlockedBloom::with_shape(4, 16, 10, 1e-6).unwrap();
        let k = [1, 2];
        f.add(&k);
        let set: u32 = f.blocks.iter().map(|b| b.0.iter().map(|w| w.count_ones()).sum::<u32>()).sum();
        assert!(set > 8 && set <= 16, "{set} bits set");
        assert!(f.may_contain(&k));
    }
}
