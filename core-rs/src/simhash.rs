//! 64-bit Charikar simhash of text: the graded "how different is this page" signal.
//!
//! ## Problem
//! An exact content fingerprint flips on any byte change, so a rotating ad or a timestamp
//! looks like a real edit. We want a 64-bit signature whose Hamming distance grows with how
//! different two documents' word distributions are: near-identical pages land within a few
//! bits, unrelated pages about 32 bits apart.
//!
//! ## Derivation (Charikar, "Similarity estimation techniques from rounding algorithms",
//! STOC 2002; used for web near-duplicates by Manku, Jain & Das Sarma, WWW 2007)
//! A document is a weighted feature set `{(fⱼ, wⱼ)}`. Hash each feature to 64 bits,
//! `hⱼ = xxh64(fⱼ, SEED)`, and for every bit position `i` form the signed sum
//!
//! ```text
//!     Vᵢ = Σⱼ wⱼ · (2·bitᵢ(hⱼ) − 1)         simhash bit i = 1  ⇔  Vᵢ > 0
//! ```
//!
//! Each bit is the sign of a random hyperplane projection of the weight vector (the hash
//! bits play the random ±1 coordinates), so for two documents with angle θ between their
//! weight vectors, `P[bit differs] = θ/π` and the expected Hamming distance is `64·θ/π`:
//! identical vectors give 0, orthogonal ones (no shared words) give 32. A tie `Vᵢ = 0` gives
//! bit 0, so the empty document hashes to 0.
//!
//! ## Text features
//! [`simhash_text`]: features are tokens, maximal runs of characters that are Unicode
//! `Alphabetic` or `Numeric` (Rust's `char::is_alphanumeric`: letters, letter-like marks such
//! as Indic vowel signs, and the `Nd`/`Nl`/`No` numbers), each lowercased code point by code
//! point with `char::to_lowercase` (the context-free mapping, so a word-final `Σ` becomes
//! `σ`), and hashed as UTF-8. A token's weight is its frequency. Since
//! `Σ_tokens count·sign = Σ_occurrences sign`, adding ±1 per *occurrence* gives the same `V`
//! without counting tokens in a map. Bytes that are not valid UTF-8 separate tokens, as the
//! replacement character would.
//!
//! ## Counting fast
//! With unit weights, `Vᵢ = 2·onesᵢ − N` for `N` tokens, where `onesᵢ` counts hashes with bit
//! `i` set, so bit `i` is `2·onesᵢ > N`. In the shipped wasm build `ones` lives in 64 u8
//! lanes of four `v128`s, each hash adding its bits with 17 vector ops and no loads; the lanes
//! are folded into u32 totals every 255 tokens, before they can wrap ([`BitCounter`], which
//! also has the scalar form used where SIMD is unavailable). Tokens are found 64 bytes at a
//! time from SIMD byte-class masks and hashed with the short-input form of XXH64
//! ([`for_each_token`], [`crate::hash::xxh64_short`]). Together these made the kernel 1.46×
//! the previous one (table-fed u16 counters, byte-at-a-time tokenizer) in the same run of
//! bench/suites/simhash.bench.mjs; what remains is mostly the hash itself (~⅔ of the time:
//! a 1–15-byte XXH64 is a chain of 6–10 dependent 64-bit multiplies). Its last 0–3 bytes
//! are now stepped without a branch (all three steps computed, one selected), which took the
//! kernel another 1.05–1.07× (CPU time, three runs against the previous build).
//!
//! ## Stability
//! [`SEED`] and the tokenization are part of the value: a simhash stored in a `.meguri` file
//! must compare meaningfully with one computed by a later release, so golden vectors pin
//! them (`test/fixtures/simhash-vectors.json`). The Unicode classification comes from the
//! compiler's standard library (Unicode 14.0 in rustc 1.63); text using characters assigned
//! later could classify differently under a newer toolchain, which a toolchain upgrade must
//! check against the golden vectors.

use crate::hash::{xxh64, xxh64_short};

/// xxHash64 seed for simhash features: the little-endian u64 of the ASCII bytes `"simhash\0"`
/// (`0x0068_7361_686d_6973`), so feature hashes differ from plain `xxh64(token, 0)`.
pub const SEED: u64 = u64::from_le_bytes(*b"simhash\0");

/// `BITS[b][k]` = bit `k` of byte `b`, as the u16 that gets added to a counter.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
const BITS: [[u16; 8]; 256] = {
    let mut t = [[0u16; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 8 {
            t[b][k] = ((b >> k) & 1) as u16;
            k += 1;
        }
        b += 1;
    }
    t
};

/// Counts set bits per position over a stream of 64-bit hashes (unit weights).
///
/// Two shapes of the same count, chosen at compile time:
/// - **wasm `simd128`** (the shipped build, scripts/build-core.sh): 64 u8 counters in four
///   `v128`s. Per hash: one splat, then per vector a swizzle that copies byte `2k` into lanes
///   0..7 and byte `2k+1` into lanes 8..15, an AND with the lane's bit `[1,2,…,128]`, an
///   `i8x16.eq` against that bit (−1 where set) and a subtract: 17 vector ops, no loads. Lane
///   `j` of vector `k` counts bit `16k + j`. The u8 counters are folded into u32 totals every
///   255 hashes, before they can wrap.
/// - **scalar fallback** (native tests, a target without SIMD): 8 groups of 8 u16 counters fed
///   by a 256-entry table of each byte's bits, folded every 65 535 hashes.
pub struct BitCounter {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    small: [core::arch::wasm32::v128; 4],
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    small: [[u16; 8]; 8],
    total: [u32; 64],
    pending: u32,
    n: u64,
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod lanes {
    use core::arch::wasm32::{i8x16, i8x16_eq, i8x16_sub, i8x16_swizzle, u64x2_splat, v128, v128_and};

    /// Hashes between folds: a u8 counter holds 255 increments.
    pub const FOLD_EVERY: u32 = u8::MAX as u32;

    /// Bit `j mod 8` of the byte in lane `j`.
    #[inline(always)]
    fn bit_of_lane() -> v128 {
        i8x16(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128)
    }

    /// Swizzle indices putting byte `2k` of the hash in lanes 0..7, byte `2k+1` in 8..15.
    #[inline(always)]
    fn spread(k: i8) -> v128 {
        let (a, b) = (2 * k, 2 * k + 1);
        i8x16(a, a, a, a, a, a, a, a, b, b, b, b, b, b, b, b)
    }

    /// Adds 1 to lane counter `16k + j` for every set bit `16k + j` of `h`.
    #[inline(always)]
    pub fn add(small: &mut [v128; 4], h: u64) {
        let s = u64x2_splat(h);
        let bits = bit_of_lane();
        for (k, c) in small.iter_mut().enumerate() {
            let bytes = i8x16_swizzle(s, spread(k as i8));
            let hit = i8x16_eq(v128_and(bytes, bits), bits);
            *c = i8x16_sub(*c, hit);
        }
    }

    /// Adds the u8 lane counters into `total` and zeroes them.
    pub fn fold(small: &mut [v128; 4], total: &mut [u32; 64]) {
        for (k, c) in small.iter_mut().enumerate() {
            let lanes = bytes_of(*c);
            for (j, &v) in lanes.iter().enumerate() {
                total[16 * k + j] += u32::from(v);
            }
            *c = i8x16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        }
    }

    /// The 16 u8 lanes of `v`, extracted one by one (no `unsafe` transmute; this runs once
    /// per 255 hashes, so its cost does not show).
    #[inline(always)]
    fn bytes_of(v: v128) -> [u8; 16] {
        use core::arch::wasm32::u8x16_extract_lane as x;
        [
            x::<0>(v), x::<1>(v), x::<2>(v), x::<3>(v), x::<4>(v), x::<5>(v), x::<6>(v), x::<7>(v),
            x::<8>(v), x::<9>(v), x::<10>(v), x::<11>(v), x::<12>(v), x::<13>(v), x::<14>(v), x::<15>(v),
        ]
    }

    /// Four zeroed vectors.
    pub fn zero() -> [v128; 4] {
        let z = i8x16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        [z; 4]
    }
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod lanes {
    use super::BITS;

    /// Hashes between folds: a u16 counter holds 65 535 increments.
    pub const FOLD_EVERY: u32 = u16::MAX as u32;

    /// Adds 1 to counter `8j + k` for every set bit `8j + k` of `h`.
    #[inline]
    pub fn add(small: &mut [[u16; 8]; 8], h: u64) {
        let bytes = h.to_le_bytes();
        for (group, &b) in small.iter_mut().zip(bytes.iter()) {
            let row = &BITS[b as usize];
            for k in 0..8 {
                group[k] += row[k];
            }
        }
    }

    /// Adds the u16 counters into `total` and zeroes them.
    pub fn fold(small: &mut [[u16; 8]; 8], total: &mut [u32; 64]) {
        for (j, group) in small.iter_mut().enumerate() {
            for (k, c) in group.iter_mut().enumerate() {
                total[j * 8 + k] += u32::from(*c);
                *c = 0;
            }
        }
    }

    /// Zeroed counters.
    pub fn zero() -> [[u16; 8]; 8] {
        [[0; 8]; 8]
    }
}

impl Default for BitCounter {
    fn default() -> Self {
        BitCounter { small: lanes::zero(), total: [0; 64], pending: 0, n: 0 }
    }
}

impl BitCounter {
    /// Adds one hash.
    #[inline]
    pub fn add(&mut self, h: u64) {
        lanes::add(&mut self.small, h);
        self.pending += 1;
        if self.pending == lanes::FOLD_EVERY {
            self.fold();
        }
    }

    fn fold(&mut self) {
        lanes::fold(&mut self.small, &mut self.total);
        self.n += u64::from(self.pending);
        self.pending = 0;
    }

    /// The simhash: bit `i` set iff more than half of the hashes have bit `i` set.
    pub fn finish(&mut self) -> u64 {
        self.fold();
        let mut out = 0u64;
        for (i, &ones) in self.total.iter().enumerate() {
            if 2 * u64::from(ones) > self.n {
                out |= 1 << i;
            }
        }
        out
    }
}

/// ASCII letters and digits map to their lowercase byte; everything else to 0.
#[cfg(test)]
const ASCII_TOKEN: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        t[c] = if b.is_ascii_lowercase() || b.is_ascii_digit() {
            b
        } else if b.is_ascii_uppercase() {
            b + 32
        } else {
            0
        };
        c += 1;
    }
    t
};

/// Decodes one UTF-8 scalar starting at `bytes[i]` (a non-ASCII lead byte). Returns the char
/// and its length, or `None` for an invalid sequence (the caller skips one byte).
#[inline]
fn decode(bytes: &[u8], i: usize) -> Option<(char, usize)> {
    let b0 = bytes[i];
    let (len, init) = match b0 {
        0xC2..=0xDF => (2, u32::from(b0 & 0x1F)),
        0xE0..=0xEF => (3, u32::from(b0 & 0x0F)),
        0xF0..=0xF4 => (4, u32::from(b0 & 0x07)),
        _ => return None,
    };
    if i + len > bytes.len() {
        return None;
    }
    let mut cp = init;
    for &b in &bytes[i + 1..i + len] {
        if b & 0xC0 != 0x80 {
            return None;
        }
        cp = (cp << 6) | u32::from(b & 0x3F);
    }
    // Reject overlong forms and out-of-range values; char::from_u32 rejects surrogates.
    let min = [0, 0, 0x80, 0x800, 0x1_0000][len];
    if cp < min {
        return None;
    }
    char::from_u32(cp).map(|c| (c, len))
}

/// Byte classes for the tokenizer's ASCII fast path.
const SEP: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const HIGH: u8 = 3;

/// [`SEP`] for ASCII that is not a letter or digit, [`LOWER`] for lowercase letters and
/// digits, [`UPPER`] for uppercase letters, [`HIGH`] for every byte ≥ 0x80.
const CLASS: [u8; 256] = {
    let mut t = [HIGH; 256];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        t[c] = if b.is_ascii_lowercase() || b.is_ascii_digit() {
            LOWER
        } else if b.is_ascii_uppercase() {
            UPPER
        } else {
            SEP
        };
        c += 1;
    }
    t
};

/// Calls `emit` with each token of `text` (lowercased UTF-8), reusing `buf`.
///
/// Two loops produce the same tokens as the byte-at-a-time reference in the tests
/// (`reference_tokens`, held to it by a seeded differential test):
/// - **blocks**: while the next 64 bytes are all ASCII, [`block_masks`] classifies them at
///   once into a word mask (letters and digits) and an uppercase mask, and token boundaries
///   come from bit arithmetic: starts `w & !(w << 1 | carry)`, stops `!w & (w << 1 | carry)`
///   (`carry` = the previous block ended inside a word). A token made only of lowercase
///   letters and digits is emitted as a slice of `text` (no copy); one with uppercase is
///   lowercased into `buf`.
/// - **scalar** ([`scalar_tokens`]): a block holding a byte ≥ 0x80, and the last < 64 bytes,
///   go through a byte-class loop that decodes UTF-8 when a token reaches a non-ASCII byte
///   ([`continue_token`]); it returns at the first token boundary past the block, where the
///   block loop resumes.
///
/// On the bench's 10 KiB HTML-ish pages (~1 900 tokens each) the byte-at-a-time loop cost
/// about as much as hashing the tokens (native profile, /tmp harness over the bench corpus).
pub fn for_each_token(text: &[u8], buf: &mut Vec<u8>, mut emit: impl FnMut(&[u8])) {
    let n = text.len();
    let mut i = 0;
    // Start of a token still open at the end of the previous block.
    let mut open: Option<usize> = None;
    while i + 64 <= n {
        let block: &[u8; 64] = text[i..i + 64].try_into().expect("64-byte block");
        let (w, up, high) = block_masks(block);
        if high != 0 {
            i = scalar_tokens(text, open.take().unwrap_or(i), i + 64, buf, &mut emit);
            continue;
        }
        let carry = u64::from(open.is_some());
        let prev = (w << 1) | carry;
        let mut starts = w & !prev;
        let mut stops = !w & prev;
        if let Some(s) = open {
            if stops == 0 {
                i += 64; // the word fills the block and goes on
                continue;
            }
            let e = i + stops.trailing_zeros() as usize;
            stops &= stops - 1;
            open = None;
            emit_ascii(&text[s..e], text[s..e].iter().any(u8::is_ascii_uppercase), buf, &mut emit);
        }
        while starts != 0 {
            let a = starts.trailing_zeros();
            starts &= starts - 1;
            if stops == 0 {
                open = Some(i + a as usize);
                break;
            }
            let b = stops.trailing_zeros();
            stops &= stops - 1;
            let span = (up >> a) & ((1u64 << (b - a)) - 1);
            let tok = &text[i + a as usize..i + b as usize];
            emit_ascii(tok, span != 0, buf, &mut emit);
        }
        i += 64;
    }
    scalar_tokens(text, open.unwrap_or(i), n, buf, &mut emit);
}

/// Emits an ASCII token, lowercased into `buf` only when it has uppercase letters.
#[inline(always)]
fn emit_ascii(tok: &[u8], upper: bool, buf: &mut Vec<u8>, emit: &mut impl FnMut(&[u8])) {
    if upper {
        buf.clear();
        push_ascii_lower(buf, tok);
        emit(buf);
    } else {
        emit(tok);
    }
}

/// Masks of a 64-byte block, bit `j` for byte `j`: ASCII letters and digits, ASCII uppercase
/// letters, bytes ≥ 0x80. wasm `simd128`: 16 bytes per step (`(b | 0x20) − 'a' < 26` is a
/// letter, `b − '0' < 10` a digit, letter with `b < 0x60` uppercase; the sign bit is ≥ 0x80).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn block_masks(block: &[u8; 64]) -> (u64, u64, u64) {
    use core::arch::wasm32::*;
    let (mut w, mut up, mut high) = (0u64, 0u64, 0u64);
    for k in 0..4 {
        let b = &block[16 * k..16 * k + 16];
        let v = u8x16(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
        let alpha = u8x16_lt(u8x16_sub(v128_or(v, u8x16_splat(0x20)), u8x16_splat(b'a')), u8x16_splat(26));
        let digit = u8x16_lt(u8x16_sub(v, u8x16_splat(b'0')), u8x16_splat(10));
        let upper = v128_and(alpha, u8x16_lt(v, u8x16_splat(0x60)));
        w |= u64::from(u8x16_bitmask(v128_or(alpha, digit))) << (16 * k);
        up |= u64::from(u8x16_bitmask(upper)) << (16 * k);
        high |= u64::from(u8x16_bitmask(v)) << (16 * k);
    }
    (w, up, high)
}

/// Masks of a 64-byte block (see the `simd128` form), one byte class at a time.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn block_masks(block: &[u8; 64]) -> (u64, u64, u64) {
    let (mut w, mut up, mut high) = (0u64, 0u64, 0u64);
    for (j, &b) in block.iter().enumerate() {
        match CLASS[b as usize] {
            LOWER => w |= 1 << j,
            UPPER => {
                w |= 1 << j;
                up |= 1 << j;
            }
            HIGH => high |= 1 << j,
            _ => {}
        }
    }
    (w, up, high)
}

/// The byte-class loop over tokens starting in `text[i..limit)` (`i` at a token start or a
/// separator). Each token is followed to its end, even past `limit`; returns the index after
/// the last byte consumed (no token open there).
fn scalar_tokens(text: &[u8], mut i: usize, limit: usize, buf: &mut Vec<u8>, emit: &mut impl FnMut(&[u8])) -> usize {
    let n = text.len();
    while i < limit {
        let c = CLASS[text[i] as usize];
        if c == SEP {
            i += 1;
            continue;
        }
        let start = i;
        let mut upper = false;
        let mut c = c;
        while c == LOWER || c == UPPER {
            upper |= c == UPPER;
            i += 1;
            if i == n {
                break;
            }
            c = CLASS[text[i] as usize];
        }
        if i < n && c == HIGH {
            buf.clear();
            push_ascii_lower(buf, &text[start..i]);
            i = continue_token(text, i, buf);
            if !buf.is_empty() {
                emit(buf);
            }
        } else {
            emit_ascii(&text[start..i], upper, buf, emit);
        }
    }
    i
}

/// Appends `ascii` (letters and digits only) lowercased.
#[inline]
fn push_ascii_lower(buf: &mut Vec<u8>, ascii: &[u8]) {
    buf.extend(ascii.iter().map(|b| b.to_ascii_lowercase()));
}

/// The general tokenizer loop from `text[i]` (a byte ≥ 0x80) to the end of the current token,
/// appending lowercased UTF-8 to `buf` (which may already hold the token's ASCII prefix).
/// Returns the index just past the byte, character or invalid sequence that ended the token.
fn continue_token(text: &[u8], mut i: usize, buf: &mut Vec<u8>) -> usize {
    let n = text.len();
    while i < n {
        let b = text[i];
        if b < 0x80 {
            match CLASS[b as usize] {
                LOWER => buf.push(b),
                UPPER => buf.push(b + 32),
                _ => return i + 1,
            }
            i += 1;
            continue;
        }
        match decode(text, i) {
            Some((c, len)) => {
                i += len;
                if c.is_alphanumeric() {
                    let mut enc = [0u8; 4];
                    for lc in c.to_lowercase() {
                        buf.extend_from_slice(lc.encode_utf8(&mut enc).as_bytes());
                    }
                } else if !buf.is_empty() {
                    return i;
                }
            }
            None => {
                i += 1;
                if !buf.is_empty() {
                    return i;
                }
            }
        }
    }
    n
}

/// Simhash of UTF-8 `text` with frequency-weighted, lowercased alphanumeric tokens.
pub fn simhash_text(text: &[u8], buf: &mut Vec<u8>) -> u64 {
    let mut counter = BitCounter::default();
    for_each_token(text, buf, |tok| {
        let h = if tok.len() < 32 { xxh64_short(tok, SEED) } else { xxh64(tok, SEED) };
        counter.add(h);
    });
    counter.finish()
}

/// Simhash of caller-weighted features: feature `j` is `data[offsets[j]..offsets[j+1]]`
/// (hashed as given, no lowercasing) with weight `weights[j]` (any finite number; negative
/// weights subtract). Bit `i` is set iff `Σ w·(±1) > 0`.
pub fn simhash_features(data: &[u8], offsets: &[u32], weights: &[f64]) -> u64 {
    assert_eq!(offsets.len(), weights.len() + 1, "simhash_features: offsets must have count + 1 entries");
    let mut v = [0f64; 64];
    for (j, &w) in weights.iter().enumerate() {
        let h = xxh64(&data[offsets[j] as usize..offsets[j + 1] as usize], SEED);
        for (i, acc) in v.iter_mut().enumerate() {
            if (h >> i) & 1 == 1 {
                *acc += w;
            } else {
                *acc -= w;
            }
        }
    }
    let mut out = 0u64;
    for (i, &acc) in v.iter().enumerate() {
        if acc > 0.0 {
            out |= 1 << i;
        }
    }
    out
}

/// Simhashes `count` texts packed in `data` (text `i` is `data[offsets[i]..offsets[i+1]]`).
pub fn simhash_text_batch(data: &[u8], offsets: &[u32], out: &mut [u64]) {
    assert_eq!(offsets.len(), out.len() + 1, "simhash_text_batch: offsets must have count + 1 entries");
    let mut buf = Vec::with_capacity(64);
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = simhash_text(&data[offsets[i] as usize..offsets[i + 1] as usize], &mut buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for_each_token(text.as_bytes(), &mut buf, |t| out.push(String::from_utf8(t.to_vec()).unwrap()));
        out
    }

    /// The obvious implementation: count tokens in a map, add weight·(±1) per bit.
    fn slow(text: &str) -> u64 {
        let mut counts: std::collections::BTreeMap<String, i64> = Default::default();
        for t in tokens(text) {
            *counts.entry(t).or_insert(0) += 1;
        }
        let mut v = [0i64; 64];
        for (t, c) in counts.iter() {
            let h = xxh64(t.as_bytes(), SEED);
            for (i, acc) in v.iter_mut().enumerate() {
                *acc += if (h >> i) & 1 == 1 { *c } else { -*c };
            }
        }
        v.iter().enumerate().fold(0, |o, (i, &a)| if a > 0 { o | 1 << i } else { o })
    }

    /// The tokenizer as it was before the ASCII fast path: one byte or character at a time
    /// into `buf`. The differential test holds [`for_each_token`] to it.
    fn reference_tokens(text: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut buf: Vec<u8> = Vec::new();
        let mut i = 0;
        let n = text.len();
        while i < n {
            let b = text[i];
            if b < 0x80 {
                let t = ASCII_TOKEN[b as usize];
                if t != 0 {
                    buf.push(t);
                } else if !buf.is_empty() {
                    out.push(std::mem::take(&mut buf));
                }
                i += 1;
                continue;
            }
            match decode(text, i) {
                Some((c, len)) => {
                    if c.is_alphanumeric() {
                        let mut enc = [0u8; 4];
                        for lc in c.to_lowercase() {
                            buf.extend_from_slice(lc.encode_utf8(&mut enc).as_bytes());
                        }
                    } else if !buf.is_empty() {
                        out.push(std::mem::take(&mut buf));
                    }
                    i += len;
                }
                None => {
                    if !buf.is_empty() {
                        out.push(std::mem::take(&mut buf));
                    }
                    i += 1;
                }
            }
        }
        if !buf.is_empty() {
            out.push(buf);
        }
        out
    }

    #[test]
    fn fast_tokenizer_matches_reference_on_random_bytes() {
        // Bytes drawn from pieces that hit every branch: ASCII classes, multi-byte letters and
        // non-letters, truncated and invalid sequences, at random boundaries.
        let pieces: [&[u8]; 16] = [
            b"ab", b"Cd", b"9", b" ", b"<p>", b"\xC3\xA9", b"\xC3\x89", b"\xE6\x97\xA5", b"\xE2\x80\x94",
            b"\xF0\x9F\x8E\x89", b"\xFF", b"\xE2\x82", b"\xCE\xA3", b"\xC2\xA0", b"X", b"\x80",
        ];
        let mut rng = crate::testutil::Rng(0x70C3);
        let mut buf = Vec::new();
        for round in 0..20_000 {
            let mut text = Vec::new();
            // Long texts cross 64-byte blocks (some all-ASCII, some not); short ones do not.
            let pieces_per_text = if round % 2 == 0 { 24 } else { 300 };
            let ascii_only = round % 3 == 0;
            for _ in 0..rng.below(pieces_per_text) {
                let k = rng.below(if ascii_only { 5 } else { pieces.len() as u64 }) as usize;
                text.extend_from_slice(pieces[k]);
            }
            if round % 5 == 0 {
                // A run of 70+ word bytes (a token spanning a whole block), then more pieces.
                text.extend(std::iter::repeat(b'Q').take(70 + rng.below(100) as usize));
                for _ in 0..rng.below(pieces_per_text) {
                    text.extend_from_slice(pieces[rng.below(5) as usize]);
                }
            }
            let mut got = Vec::new();
            for_each_token(&text, &mut buf, |t| got.push(t.to_vec()));
            assert_eq!(got, reference_tokens(&text), "{:?}", text);
        }
    }

    #[test]
    fn tokenizes_unicode_letters_and_digits() {
        assert_eq!(tokens("Hello, WORLD! x2 ÉTÉ"), ["hello", "world", "x2", "été"]);
        assert_eq!(tokens("日本語のテキスト、二つ"), ["日本語のテキスト", "二つ"]);
        assert_eq!(tokens("ΟΔΟΣ İx ½"), ["οδοσ", "i\u{307}x", "½"]);
        assert_eq!(tokens("a\u{FF}b\u{80}c"), ["a\u{FF}b", "c"]); // ÿ is a letter, U+0080 is not
        let mut raw = Vec::new();
        let mut buf = Vec::new();
        for_each_token(b"ab\xFFcd\xE2\x82", &mut buf, |t| raw.push(t.to_vec()));
        assert_eq!(raw, [b"ab".to_vec(), b"cd".to_vec()]);
        assert!(tokens("  ,;  ").is_empty());
    }

    #[test]
    fn golden_values_never_drift() {
        // Pinned with test/fixtures/simhash-vectors.json; a change here breaks stored simhashes.
        let mut buf = Vec::new();
        assert_eq!(SEED, 0x0068_7361_686d_6973);
        assert_eq!(simhash_text(b"a", &mut buf), 0xc2d8_a253_1f79_7896);
        assert_eq!(simhash_text(b"Hello, World!", &mut buf), 0x9480_801b_b140_0566);
        assert_eq!(simhash_text(b"The quick brown fox jumps over the lazy dog.", &mut buf), 0x4943_adb0_e79c_0b6d);
    }

    #[test]
    fn counter_matches_slow_sum() {
        let texts = ["", "a", "a a a b", "the quick brown fox jumps over the lazy dog", "Ünïcödé ünïcödé 123 ４５６"];
        let mut buf = Vec::new();
        for t in texts.iter() {
            assert_eq!(simhash_text(t.as_bytes(), &mut buf), slow(t), "{}", t);
        }
        assert_eq!(simhash_text(b"", &mut buf), 0);
    }

    #[test]
    fn counter_folds_before_u16_overflow() {
        // 70 000 copies of one token: every set bit of its hash must survive the fold.
        let text = "w ".repeat(70_000);
        let mut buf = Vec::new();
        assert_eq!(simhash_text(text.as_bytes(), &mut buf), xxh64(b"w", SEED));
    }

    #[test]
    fn features_agree_with_text_counts() {
        let mut data = Vec::new();
        let mut offsets = vec![0u32];
        for t in ["the", "cat", "sat"] {
            data.extend_from_slice(t.as_bytes());
            offsets.push(data.len() as u32);
        }
        let mut buf = Vec::new();
        assert_eq!(simhash_features(&data, &offsets, &[2.0, 1.0, 1.0]), simhash_text(b"The cat sat, THE", &mut buf));
    }
}
