//! xxHash64 (Yann Collet's XXH64), the hash every meguri key and fingerprint is built on.
//!
//! ## Why this hash
//! URL keys, content fingerprints and simhash features need a fast, well-mixed 64-bit hash
//! that is stable forever (a key written into a `.meguri` file today must be recomputed
//! identically by a release years from now) and that has published test vectors so an
//! independent implementation can check ours. XXH64 is all three; it is not cryptographic,
//! which is fine: nothing here defends against an adversary choosing collisions, and the
//! exact tiers behind every filter turn a collision into a wasted confirm, not a lost URL.
//!
//! ## The algorithm, in the names used below
//! Five odd 64-bit primes `P1..P5`. Input of 32 bytes or more is consumed in stripes of four
//! lanes; each lane accumulator takes `acc = rotl(acc + lane·P2, 31)·P1` ([`round`]). The
//! four accumulators are folded with rotations 1, 7, 12, 18 and merged back through
//! [`merge_round`]. Shorter input starts from `seed + P5`. The total length is added, the
//! tail is consumed 8, then 4, then 1 byte at a time, and [`avalanche`] finishes the mix.
//! All arithmetic wraps modulo 2⁶⁴; all reads are little-endian, so the value does not depend
//! on the host's byte order.

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

/// The little-endian u64 at `b[at..at + 8]`.
#[inline(always)]
pub(crate) fn read_u64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

#[inline(always)]
fn read_u32(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u64::from(u32::from_le_bytes(w))
}

#[inline(always)]
fn round(acc: u64, lane: u64) -> u64 {
    acc.wrapping_add(lane.wrapping_mul(P2))
        .rotate_left(31)
        .wrapping_mul(P1)
}

#[inline(always)]
fn merge_round(acc: u64, val: u64) -> u64 {
    (acc ^ round(0, val)).wrapping_mul(P1).wrapping_add(P4)
}

/// The final mix: spreads every input bit over the whole output.
#[inline(always)]
pub fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

/// `P1⁻¹ mod 2⁶⁴` (P1 is odd, so it has one): Newton's iteration `x ← x·(2 − P1·x)` doubles
/// the number of correct low bits each step, starting from 3 (an odd `x` is its own inverse
/// mod 8), so five steps give all 64.
const P1_INV: u64 = {
    let mut x = P1;
    let mut i = 0;
    while i < 5 {
        x = x.wrapping_mul(2u64.wrapping_sub(P1.wrapping_mul(x)));
        i += 1;
    }
    x
};

/// [`round`] on a lane kept as `r = acc·P1⁻¹`: returns the next `r`, so that `r·P1` is
/// `round(r·P1, lane)`. Same operations as `round`, in another order (multiply first).
#[inline(always)]
fn round_pre(r: u64, lane: u64) -> u64 {
    r.wrapping_mul(P1).wrapping_add(lane.wrapping_mul(P2)).rotate_left(31)
}

/// XXH64 of `input` with `seed`.
///
/// Shape note: lanes 2 and 4 of the stripe loop are carried as `acc·P1⁻¹` ([`round_pre`]),
/// which is the same arithmetic as [`round`] with the final multiply moved to the start of
/// the next round. The four lane updates then no longer look alike to LLVM's SLP vectorizer,
/// which otherwise packs them into `i64x2.mul` pairs; V8 has no 64-bit vector multiply on
/// x86 and emulates it with 32-bit ones, and the scalar loop measured 1.7× faster on 1 KiB
/// and 100 KiB inputs (bench/suites/xxhash.bench.mjs, same machine, same run).
pub fn xxh64(input: &[u8], seed: u64) -> u64 {
    let len = input.len();
    // `chunks_exact` lets the compiler drop the per-read bounds checks in the stripe loop,
    // which is where long bodies spend their time.
    let stripes = input.chunks_exact(32);
    let tail = stripes.remainder();
    let h = if len >= 32 {
        let mut v1 = seed.wrapping_add(P1).wrapping_add(P2);
        let mut r2 = seed.wrapping_add(P2).wrapping_mul(P1_INV);
        let mut v3 = seed;
        let mut r4 = seed.wrapping_sub(P1).wrapping_mul(P1_INV);
        for stripe in stripes {
            v1 = round(v1, read_u64(stripe, 0));
            r2 = round_pre(r2, read_u64(stripe, 8));
            v3 = round(v3, read_u64(stripe, 16));
            r4 = round_pre(r4, read_u64(stripe, 24));
        }
        let v2 = r2.wrapping_mul(P1);
        let v4 = r4.wrapping_mul(P1);
        let mut acc = v1
            .rotate_left(1)
            .wrapping_add(v2.rotate_left(7))
            .wrapping_add(v3.rotate_left(12))
            .wrapping_add(v4.rotate_left(18));
        acc = merge_round(acc, v1);
        acc = merge_round(acc, v2);
        acc = merge_round(acc, v3);
        merge_round(acc, v4)
    } else {
        seed.wrapping_add(P5)
    };
    finish(h.wrapping_add(len as u64), tail)
}

/// The 8- and 4-byte steps over the last `< 32` bytes; returns the state and the 0–3 bytes left.
#[inline(always)]
fn tail_words(mut h: u64, mut tail: &[u8]) -> (u64, &[u8]) {
    while tail.len() >= 8 {
        h ^= round(0, read_u64(tail, 0));
        h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
        tail = &tail[8..];
    }
    if tail.len() >= 4 {
        h ^= read_u32(tail, 0).wrapping_mul(P1);
        h = h.rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
        tail = &tail[4..];
    }
    (h, tail)
}

/// Consumes the last `< 32` bytes 8, then 4, then 1 at a time, and avalanches.
#[inline(always)]
fn finish(h: u64, tail: &[u8]) -> u64 {
    let (mut h, tail) = tail_words(h, tail);
    for &b in tail {
        h ^= u64::from(b).wrapping_mul(P5);
        h = h.rotate_left(11).wrapping_mul(P1);
    }
    avalanche(h)
}

/// XXH64 of an input shorter than 32 bytes: the same value as [`xxh64`] without the stripe
/// loop's setup and the call, inlined where short strings dominate. Simhash features are words of
/// 1–15 bytes, and this form measured (bench/suites/simhash.bench.mjs) faster than calling
/// the general function per token.
///
/// The last 0–3 bytes, one dependent step each in XXH64, are where short inputs of varied
/// length mispredict: a loop of 0–3 rounds. Here all three steps are computed (reading
/// in-bounds bytes; the unused results are discarded) and the one the length calls for is
/// selected without a branch, so consecutive tokens' hashes overlap in the pipeline instead of
/// each waiting on a mispredicted loop exit.
#[inline(always)]
pub fn xxh64_short(input: &[u8], seed: u64) -> u64 {
    debug_assert!(input.len() < 32);
    let len = input.len();
    let (h, tail) = tail_words(seed.wrapping_add(P5).wrapping_add(len as u64), input);
    let r = tail.len();
    if len == 0 {
        return avalanche(h);
    }
    // Bytes len−r, len−r+⌊r/2⌋, len−1: for r = 1, 2, 3 exactly the tail's bytes in order (for
    // r = 0 some valid byte, unused).
    let last = len - 1;
    let step = |h: u64, b: u8| (h ^ u64::from(b).wrapping_mul(P5)).rotate_left(11).wrapping_mul(P1);
    let s1 = step(h, input[(len - r).min(last)]);
    let s2 = step(s1, input[(len - r + r / 2).min(last)]);
    let s3 = step(s2, input[last]);
    let pick = |k: usize| 0u64.wrapping_sub(u64::from(r == k));
    avalanche((h & pick(0)) | (s1 & pick(1)) | (s2 & pick(2)) | (s3 & pick(3)))
}

/// Hashes `count` byte strings packed back to back in `data`, where string `i` spans
/// `data[offsets[i]..offsets[i + 1]]`, writing one hash per string into `out`.
///
/// Preconditions: `offsets.len() == out.len() + 1`, offsets non-decreasing and within
/// `data`. Violations panic (and so abort in the wasm build) rather than read out of range.
pub fn xxh64_batch(data: &[u8], offsets: &[u32], seed: u64, out: &mut [u64]) {
    assert_eq!(offsets.len(), out.len() + 1, "offsets must have count + 1 entries");
    for (i, slot) in out.iter_mut().enumerate() {
        let start = offsets[i] as usize;
        let end = offsets[i + 1] as usize;
        *slot = xxh64(&data[start..end], seed);
    }
}

/// A 64-bit finalizer for already-random-ish integers (SplitMix64's mix). Filters use it to
/// derive independent-looking bits from a URLKey without rehashing the key's bytes.
#[inline(always)]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The xxHash project's sanity buffer: byte i is the top byte of a generator that starts
    /// at PRIME32 and is multiplied by PRIME64 each step (xxhsum's `BMK_fillTestBuffer`).
    fn sanity_buffer(len: usize) -> Vec<u8> {
        const PRIME32: u64 = 2_654_435_761;
        const PRIME64: u64 = 11_400_714_785_074_694_797;
        let mut gen = PRIME32;
        (0..len)
            .map(|_| {
                let b = (gen >> 56) as u8;
                gen = gen.wrapping_mul(PRIME64);
                b
            })
            .collect()
    }

    #[test]
    fn published_vectors() {
        // From the xxHash repository's sanity checks (see test/fixtures/xxhash64-vectors.json).
        let buf = sanity_buffer(2367);
        let seed = 2_654_435_761u64;
        assert_eq!(xxh64(&buf[..0], 0), 0xEF46_DB37_51D8_E999);
        assert_eq!(xxh64(&buf[..0], seed), 0xAC75_FDA2_929B_17EF);
        assert_eq!(xxh64(&buf[..1], 0), 0xE934_A84A_DB05_2768);
        assert_eq!(xxh64(&buf[..1], seed), 0x5014_6076_43A9_B4C3);
        assert_eq!(xxh64(&buf[..14], 0), 0x8282_DCC4_994E_35C8);
        assert_eq!(xxh64(&buf[..14], seed), 0xC3BD_6BF6_3DEB_6DF0);
        assert_eq!(xxh64(&buf[..222], 0), 0xB641_AE8C_B691_C174);
        assert_eq!(xxh64(&buf[..222], seed), 0x20CB_8AB7_AE10_C14A);
    }

    /// XXH64 written the textbook way (every lane in the `round` form, byte reads through
    /// `read_u64`), the oracle for the reshaped stripe loop.
    fn xxh64_textbook(input: &[u8], seed: u64) -> u64 {
        let len = input.len();
        let mut at = 0;
        let mut h = if len >= 32 {
            let mut v = [seed.wrapping_add(P1).wrapping_add(P2), seed.wrapping_add(P2), seed, seed.wrapping_sub(P1)];
            while at + 32 <= len {
                for (j, lane) in v.iter_mut().enumerate() {
                    *lane = round(*lane, read_u64(input, at + 8 * j));
                }
                at += 32;
            }
            let mut acc = v[0]
                .rotate_left(1)
                .wrapping_add(v[1].rotate_left(7))
                .wrapping_add(v[2].rotate_left(12))
                .wrapping_add(v[3].rotate_left(18));
            for lane in v {
                acc = merge_round(acc, lane);
            }
            acc
        } else {
            seed.wrapping_add(P5)
        };
        h = h.wrapping_add(len as u64);
        while at + 8 <= len {
            h ^= round(0, read_u64(input, at));
            h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
            at += 8;
        }
        if at + 4 <= len {
            h ^= read_u32(input, at).wrapping_mul(P1);
            h = h.rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
            at += 4;
        }
        for &b in &input[at..] {
            h ^= u64::from(b).wrapping_mul(P5);
            h = h.rotate_left(11).wrapping_mul(P1);
        }
        avalanche(h)
    }

    #[test]
    fn p1_inverse() {
        assert_eq!(P1.wrapping_mul(P1_INV), 1);
    }

    #[test]
    fn reshaped_loop_matches_textbook() {
        let mut rng = crate::testutil::Rng(0x6b65_7970);
        let data: Vec<u8> = (0..1210).map(|_| rng.next() as u8).collect();
        for seed in [0, 1, P1, u64::MAX, rng.next(), rng.next()] {
            for len in (0..300).chain([511, 512, 513, 1024, 1199]) {
                let at = (rng.next() % 7) as usize; // unaligned starts too
                let s = &data[at..at + len];
                assert_eq!(xxh64(s, seed), xxh64_textbook(s, seed), "len {} seed {:#x}", len, seed);
            }
        }
    }

    #[test]
    fn ascii_strings() {
        assert_eq!(xxh64(b"a", 0), 0xD24E_C4F1_A98C_6E5B);
        assert_eq!(xxh64(b"abc", 0), 0x44BC_2CF5_AD77_0999);
    }

    #[test]
    fn batch_matches_one_shot() {
        let words: [&[u8]; 4] = [b"", b"https://example.com/", b"x", &[0u8; 100]];
        let mut data = Vec::new();
        let mut offsets = vec![0u32];
        for w in words.iter() {
            data.extend_from_slice(w);
            offsets.push(data.len() as u32);
        }
        let mut out = vec![0u64; words.len()];
        xxh64_batch(&data, &offsets, 7, &mut out);
        for (w, h) in words.iter().zip(out.iter()) {
            assert_eq!(*h, xxh64(w, 7));
        }
    }

    #[test]
    fn short_form_matches_general_for_every_length_below_32() {
        let mut rng = crate::testutil::Rng(0x5407);
        for len in 0..32 {
            for _ in 0..50 {
                let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                let seed = rng.next();
                assert_eq!(xxh64_short(&bytes, seed), xxh64(&bytes, seed), "len {}", len);
            }
        }
    }
}
