//! Standard ribbon filter (Dillinger & Walzer, "Ribbon filter: practically smaller than
//! Bloom and Xor", 2021): the static, frozen form of a seen-set (DESIGN §6).
//!
//! ## Problem
//! Given a fixed set S of n URLKeys and a fingerprint width r (1..=16), store m·r bits, m
//! only a few percent above n, such that every key of S answers "maybe" and any other key
//! answers "maybe" with probability 2⁻ʳ.
//!
//! ## Construction (paper symbols → code names)
//! Each key x gets, from its [`key_digest`] `h` under the attempt's salt, a row of a linear
//! system over GF(2):
//! - a start `s(x)` (`start`) uniform in `0..m−w+1`, by `fastrange32(h >> 32, m − w + 1)`;
//! - a coefficient vector `c(x)` (`coeff`) of w = 128 bits ([`WIDTH`]), from two more mixes
//!   of `h`, with bit 0 forced to 1 (so slot `s(x)` is the row's pivot);
//! - an r-bit fingerprint `f(x)` (`result`), the low r bits of `h`.
//!
//! The filter is a solution Z ∈ GF(2)^{m×r} (one r-bit value per slot) of
//! `⊕_{j<w} c(x)_j · Z[s(x) + j] = f(x)` for every x ∈ S. Query: recompute the row and
//! compare; members always match, and an absent key's left side is a uniform r-bit value
//! independent of its f, so it matches with probability exactly 2⁻ʳ whatever the keys are.
//!
//! Solving is on-the-fly banding: rows are inserted into an upper-triangular band
//! (`coeffs[i]`, `results[i]` hold the row whose pivot is slot i). Inserting (s, c, f): if
//! slot s is free, store it; else XOR the stored row into it, shift c right by its trailing
//! zeros (advancing s by the same amount) and repeat. A row that cancels to c = 0 is
//! redundant if f = 0 too (a repeated key) and a failure otherwise. Back-substitution then
//! runs from slot m−1 down: Z[i] = results[i] ⊕ ⊕_{j≥1} coeffs[i]_j·Z[i+j], with free slots
//! (no pivot) filled with pseudo-random bits. Rows are inserted in start order (a one-pass
//! bucket sort of the digests, which are monotone in the start), so the band is walked
//! sequentially instead of by cache-missing jumps; success does not depend on the order.
//!
//! ## Parameters
//! The system fails (some row cancels inconsistently) with a probability that falls with
//! the overhead m/n − 1 and rises slowly with n, because the band's local load fluctuates.
//! For w = 128 the overhead at which a given failure rate holds grows by roughly 0.4 % per
//! doubling of n (RocksDB's measurements for its Standard128Ribbon show the same shape).
//! [`slots_for`] uses `m/n = 1.033 + 0.0035·max(0, log2 n − 16)` (1.047 at 2²⁰ keys), from
//! the `calibrate_overhead` run below (first-attempt failures, w = 128):
//!
//! ```text
//!   n \ m/n   1.025   1.030   1.035   1.040   1.045
//!   10 000     3 %     3 %     0.3 %   0.3 %   0
//!   65 536    19 %     8 %     4 %     1 %     1 %
//!   262 144   54 %    24 %    13 %     5 %     1 %
//!   1 048 576 95 %    85 %    40 %    10 %     0 of 20
//! ```
//!
//! so about one construction in 20 retries. A failure retries with the next seed and, every
//! 8 failures, 2 % more slots, so construction always ends. Bits per key are then
//! r·m/n ≈ 1.047·r at 1M keys (the issue's bound is 1.07·r), against ≈ 1.44·log2(1/ε) for a
//! Bloom filter: at ε = 2⁻⁷ ≈ 0.8 % that is 7.3 bits/key instead of 10.
//!
//! Sharding keeps each system at most [`SHARD_TARGET`] keys (so the overhead stays at its
//! 1M-key value however large the set grows, and the build holds one shard's band in
//! memory): a key belongs to shard `digest(x, SHARD_SALT) >> (64 − log2 S)`.
//!
//! ## Storage (interleaved column-major, as in RocksDB's InterleavedSoln)
//! Slots are grouped in blocks of 64; block b stores r words, word j holding bit j of
//! Z[64b .. 64b+64]. A query's 128-slot window covers at most three blocks, so it reads
//! 3·r words near each other and takes r parities of `c & window`. m is a multiple of 64.
//! Batch queries locate groups of 16 keys and read each window's first word before
//! evaluating any, as the Bloom filter's batches do (1M keys, r = 8: about 105 → 80 ns of
//! CPU per query in the wasm build; reading all three blocks ahead measured no better).

use crate::filter::{self, fastrange32, key_digest, BlobError, Membership, Put, Reader, UrlKey, KIND_RIBBON, KIND_SHARDED_RIBBON};
use crate::hash::mix64;

/// Coefficient width w in bits.
pub const WIDTH: usize = 128;
/// Largest fingerprint width.
pub const MAX_BITS: u32 = 16;
/// A sharded build keeps each shard at or below this many keys.
pub const SHARD_TARGET: u64 = 1 << 20;
/// The most shards a sharded ribbon may have.
pub const MAX_SHARDS: u32 = 1 << 12;
/// Failed attempts after which the slot count grows by 2 %.
const ATTEMPTS_PER_SIZE: u32 = 8;

const RIBBON_SALT: u64 = 0xA076_1D64_78BD_642F;
const SHARD_SALT: u64 = 0xE703_7ED1_A0B4_28DB;
const COEFF_LO: u64 = 0x8EBC_6AF0_9C88_C6E3;
const COEFF_HI: u64 = 0x5899_65CC_7537_4CC3;
const FILL_SALT: u64 = 0x1D8E_4E27_C47D_124F;

/// The digest salt of construction attempt `seed`.
#[inline(always)]
fn salt_of(seed: u32) -> u64 {
    RIBBON_SALT ^ mix64(u64::from(seed).wrapping_add(1))
}

/// Slots for `n` keys (0 for an empty set): a multiple of 64, at least [`WIDTH`].
pub fn slots_for(n: u64) -> usize {
    if n == 0 {
        return 0;
    }
    let factor = 1.033 + 0.0035 * ((n as f64).log2() - 16.0).max(0.0);
    let m = (n as f64 * factor).ceil() as usize;
    ((m.max(WIDTH) + 63) / 64) * 64
}

/// Which shard of `2^log2` a key belongs to.
#[inline(always)]
pub fn shard_index(key: &UrlKey, log2: u32) -> u32 {
    if log2 == 0 {
        0
    } else {
        (key_digest(key, SHARD_SALT) >> (64 - log2)) as u32
    }
}

/// A row of the linear system.
#[inline(always)]
fn row(h: u64, starts: u64, mask: u64) -> (usize, u128, u16) {
    let start = fastrange32(h >> 32, starts) as usize;
    let lo = mix64(h ^ COEFF_LO) | 1;
    let hi = mix64(h ^ COEFF_HI);
    (start, (u128::from(hi) << 64) | u128::from(lo), (h & mask) as u16)
}

#[inline(always)]
fn parity(x: u128) -> u32 {
    x.count_ones() & 1
}

/// Why a build did not produce a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildError {
    /// Key at this position of its shard belongs to another shard.
    Misrouted(usize),
    /// Memory for the band or the solution could not be allocated.
    OutOfMemory,
    /// The system stayed unsolvable after every retry (never observed; keys would have to
    /// collide on their full digest with different fingerprints, which cannot happen).
    Unsolvable,
}

/// One solved ribbon system.
pub struct Ribbon {
    slots: usize,
    bits: u32,
    seed: u32,
    /// `salt_of(seed)`, kept so a query does not recompute it.
    salt: u64,
    len: u64,
    /// (slots/64 + 1)·bits words: the solution plus one zero block, so a window starting in
    /// the last full block reads a third block without a bounds branch.
    words: Vec<u64>,
}

fn zeroed<T: Copy>(len: usize, zero: T) -> Result<Vec<T>, BuildError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| BuildError::OutOfMemory)?;
    v.resize(len, zero);
    Ok(v)
}

/// Sorts digests by their top bits (hence by start) with one counting pass into `out`.
fn bucket_sort(hashes: &[u64], out: &mut Vec<u64>) -> Result<(), BuildError> {
    let n = hashes.len();
    // About four digests per bucket: enough locality, a histogram that stays cached.
    let bits = (64 - (n as u64 / 4).max(1).leading_zeros()).min(24);
    let shift = 64 - bits;
    let mut counts = zeroed(1usize << bits, 0u32)?;
    for &h in hashes {
        counts[(h >> shift) as usize] += 1;
    }
    let mut at = 0u32;
    for c in counts.iter_mut() {
        let here = *c;
        *c = at;
        at += here;
    }
    out.clear();
    out.try_reserve_exact(n).map_err(|_| BuildError::OutOfMemory)?;
    out.resize(n, 0);
    for &h in hashes {
        let b = (h >> shift) as usize;
        out[counts[b] as usize] = h;
        counts[b] += 1;
    }
    Ok(())
}

impl Ribbon {
    /// Solves the system for `keys` with `bits`-bit fingerprints. When `shard` is
    /// `Some((index, log2))`, every key must route to `index` of `2^log2` shards.
    pub fn build(keys: &[UrlKey], bits: u32, shard: Option<(u32, u32)>) -> Result<Ribbon, BuildError> {
        assert!((1..=MAX_BITS).contains(&bits), "fingerprint bits out of range");
        if let Some((index, log2)) = shard {
            if let Some(bad) = keys.iter().position(|k| shard_index(k, log2) != index) {
                return Err(BuildError::Misrouted(bad));
            }
        }
        let n = keys.len() as u64;
        let mut slots = slots_for(n);
        if slots == 0 {
            return Ok(Ribbon { slots: 0, bits, seed: 0, salt: salt_of(0), len: 0, words: Vec::new() });
        }
        let mut hashes = zeroed(keys.len(), 0u64)?;
        let mut sorted = Vec::new();
        let mut coeffs: Vec<u128> = Vec::new();
        let mut results: Vec<u16> = Vec::new();
        for seed in 0..ATTEMPTS_PER_SIZE * 8 {
            if seed > 0 && seed % ATTEMPTS_PER_SIZE == 0 {
                slots = ((slots + slots / 50 + 63) / 64) * 64;
            }
            let salt = salt_of(seed);
            for (h, k) in hashes.iter_mut().zip(keys) {
                *h = key_digest(k, salt);
            }
            bucket_sort(&hashes, &mut sorted)?;
            coeffs.clear();
            results.clear();
            coeffs.try_reserve_exact(slots).map_err(|_| BuildError::OutOfMemory)?;
            results.try_reserve_exact(slots).map_err(|_| BuildError::OutOfMemory)?;
            coeffs.resize(slots, 0);
            results.resize(slots, 0);
            if band(&sorted, bits, &mut coeffs, &mut results) {
                let words = back_substitute(&coeffs, &results, bits, salt)?;
                return Ok(Ribbon { slots, bits, seed, salt, len: n, words });
            }
        }
        Err(BuildError::Unsolvable)
    }

    /// Fingerprint bits r.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Slots m.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The construction seed that succeeded.
    pub fn seed(&self) -> u32 {
        self.seed
    }

    fn solution(&self) -> &[u64] {
        &self.words[..self.slots / 64 * self.bits as usize]
    }

    /// Serializes as a kind-1 blob (layout in `filter`).
    pub fn to_blob(&self) -> Vec<u8> {
        let mut out = filter::begin(KIND_RIBBON, 24 + self.solution().len() * 8);
        out.put_u32(self.slots as u32);
        out.put_u16(self.bits as u16);
        out.put_u16(WIDTH as u16);
        out.put_u32(self.seed);
        out.put_u32(0);
        out.put_u64(self.len);
        out.put_words(self.solution());
        filter::seal(&mut out);
        out
    }

    /// Reads one system's words after its parameters were read from a header.
    fn from_parts(slots: u32, bits: u32, seed: u32, len: u64, r: &mut Reader) -> Result<Ribbon, BlobError> {
        let slots = slots as usize;
        if slots % 64 != 0 || (slots == 0) != (len == 0) || (slots != 0 && slots < WIDTH) {
            return Err(BlobError::BadParams);
        }
        let count = slots / 64 * bits as usize;
        let mut words = Vec::new();
        if slots > 0 {
            words.try_reserve_exact(count + bits as usize).map_err(|_| BlobError::BadParams)?;
            r.words_into(count, &mut words)?;
            words.resize(count + bits as usize, 0);
        }
        Ok(Ribbon { slots, bits, seed, salt: salt_of(seed), len, words })
    }

    /// Parses the body of a kind-1 blob.
    pub fn from_body(body: &[u8]) -> Result<Ribbon, BlobError> {
        let mut r = Reader::new(body);
        let slots = r.u32()?;
        let bits = u32::from(r.u16()?);
        let width = r.u16()?;
        let seed = r.u32()?;
        let reserved = r.u32()?;
        let len = r.u64()?;
        if !(1..=MAX_BITS).contains(&bits) || width as usize != WIDTH || reserved != 0 {
            return Err(BlobError::BadParams);
        }
        let size = (slots as usize / 64).checked_mul(bits as usize * 8).ok_or(BlobError::BadParams)?;
        if r.remaining() != size {
            return Err(BlobError::BadParams);
        }
        Self::from_parts(slots, bits, seed, len, &mut r)
    }
}

/// Where a key's row lands in a solved system: the first of its three blocks' words, its
/// offset in that block, and its coefficients and fingerprint.
#[derive(Clone, Copy, Default)]
struct Window {
    base: usize,
    offset: u32,
    coeff: u128,
    result: u16,
}

/// Keys located ahead in the batch queries (see `BlockedBloom::add_batch` for why).
const GROUP: usize = 16;

impl Ribbon {
    /// The key's window; the system must have slots.
    #[inline(always)]
    fn window(&self, key: &UrlKey) -> Window {
        let r = self.bits as usize;
        let (start, coeff, result) = row(key_digest(key, self.salt), (self.slots - WIDTH + 1) as u64, (1u64 << r) - 1);
        Window { base: (start >> 6) * r, offset: (start & 63) as u32, coeff, result }
    }

    /// Whether the solution satisfies the window's row; `first` is `words[base]`, which the
    /// batch path has read ahead.
    #[inline(always)]
    fn satisfies(&self, w: &Window, first: u64) -> bool {
        let r = self.bits as usize;
        let o = w.offset;
        let (lo, hi) = (w.coeff as u64, (w.coeff >> 64) as u64);
        // The 128-bit coefficient shifted to the window's offset, as three block words.
        let c0 = lo << o;
        let c1 = (hi << o) | ((lo >> 1) >> (63 - o));
        let c2 = (hi >> 1) >> (63 - o);
        let words = &self.words[w.base..w.base + 3 * r];
        let mut got = (c0 & first) ^ (c1 & words[r]) ^ (c2 & words[2 * r]);
        got = u64::from(got.count_ones() & 1);
        for j in 1..r {
            let x = (c0 & words[j]) ^ (c1 & words[r + j]) ^ (c2 & words[2 * r + j]);
            got |= u64::from(x.count_ones() & 1) << j;
        }
        got == u64::from(w.result)
    }
}

impl Membership for Ribbon {
    /// Whether `key` may be in the set (false is authoritative).
    #[inline]
    fn may_contain(&self, key: &UrlKey) -> bool {
        if self.slots == 0 {
            return false;
        }
        let w = self.window(key);
        self.satisfies(&w, self.words[w.base])
    }

    /// Two passes per group: locate each key and read its first word, then evaluate.
    fn may_contain_batch(&self, keys: &[UrlKey], out: &mut [u8]) {
        assert!(keys.len() == out.len(), "one verdict slot per key");
        if self.slots == 0 {
            out.iter_mut().for_each(|v| *v = 0);
            return;
        }
        let mut at = [(Window::default(), 0u64); GROUP];
        for (group, verdicts) in keys.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
            for (slot, k) in at.iter_mut().zip(group) {
                let w = self.window(k);
                *slot = (w, self.words[w.base]);
            }
            for ((w, first), v) in at.iter().zip(verdicts.iter_mut()) {
                *v = u8::from(self.satisfies(w, *first));
            }
        }
    }

    /// Keys the filter was built over (repeats included).
    fn len(&self) -> u64 {
        self.len
    }

    /// Size of the solution in bits (m·r).
    fn payload_bits(&self) -> u64 {
        self.slots as u64 * u64::from(self.bits)
    }
}

/// Inserts the rows of the sorted digests into the band. False when a row is inconsistent.
fn band(sorted: &[u64], bits: u32, coeffs: &mut [u128], results: &mut [u16]) -> bool {
    let starts = (coeffs.len() - WIDTH + 1) as u64;
    let mask = (1u64 << bits) - 1;
    for &h in sorted {
        let (mut s, mut c, mut f) = row(h, starts, mask);
        loop {
            let existing = coeffs[s];
            if existing == 0 {
                coeffs[s] = c;
                results[s] = f;
                break;
            }
            c ^= existing;
            f ^= results[s];
            if c == 0 {
                if f == 0 {
                    break; // a repeated key (or a consistent dependent row): nothing to add
                }
                return false;
            }
            let tz = c.trailing_zeros();
            c >>= tz;
            s += tz as usize;
            debug_assert!(s < coeffs.len());
        }
    }
    true
}

/// Solves the banded system from the top slot down into interleaved column-major words.
fn back_substitute(coeffs: &[u128], results: &[u16], bits: u32, salt: u64) -> Result<Vec<u64>, BuildError> {
    let r = bits as usize;
    let blocks = coeffs.len() / 64;
    let mut words = zeroed((blocks + 1) * r, 0u64)?;
    // window[j] bit t = column j of Z[i + t] for the slot i being solved.
    let mut window = [0u128; MAX_BITS as usize];
    for b in (0..blocks).rev() {
        for i in (b * 64..b * 64 + 64).rev() {
            let c = coeffs[i];
            if c == 0 {
                let fill = mix64(salt ^ FILL_SALT ^ i as u64);
                for (j, w) in window[..r].iter_mut().enumerate() {
                    *w = (*w << 1) | u128::from((fill >> j) & 1);
                }
            } else {
                let f = u32::from(results[i]);
                for (j, w) in window[..r].iter_mut().enumerate() {
                    let shifted = *w << 1;
                    *w = shifted | u128::from(((f >> j) & 1) ^ parity(c & shifted));
                }
            }
        }
        for (j, w) in window[..r].iter().enumerate() {
            words[b * r + j] = *w as u64;
        }
    }
    Ok(words)
}

/// Several ribbon systems, one per shard of the key space.
pub struct ShardedRibbon {
    log2: u32,
    bits: u32,
    len: u64,
    shards: Vec<Ribbon>,
}

impl Membership for ShardedRibbon {
    /// Whether `key` may be in the set (false is authoritative).
    #[inline]
    fn may_contain(&self, key: &UrlKey) -> bool {
        self.shards[shard_index(key, self.log2) as usize].may_contain(key)
    }

    /// Two passes per group, as for one system: route and locate each key and read its
    /// first word, then evaluate.
    fn may_contain_batch(&self, keys: &[UrlKey], out: &mut [u8]) {
        assert!(keys.len() == out.len(), "one verdict slot per key");
        let mut at = [(0usize, Window::default(), 0u64); GROUP];
        for (group, verdicts) in keys.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
            for (slot, k) in at.iter_mut().zip(group) {
                let s = shard_index(k, self.log2) as usize;
                let shard = &self.shards[s];
                // An empty shard is marked with the impossible base usize::MAX.
                *slot = if shard.slots == 0 {
                    (s, Window { base: usize::MAX, ..Window::default() }, 0)
                } else {
                    let w = shard.window(k);
                    (s, w, shard.words[w.base])
                };
            }
            for ((s, w, first), v) in at.iter().zip(verdicts.iter_mut()) {
                *v = u8::from(w.base != usize::MAX && self.shards[*s].satisfies(w, *first));
            }
        }
    }

    /// Keys over all shards.
    fn len(&self) -> u64 {
        self.len
    }

    /// Solution bits over all shards.
    fn payload_bits(&self) -> u64 {
        self.shards.iter().map(Ribbon::payload_bits).sum()
    }
}

impl ShardedRibbon {
    /// Fingerprint bits r.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Number of shards.
    pub fn shard_count(&self) -> u32 {
        1 << self.log2
    }

    /// Parses the body of a kind-2 blob.
    pub fn from_body(body: &[u8]) -> Result<ShardedRibbon, BlobError> {
        let mut r = Reader::new(body);
        let count = r.u32()?;
        let bits = u32::from(r.u16()?);
        let width = r.u16()?;
        let len = r.u64()?;
        if count < 2 || count > MAX_SHARDS || !count.is_power_of_two() {
            return Err(BlobError::BadParams);
        }
        if !(1..=MAX_BITS).contains(&bits) || width as usize != WIDTH {
            return Err(BlobError::BadParams);
        }
        let mut table = Vec::with_capacity(count as usize);
        let mut words = 0usize;
        let mut total = 0u64;
        for _ in 0..count {
            let (slots, seed, n) = (r.u32()?, r.u32()?, r.u64()?);
            let shard_words = (slots as usize / 64).checked_mul(bits as usize).ok_or(BlobError::BadParams)?;
            words = words.checked_add(shard_words).ok_or(BlobError::BadParams)?;
            total = total.checked_add(n).ok_or(BlobError::BadParams)?;
            table.push((slots, seed, n));
        }
        if total != len || Some(r.remaining()) != words.checked_mul(8) {
            return Err(BlobError::BadParams);
        }
        let mut shards = Vec::with_capacity(count as usize);
        for (slots, seed, n) in table {
            shards.push(Ribbon::from_parts(slots, bits, seed, n, &mut r)?);
        }
        Ok(ShardedRibbon { log2: count.trailing_zeros(), bits, len, shards })
    }
}

/// Collects solved shards (in any order) and emits the blob once all are present: the
/// streaming build holds the solutions, never more than one shard's keys.
pub struct RibbonBuilder {
    bits: u32,
    log2: u32,
    expected_len: u64,
    shards: Vec<Option<Ribbon>>,
}

/// Why a builder refused a shard or could not finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuilderError {
    /// The shard failed to build.
    Build(BuildError),
    /// The shard index is out of range.
    BadIndex,
    /// The shard was already added.
    Repeated,
    /// Some shard was never added.
    Missing(u32),
    /// The shards hold a different number of keys than announced.
    CountMismatch(u64),
}

impl RibbonBuilder {
    /// A builder for `shard_count` shards (a power of two up to [`MAX_SHARDS`]) of
    /// `bits`-bit fingerprints over `expected_len` keys in all.
    pub fn new(shard_count: u32, bits: u32, expected_len: u64) -> Option<Self> {
        if shard_count == 0 || shard_count > MAX_SHARDS || !shard_count.is_power_of_two() {
            return None;
        }
        if !(1..=MAX_BITS).contains(&bits) {
            return None;
        }
        let shards = (0..shard_count).map(|_| None).collect();
        Some(RibbonBuilder { bits, log2: shard_count.trailing_zeros(), expected_len, shards })
    }

    /// Solves shard `index` over `keys`.
    pub fn add_shard(&mut self, index: u32, keys: &[UrlKey]) -> Result<(), BuilderError> {
        let slot = self.shards.get_mut(index as usize).ok_or(BuilderError::BadIndex)?;
        if slot.is_some() {
            return Err(BuilderError::Repeated);
        }
        let shard = if self.log2 == 0 { None } else { Some((index, self.log2)) };
        *slot = Some(Ribbon::build(keys, self.bits, shard).map_err(BuilderError::Build)?);
        Ok(())
    }

    /// The blob: kind 1 for a single shard, kind 2 otherwise.
    pub fn finish(&self) -> Result<Vec<u8>, BuilderError> {
        let mut done = Vec::with_capacity(self.shards.len());
        for (i, s) in self.shards.iter().enumerate() {
            done.push(s.as_ref().ok_or(BuilderError::Missing(i as u32))?);
        }
        let total: u64 = done.iter().map(|s| s.len).sum();
        if total != self.expected_len {
            return Err(BuilderError::CountMismatch(total));
        }
        if let [only] = done.as_slice() {
            return Ok(only.to_blob());
        }
        Ok(sharded_blob(&done, self.bits))
    }
}

/// Serializes solved shards as a kind-2 blob (layout in `filter`).
pub fn sharded_blob(shards: &[&Ribbon], bits: u32) -> Vec<u8> {
    debug_assert!(shards.len() >= 2 && shards.len().is_power_of_two());
    let words: usize = shards.iter().map(|s| s.solution().len()).sum();
    let len: u64 = shards.iter().map(|s| s.len).sum();
    let mut out = filter::begin(KIND_SHARDED_RIBBON, 16 + 16 * shards.len() + 8 * words);
    out.put_u32(shards.len() as u32);
    out.put_u16(bits as u16);
    out.put_u16(WIDTH as u16);
    out.put_u64(len);
    for s in shards {
        out.put_u32(s.slots as u32);
        out.put_u32(s.seed);
        out.put_u64(s.len);
    }
    for s in shards {
        out.put_words(s.solution());
    }
    filter::seal(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::ResidentFilter;

    fn keys(seed: u64, n: usize) -> Vec<UrlKey> {
        let base = mix64(seed ^ 0x0123_4567_89AB_CDEF);
        (0..n as u64).map(|i| [mix64(base.wrapping_add(2 * i)), mix64(base.wrapping_add(2 * i + 1))]).collect()
    }

    /// The definition, slot by slot: XOR of Z[s + j] over the coefficient's set bits.
    fn reference_query(f: &Ribbon, key: &UrlKey) -> bool {
        let r = f.bits as usize;
        let h = key_digest(key, salt_of(f.seed));
        let (s, c, want) = row(h, (f.slots - WIDTH + 1) as u64, (1 << r) - 1);
        let mut got = 0u32;
        for j in 0..WIDTH {
            if (c >> j) & 1 == 1 {
                let slot = s + j;
                for col in 0..r {
                    got ^= (((f.words[slot / 64 * r + col] >> (slot % 64)) & 1) as u32) << col;
                }
            }
        }
        got == u32::from(want)
    }

    #[test]
    fn members_match_and_the_fast_query_agrees_with_the_definition() {
        for &(n, bits) in &[(1usize, 1u32), (5, 16), (100, 7), (3000, 10), (50_000, 14)] {
            let set = keys(n as u64, n);
            let f = Ribbon::build(&set, bits, None).unwrap();
            assert!(set.iter().all(|k| f.may_contain(k)), "n={n} r={bits}");
            for k in keys(999, 2000).iter().chain(set.iter().take(500)) {
                assert_eq!(f.may_contain(k), reference_query(&f, k));
            }
        }
    }

    #[test]
    fn empty_and_repeated_keys() {
        let f = Ribbon::build(&[], 8, None).unwrap();
        assert!(!f.may_contain(&[1, 2]));
        let mut set = keys(5, 1000);
        set.extend_from_slice(&set.clone()[..500]);
        let f = Ribbon::build(&set, 8, None).unwrap();
        assert_eq!(f.len(), 1500);
        assert!(set.iter().all(|k| f.may_contain(k)));
    }

    #[test]
    fn fpr_is_two_to_the_minus_r() {
        let set = keys(11, 100_000);
        let absent = keys(12, 400_000);
        for &bits in &[4u32, 7, 10] {
            let f = Ribbon::build(&set, bits, None).unwrap();
            let p = 1.0 / f64::from(1u32 << bits);
            let hits = absent.iter().filter(|k| f.may_contain(k)).count() as f64;
            let sigma = (p * (1.0 - p) * 4e5).sqrt();
            assert!((hits - p * 4e5).abs() < 5.0 * sigma + 1.0, "r={bits}: {hits} vs {}", p * 4e5);
        }
    }

    #[test]
    fn overhead_at_a_million_keys() {
        let set = keys(21, 1_000_000);
        let f = Ribbon::build(&set, 7, None).unwrap();
        let per_key = f.payload_bits() as f64 / 1e6;
        assert!(per_key <= 1.07 * 7.0, "{per_key} bits/key");
        assert!(set.iter().all(|k| f.may_contain(k)));
    }

    #[test]
    fn sharded_routing_and_blobs() {
        let all = keys(31, 40_000);
        let log2 = 2;
        let mut b = RibbonBuilder::new(4, 9, all.len() as u64).unwrap();
        let mut parts = vec![Vec::new(); 4];
        for k in &all {
            parts[shard_index(k, log2) as usize].push(*k);
        }
        assert!(parts.iter().all(|p| p.len() > 9_000));
        assert_eq!(b.add_shard(1, &parts[0]), Err(BuilderError::Build(BuildError::Misrouted(0))));
        assert_eq!(b.finish(), Err(BuilderError::Missing(0)));
        for (i, p) in parts.iter().enumerate().rev() {
            b.add_shard(i as u32, p).unwrap();
        }
        assert_eq!(b.add_shard(2, &parts[2]), Err(BuilderError::Repeated));
        let blob = b.finish().unwrap();
        let f = match ResidentFilter::load(&blob).unwrap() {
            ResidentFilter::Sharded(f) => f,
            _ => panic!("kind"),
        };
        assert_eq!((f.len(), f.shard_count(), f.bits()), (40_000, 4, 9));
        assert!(all.iter().all(|k| f.may_contain(k)));
        let fp = keys(32, 200_000).iter().filter(|k| f.may_contain(k)).count();
        assert!((250..550).contains(&fp), "{fp} of 200k at 2^-9");
        let mut wrong = RibbonBuilder::new(4, 9, 1).unwrap();
        for (i, p) in parts.iter().enumerate() {
            wrong.add_shard(i as u32, p).unwrap();
        }
        assert_eq!(wrong.finish(), Err(BuilderError::CountMismatch(40_000)));
    }

    #[test]
    fn single_shard_builder_emits_the_plain_blob() {
        let set = keys(41, 5000);
        let mut b = RibbonBuilder::new(1, 12, 5000).unwrap();
        b.add_shard(0, &set).unwrap();
        assert_eq!(b.finish().unwrap(), Ribbon::build(&set, 12, None).unwrap().to_blob());
    }

    #[test]
    fn blob_round_trip_and_bad_params() {
        let set = keys(51, 3000);
        let f = Ribbon::build(&set, 5, None).unwrap();
        let blob = f.to_blob();
        let g = match ResidentFilter::load(&blob).unwrap() {
            ResidentFilter::Ribbon(g) => g,
            _ => panic!("kind"),
        };
        assert_eq!(g.to_blob(), blob);
        for k in keys(52, 5000).iter().chain(set.iter()) {
            assert_eq!(f.may_contain(k), g.may_contain(k));
        }
        // A body whose parameters disagree with its size is refused even with a valid
        // checksum (the envelope is resealed after the edit).
        let mut bad = blob.clone();
        bad[28] = 6;
        filter::seal(&mut bad);
        assert_eq!(ResidentFilter::load(&bad).err(), Some(BlobError::BadParams));
        let mut bad = blob;
        bad[28] = 17;
        filter::seal(&mut bad);
        assert_eq!(ResidentFilter::load(&bad).err(), Some(BlobError::BadParams));
    }

    #[test]
    fn crafted_sizes_are_refused_without_overflow() {
        // A resealed sharded blob whose table claims huge shards: the size arithmetic must
        // fail cleanly (checked), not wrap or panic.
        let all = keys(61, 4000);
        let mut b = RibbonBuilder::new(2, 16, all.len() as u64).unwrap();
        let mut parts = vec![Vec::new(); 2];
        for k in &all {
            parts[shard_index(k, 1) as usize].push(*k);
        }
        for (i, p) in parts.iter().enumerate() {
            b.add_shard(i as u32, p).unwrap();
        }
        let blob = b.finish().unwrap();
        for shard in 0..2 {
            let mut bad = blob.clone();
            let at = 40 + 16 * shard;
            bad[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
            filter::seal(&mut bad);
            assert_eq!(ResidentFilter::load(&bad).err(), Some(BlobError::BadParams));
        }
        let mut bloom = crate::bloom::BlockedBloom::new(100, 0.01).unwrap().to_blob();
        bloom[24..28].copy_from_slice(&(1u32 << 26).to_le_bytes());
        filter::seal(&mut bloom);
        assert_eq!(ResidentFilter::load(&bloom).err(), Some(BlobError::BadParams));
    }

    /// Prints first-attempt failure rates by size and overhead; run with
    /// `cargo test --release calibrate_overhead -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn calibrate_overhead() {
        for &n in &[1_000usize, 10_000, 65_536, 262_144, 1_048_576] {
            for &factor in &[1.025f64, 1.03, 1.035, 1.04, 1.045] {
                let slots = (((n as f64 * factor).ceil() as usize + 63) / 64) * 64;
                let trials = (20_000_000 / n).clamp(20, 400);
                let mut fails = 0;
                let mut coeffs = vec![0u128; slots];
                let mut results = vec![0u16; slots];
                let mut sorted = Vec::new();
                for t in 0..trials {
                    let set = keys(t as u64 * 7919 + n as u64, n);
                    let hashes: Vec<u64> = set.iter().map(|k| key_digest(k, salt_of(0))).collect();
                    bucket_sort(&hashes, &mut sorted).unwrap();
                    coeffs.iter_mut().for_each(|c| *c = 0);
                    if !band(&sorted, 8, &mut coeffs, &mut results) {
                        fails += 1;
                    }
                }
                println!("n={n:>8} factor={factor:.3} fails {fails}/{trials}");
            }
        }
    }
}
