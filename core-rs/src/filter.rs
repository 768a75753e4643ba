//! What every meguri filter shares: how a URLKey is reduced to filter hash bits, the
//! serialized blob envelope (magic, version, kind, checksum), and the read-only
//! [`ResidentFilter`] a blob is loaded into.
//!
//! ## Key digest
//! A URLKey is `[host, path]`, two u64s that are already xxHash64 outputs. `path` is uniform
//! per URL, but `host` is shared by every URL of a host group, and tests (or callers) may
//! hand in structured keys, so no filter uses a raw lane directly. [`key_digest`] folds both
//! lanes into one word, `x = path ⊕ host·M` (M odd, so each lane alone maps bijectively),
//! and finishes with SplitMix64's mixer after XOR-ing a per-use salt:
//! `digest(key, salt) = mix64(x ⊕ salt)`. The Bloom filter, each ribbon construction attempt
//! and the shard router use different salts, so their bits behave as independent hashes of
//! the key. Two keys that collide on `x` (probability 2⁻⁶⁴ per pair for random keys) collide
//! in every filter, which only ever makes one a false positive of the other.
//!
//! ## Blob layout (all integers little-endian)
//! ```text
//! offset size  field
//!      0    4  magic "MGFB"
//!      4    1  format version (1)
//!      5    1  kind: 0 blocked Bloom, 1 ribbon, 2 sharded ribbon
//!      6    2  reserved, zero
//!      8    8  checksum: xxh64(blob[16..], seed = u64 at blob[0..8])
//!     16    8  body length: total length − 24
//!     24    …  body: the kind's parameters, then its payload
//!
//! kind 0, blocked Bloom (body = 32 + 64·blocks bytes)
//!     24    4  blocks (u32, ≥ 1)
//!     28    4  probes per key (u32, 1..=16)
//!     32    8  capacity the filter was sized for (u64)
//!     40    8  keys added (u64)
//!     48    8  target false-positive rate (f64)
//!     56    …  blocks × 8 u64 words (512 bits each)
//!
//! kind 1, ribbon (body = 24 + r·m/8 bytes)
//!     24    4  slots m (u32, a multiple of 64; 0 for an empty set)
//!     28    2  fingerprint bits r (u16, 1..=16)
//!     30    2  coefficient width w (u16, 128)
//!     32    4  construction seed (u32)
//!     36    4  reserved, zero
//!     40    8  keys (u64)
//!     48    …  (m/64)·r u64 words, block-major: for block b, column j is word b·r + j
//!
//! kind 2, sharded ribbon (body = 16 + 16·S + Σ r·mᵢ/8 bytes)
//!     24    4  shard count S (u32, a power of two ≥ 2)
//!     28    2  fingerprint bits r (u16, 1..=16)
//!     30    2  coefficient width w (u16, 128)
//!     32    8  keys, all shards (u64)
//!     40 16·S  per shard: slots mᵢ (u32), seed (u32), keys (u64)
//!      …    …  shard 0's words, shard 1's words, … (as in kind 1)
//! ```
//! The checksum's seed is the first eight bytes, so the hash covers every byte but its own
//! field: a flipped kind byte, a truncated body or a flipped payload bit all fail. Parsing
//! checks, in order: length ≥ 24, magic, version, kind, body length, checksum, then the
//! kind's parameters against the body size; the first failure is reported as a
//! [`BlobError`] and no filter is built.

use crate::bloom::BlockedBloom;
use crate::hash::{mix64, xxh64};
use crate::ribbon::{Ribbon, ShardedRibbon};

/// A 128-bit URLKey as `[host, path]`, the in-memory layout of four u32 lanes.
pub type UrlKey = [u64; 2];

/// Odd multiplier folding the host lane into the path lane (2⁶⁴/φ, rounded to odd).
const HOST_MUL: u64 = 0x9E37_79B9_7F4A_7C15;

/// One well-mixed 64-bit hash of a key under `salt` (see the module comment).
#[inline(always)]
pub fn key_digest(key: &UrlKey, salt: u64) -> u64 {
    mix64(key[1] ^ key[0].wrapping_mul(HOST_MUL) ^ salt)
}

/// `⌊x·n / 2³²⌋` for a uniform 32-bit `x` (held in a u64) and `n < 2³²`: maps `x` onto
/// `0..n` with one multiply and no division (Lemire's fastrange). Monotone in `x`.
#[inline(always)]
pub fn fastrange32(x: u64, n: u64) -> u64 {
    debug_assert!(x <= u64::from(u32::MAX) && n <= u64::from(u32::MAX));
    (x * n) >> 32
}

/// The blob magic.
pub const MAGIC: [u8; 4] = *b"MGFB";
/// The blob format version this build writes and reads.
pub const VERSION: u8 = 1;
/// Bytes before the body.
pub const HEADER_LEN: usize = 24;

/// Kind byte of a blocked Bloom blob.
pub const KIND_BLOOM: u8 = 0;
/// Kind byte of a single ribbon blob.
pub const KIND_RIBBON: u8 = 1;
/// Kind byte of a sharded ribbon blob.
pub const KIND_SHARDED_RIBBON: u8 = 2;

/// Why a blob was rejected. The discriminants are the status codes the ABI returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum BlobError {
    /// Shorter than the 24-byte header.
    Truncated = 1,
    /// The first four bytes are not "MGFB".
    BadMagic = 2,
    /// A format version this build does not read.
    BadVersion = 3,
    /// A kind byte other than 0, 1, 2.
    UnknownKind = 4,
    /// The body length field disagrees with the bytes present.
    LengthMismatch = 5,
    /// The checksum does not match the contents.
    Checksum = 6,
    /// The parameters are out of range or disagree with the payload size.
    BadParams = 7,
    /// A well-formed blob of a kind the caller did not ask for.
    WrongKind = 8,
}

/// Little-endian reads from a body, each bounds-checked.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// Reads `bytes` from the start.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], BlobError> {
        let end = self.at.checked_add(n).ok_or(BlobError::BadParams)?;
        let s = self.bytes.get(self.at..end).ok_or(BlobError::BadParams)?;
        self.at = end;
        Ok(s)
    }

    /// The next u16.
    pub fn u16(&mut self) -> Result<u16, BlobError> {
        let s = self.take(2)?;
        Ok(u16::from_le_bytes([s[0], s[1]]))
    }

    /// The next u32.
    pub fn u32(&mut self) -> Result<u32, BlobError> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    /// The next u64.
    pub fn u64(&mut self) -> Result<u64, BlobError> {
        let mut w = [0u8; 8];
        w.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(w))
    }

    /// The next f64.
    pub fn f64(&mut self) -> Result<f64, BlobError> {
        self.u64().map(f64::from_bits)
    }

    /// The next `count` u64 words, appended to `out`.
    pub fn words_into(&mut self, count: usize, out: &mut Vec<u64>) -> Result<(), BlobError> {
        let bytes = self.take(count.checked_mul(8).ok_or(BlobError::BadParams)?)?;
        out.extend(bytes.chunks_exact(8).map(|c| {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            u64::from_le_bytes(w)
        }));
        Ok(())
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }
}

/// Appends little-endian fields to a blob under construction.
pub trait Put {
    /// Appends a u16.
    fn put_u16(&mut self, v: u16);
    /// Appends a u32.
    fn put_u32(&mut self, v: u32);
    /// Appends a u64.
    fn put_u64(&mut self, v: u64);
    /// Appends u64 words.
    fn put_words(&mut self, words: &[u64]);
}

impl Put for Vec<u8> {
    fn put_u16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_words(&mut self, words: &[u64]) {
        for w in words {
            self.extend_from_slice(&w.to_le_bytes());
        }
    }
}

/// Starts a blob of `kind` whose body will be `body_len` bytes: writes the header with a
/// zero checksum and reserves the whole capacity. Finish with [`seal`].
pub fn begin(kind: u8, body_len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + body_len);
    out.extend_from_slice(&MAGIC);
    out.push(VERSION);
    out.push(kind);
    out.put_u16(0);
    out.put_u64(0);
    out.put_u64(body_len as u64);
    out
}

/// Fills in the checksum of a blob from [`begin`] once its body is complete.
pub fn seal(blob: &mut [u8]) {
    debug_assert_eq!(blob.len() as u64 - HEADER_LEN as u64, read_u64(blob, 16));
    let sum = xxh64(&blob[16..], read_u64(blob, 0));
    blob[8..16].copy_from_slice(&sum.to_le_bytes());
}

fn read_u64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Validates the envelope and returns the kind and the body (parameters and payload).
pub fn open(blob: &[u8]) -> Result<(u8, &[u8]), BlobError> {
    if blob.len() < HEADER_LEN {
        return Err(BlobError::Truncated);
    }
    if blob[0..4] != MAGIC {
        return Err(BlobError::BadMagic);
    }
    if blob[4] != VERSION {
        return Err(BlobError::BadVersion);
    }
    let kind = blob[5];
    if kind > KIND_SHARDED_RIBBON {
        return Err(BlobError::UnknownKind);
    }
    if read_u64(blob, 16) != (blob.len() - HEADER_LEN) as u64 {
        return Err(BlobError::LengthMismatch);
    }
    if xxh64(&blob[16..], read_u64(blob, 0)) != read_u64(blob, 8) {
        return Err(BlobError::Checksum);
    }
    Ok((kind, &blob[HEADER_LEN..]))
}

/// The one-sided membership query every filter answers.
pub trait Membership {
    /// Whether `key` may be in the set; `false` is authoritative.
    fn may_contain(&self, key: &UrlKey) -> bool;

    /// Keys the filter holds (added, or built over; repeats included).
    fn len(&self) -> u64;

    /// Bits of filter payload (headers excluded).
    fn payload_bits(&self) -> u64;

    /// Whether the filter holds no keys.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes 1 (maybe) or 0 (absent) per key into `out`, which has one slot per key.
    fn may_contain_batch(&self, keys: &[UrlKey], out: &mut [u8]) {
        assert!(keys.len() == out.len(), "one verdict slot per key");
        for (k, o) in keys.iter().zip(out.iter_mut()) {
            *o = u8::from(self.may_contain(k));
        }
    }
}

/// A filter loaded from a blob: answers membership, never inserts.
pub enum ResidentFilter {
    /// Kind 0.
    Bloom(BlockedBloom),
    /// Kind 1.
    Ribbon(Ribbon),
    /// Kind 2.
    Sharded(ShardedRibbon),
}

impl ResidentFilter {
    /// Parses and validates any kind of blob.
    pub fn load(blob: &[u8]) -> Result<Self, BlobError> {
        let (kind, body) = open(blob)?;
        match kind {
            KIND_BLOOM => BlockedBloom::from_body(body).map(ResidentFilter::Bloom),
            KIND_RIBBON => Ribbon::from_body(body).map(ResidentFilter::Ribbon),
            _ => ShardedRibbon::from_body(body).map(ResidentFilter::Sharded),
        }
    }

    /// The blob kind byte.
    pub fn kind(&self) -> u8 {
        match self {
            ResidentFilter::Bloom(_) => KIND_BLOOM,
            ResidentFilter::Ribbon(_) => KIND_RIBBON,
            ResidentFilter::Sharded(_) => KIND_SHARDED_RIBBON,
        }
    }
}

impl Membership for ResidentFilter {
    /// Whether `key` may be in the set (false is authoritative).
    #[inline]
    fn may_contain(&self, key: &UrlKey) -> bool {
        match self {
            ResidentFilter::Bloom(f) => f.may_contain(key),
            ResidentFilter::Ribbon(f) => f.may_contain(key),
            ResidentFilter::Sharded(f) => f.may_contain(key),
        }
    }

    /// One verdict byte (0 or 1) per key.
    fn may_contain_batch(&self, keys: &[UrlKey], out: &mut [u8]) {
        match self {
            ResidentFilter::Bloom(f) => f.may_contain_batch(keys, out),
            ResidentFilter::Ribbon(f) => f.may_contain_batch(keys, out),
            ResidentFilter::Sharded(f) => f.may_contain_batch(keys, out),
        }
    }

    /// Keys the filter was built over (or had added).
    fn len(&self) -> u64 {
        match self {
            ResidentFilter::Bloom(f) => f.len(),
            ResidentFilter::Ribbon(f) => f.len(),
            ResidentFilter::Sharded(f) => f.len(),
        }
    }

    /// Bits of filter payload (excluding headers).
    fn payload_bits(&self) -> u64 {
        match self {
            ResidentFilter::Bloom(f) => f.payload_bits(),
            ResidentFilter::Ribbon(f) => f.payload_bits(),
            ResidentFilter::Sharded(f) => f.payload_bits(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_round_trip_and_rejections() {
        let mut b = begin(KIND_RIBBON, 8);
        b.put_u64(0x0102_0304_0506_0708);
        seal(&mut b);
        let (kind, body) = open(&b).unwrap();
        assert_eq!(kind, KIND_RIBBON);
        assert_eq!(body, &0x0102_0304_0506_0708u64.to_le_bytes());
        for cut in 0..b.len() {
            let e = open(&b[..cut]).unwrap_err();
            assert!(e == BlobError::Truncated || e == BlobError::LengthMismatch, "cut {cut}: {e:?}");
        }
        for at in 0..b.len() {
            let mut bad = b.clone();
            bad[at] ^= 0x10;
            assert!(open(&bad).is_err(), "flip at {at} accepted");
        }
        let mut bad = b.clone();
        bad[5] = 9;
        assert_eq!(open(&bad).unwrap_err(), BlobError::UnknownKind);
    }

    #[test]
    fn fastrange_covers_the_range() {
        assert_eq!(fastrange32(0, 10), 0);
        assert_eq!(fastrange32(u64::from(u32::MAX), 10), 9);
        assert_eq!(fastrange32(1 << 31, 10), 5);
    }
}
