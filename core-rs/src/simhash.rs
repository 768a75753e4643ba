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
//! `i` set, so bit `i` is `2·onesᵢ > N`. `ones` is kept as 8 groups of 8 u16 counters; each
//! hash byte indexes a 256-entry table of its 8 bits as u16s and adds that row to its group
//! (8 vector adds per token instead of 64 scalar ones). The u16 counters are folded into u32
//! totals every 65 535 tokens, before they can overflow.
//!
//! ## Stability
//! [`SEED`] and the tokenization are part of the value: a simhash stored in a `.meguri` file
//! must compare meaningfully with one computed by a later release, so golden vectors pin
//! them (`test/fixtures/simhash-vectors.json`). The Unicode classification comes from the
//! compiler's standard library (Unicode 14.0 in rustc 1.63); text using characters assigned
//! later could classify differently under a newer toolchain, which a toolchain upgrade must
//! check against the golden vectors.

use crate::hash::xxh64;

/// xxHash64 seed for simhash features: the little-endian u64 of the ASCII bytes `"simhash\0"`
/// (`0x0068_7361_686d_6973`), so feature hashes differ from plain `xxh64(token, 0)`.
pub const SEED: u64 = u64::from_le_bytes(*b"simhash\0");

/// `BITS[b][k]` = bit `k` of byte `b`, as the u16 that gets added to a counter.
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
pub struct BitCounter {
    small: [[u16; 8]; 8],
    total: [u32; 64],
    pending: u32,
    n: u64,
}

impl Default for BitCounter {
    fn default() -> Self {
        BitCounter { small: [[0; 8]; 8], total: [0; 64], pending: 0, n: 0 }
    }
}

impl BitCounter {
    /// Adds one hash.
    #[inline]
    pub fn add(&mut self, h: u64) {
        let bytes = h.to_le_bytes();
        for (group, &b) in self.small.iter_mut().zip(bytes.iter()) {
            let row = &BITS[b as usize];
            for k in 0..8 {
                group[k] += row[k];
            }
        }
        self.pending += 1;
        if self.pending == u32::from(u16::MAX) {
            self.fold();
        }
    }

    fn fold(&mut self) {
        for (j, group) in self.small.iter_mut().enumerate() {
            for (k, c) in group.iter_mut().enumerate() {
                self.total[j * 8 + k] += u32::from(*c);
                *c = 0;
            }
        }
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

/// Calls `emit` with each token of `text` (lowercased UTF-8), reusing `buf`.
pub fn for_each_token(text: &[u8], buf: &mut Vec<u8>, mut emit: impl FnMut(&[u8])) {
    buf.clear();
    let mut i = 0;
    let n = text.len();
    while i < n {
        let b = text[i];
        if b < 0x80 {
            let t = ASCII_TOKEN[b as usize];
            if t != 0 {
                buf.push(t);
            } else if !buf.is_empty() {
                emit(buf);
                buf.clear();
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
                    emit(buf);
                    buf.clear();
                }
                i += len;
            }
            None => {
                if !buf.is_empty() {
                    emit(buf);
                    buf.clear();
                }
                i += 1;
            }
        }
    }
    if !buf.is_empty() {
        emit(buf);
        buf.clear();
    }
}

/// Simhash of UTF-8 `text` with frequency-weighted, lowercased alphanumeric tokens.
pub fn simhash_text(text: &[u8], buf: &mut Vec<u8>) -> u64 {
    let mut counter = BitCounter::default();
    for_each_token(text, buf, |tok| counter.add(xxh64(tok, SEED)));
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
