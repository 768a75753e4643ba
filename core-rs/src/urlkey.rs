//! URLKeys of canonical URLs with the HostKey memoized per origin, in one pass per batch.
//!
//! ## Problem
//! A URLKey (DESIGN §4) is `HostKey ‖ PathKey` with
//!
//! ```text
//! HostKey = xxh64(group(origin), host_seed)      group: src/url/host.ts (tldts for "registrable")
//! PathKey = xxh64(url, path_seed)                url: the whole canonical URL
//! ```
//!
//! The group of an origin needs the Public Suffix List, which lives in JavaScript, so the
//! HostKey of an origin is computed there once and then remembered. Remembering it in a JS
//! `Map` keyed by the origin string cost more than everything else the key step does: each
//! URL paid a `slice` of its origin, a string hash and a probe (measured on the url bench
//! stream, 1M links over 10k hosts: two thirds of `urlKeyBatch`'s CPU profile). This module
//! keeps that memo in wasm instead, next to the bytes the PathKey hash reads anyway: one
//! pass over a staged batch finds each URL's origin, looks it up, and hashes the URL.
//!
//! ## What an origin is here
//! The bytes before the first `/` after the scheme's `://`, for a URL that starts with
//! exactly `http://` or `https://` and has at least one byte of authority:
//! `scan_origin` mirrors `originEnd` in src/url/keys.ts, which decides the same thing on the
//! UTF-16 string (the first `/` is the same character in both encodings, since UTF-8 never
//! uses byte 0x2F inside a multi-byte sequence). A URL that fails this test, or whose origin
//! is not pure ASCII, is reported as a miss and the TypeScript side handles it exactly as it
//! always has (the ASCII rule keeps lone surrogates, which UTF-8 encoding merges, from ever
//! sharing an entry). Canonical URLs have ASCII origins (hosts are punycode).
//!
//! ## The table
//! Records back to back in one `Vec<u64>`: the HostKey, `id << 32 | len`, then the origin's
//! bytes as zero-padded little-endian words, so a hit reads one slot and one record. Slots
//! are open addressing with linear probing over a power-of-two array, load ≤ 3/4; a slot
//! holds `(tag << 32) | (record + 1)` where `tag` is the top 32 bits of the origin's hash
//! (`origin_hash`), so a probe reads a record only on a tag match. Ids count up in insertion
//! order; the TypeScript side uses them to index its array of group names. Entries are never
//! removed one by one: the owner clears the whole table to bound its size.
//!
//! ## Cost
//! Measured in Node 20 on the url bench stream (canonical URLs of 64 bytes on average, 10k
//! origins, batches of 4096, all origins held; a shared 2-core machine, so ±30 %): the
//! PathKey hash alone is 30–45 ns per URL, the whole batch 85–135 ns. The first version (one
//! URL at a time, byte loops, `memcmp`, xxh64 of the origin) measured 150–165; the word-at-a-
//! time scan that hashes while it searches, the two-miss record layout and the three passes
//! of [`OriginTable::key_batch`] each took part of the difference.

use crate::hash::{mix64, read_u64, xxh64};

/// Id written for a URL whose origin is not in the table.
pub const MISS: u32 = u32::MAX;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;
const HTTPS: u64 = u64::from_le_bytes(*b"https://");
const HTTP: u64 = u64::from_le_bytes(*b"http://\0");

/// Where the authority starts (7 or 8) when `url` starts with `http://` or `https://`: one
/// word compare, since the scheme is the URL's first word.
#[inline(always)]
fn authority_start(url: &[u8]) -> Option<usize> {
    if url.len() < 8 {
        // Too short for "https://"; "http://" + at least one more byte needs 8 too.
        return None;
    }
    let w = read_u64(url, 0);
    if w == HTTPS {
        Some(8)
    } else if w & 0x00FF_FFFF_FFFF_FFFF == HTTP {
        Some(7)
    } else {
        None
    }
}

/// Up to 8 bytes of `b` from `at` as a little-endian word, zero-padded past the end.
#[inline(always)]
fn word(b: &[u8], at: usize) -> u64 {
    if at + 8 <= b.len() {
        read_u64(b, at)
    } else if b.len() >= 8 {
        // The last 8 bytes, shifted so the bytes before `at` fall off the bottom.
        read_u64(b, b.len() - 8) >> (8 * (at + 8 - b.len()))
    } else {
        let mut w = 0u64;
        for (k, &x) in b[at..].iter().enumerate() {
            w |= u64::from(x) << (8 * k);
        }
        w
    }
}

/// One step of the origin hash (see [`origin_hash`]).
#[inline(always)]
fn fold(h: u64, w: u64) -> u64 {
    (h ^ w).wrapping_mul(0xFF51_AFD7_ED55_8CCD).rotate_left(31)
}

/// Finishes an origin hash: mixes in the origin's length (which tells `http` from `https`
/// when the authority words agree).
#[inline(always)]
fn finish(h: u64, len: usize) -> u64 {
    mix64(h ^ (len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// The table's hash of an origin whose authority starts at `start`: the authority's words
/// (zero-padded) folded with a multiply–rotate, then [`finish`]. Not a storage format (it is
/// only compared within one table), so it is chosen for speed, and shaped so that
/// [`scan_origin`] computes it while it looks for the path's `/`; equal hashes are confirmed
/// by comparing bytes.
#[inline(always)]
fn origin_hash(origin: &[u8], start: usize) -> u64 {
    let mut h = 0;
    let mut at = start;
    while at < origin.len() {
        h = fold(h, word(origin, at));
        at += 8;
    }
    finish(h, origin.len())
}

/// A URL's origin as the table sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    /// Index of the path's `/` (the origin's length).
    pub end: usize,
    /// Whether every byte of the origin is ASCII.
    pub ascii: bool,
    /// [`origin_hash`] of the origin.
    pub hash: u64,
}

/// The origin of `url` when it has the shape `http(s)://` + at least one byte + `/`: where
/// it ends, whether it is ASCII, and its table hash, in one pass a word at a time.
///
/// A byte equal to `/` is found with the zero-byte test on `x = w ⊕ '/'·ONES`:
/// `(x − ONES) & !x & HIGHS`, whose lowest set bit marks the first zero byte of `x` exactly
/// (higher bits may be false alarms, never lower ones). A typical origin is 3–4 steps.
#[inline]
pub fn scan_origin(url: &[u8]) -> Option<Origin> {
    let start = authority_start(url)?;
    let mut high = 0u64;
    let mut h = 0u64;
    let mut at = start;
    while at < url.len() {
        let w = word(url, at);
        let x = w ^ (ONES * u64::from(b'/'));
        let hit = x.wrapping_sub(ONES) & !x & HIGHS;
        if hit != 0 {
            let k = (hit.trailing_zeros() / 8) as usize;
            let end = at + k;
            if end == start {
                return None;
            }
            if k > 0 {
                let part = w & ((1u64 << (8 * k)) - 1);
                high |= part;
                h = fold(h, part);
            }
            return Some(Origin { end, ascii: high & HIGHS == 0, hash: finish(h, end) });
        }
        high |= w;
        h = fold(h, w);
        at += 8;
    }
    None
}

/// Words of a record before its origin bytes: the HostKey, then `id << 32 | len`.
const HEAD_WORDS: usize = 2;

/// Origin bytes → HostKey, with ids in insertion order. See the module documentation.
pub struct OriginTable {
    /// Records back to back, each `HEAD_WORDS` header words then the origin's bytes packed
    /// little-endian into zero-padded words.
    records: Vec<u64>,
    /// Record start (in words) of each id.
    starts: Vec<u32>,
    /// `(tag << 32) | (record start + 1)`, 0 = empty; a power-of-two count, load ≤ 3/4.
    slots: Vec<u64>,
    /// Per-batch scratch: each URL's origin hash and end (reused between calls).
    pending: Vec<(u64, u32)>,
}

impl Default for OriginTable {
    fn default() -> Self {
        Self::new()
    }
}

impl OriginTable {
    /// An empty table.
    pub fn new() -> Self {
        OriginTable { records: Vec::new(), starts: Vec::new(), slots: vec![0; 16], pending: Vec::new() }
    }

    /// Number of origins held.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Bytes of memory held (capacities, not lengths).
    pub fn memory_bytes(&self) -> usize {
        self.records.capacity() * 8 + self.starts.capacity() * 4 + self.slots.capacity() * 8 + self.pending.capacity() * 16
    }

    /// Forgets every origin; ids start again from 0. Keeps the slot array's size.
    pub fn clear(&mut self) {
        self.records.clear();
        self.starts.clear();
        for s in self.slots.iter_mut() {
            *s = 0;
        }
    }

    /// Whether the record at word `at` holds exactly `origin`.
    #[inline(always)]
    fn record_is(&self, at: usize, origin: &[u8]) -> bool {
        if self.records[at + 1] as u32 as usize != origin.len() {
            return false;
        }
        let words = &self.records[at + HEAD_WORDS..at + HEAD_WORDS + (origin.len() + 7) / 8];
        words.iter().enumerate().all(|(k, &w)| w == word(origin, 8 * k))
    }

    /// Probes from the slot of hash `h` for `origin`: the record start if held, or the empty
    /// slot where it would go.
    #[inline(always)]
    fn find(&self, origin: &[u8], h: u64) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let tag = h >> 32;
        let mut at = (h as usize) & mask;
        loop {
            let s = self.slots[at];
            if s == 0 {
                return Err(at);
            }
            if s >> 32 == tag {
                let rec = (s as u32 - 1) as usize;
                if self.record_is(rec, origin) {
                    return Ok(rec);
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// `(id, HostKey)` of the record at word `rec`.
    #[inline(always)]
    fn record(&self, rec: usize) -> (u32, u64) {
        ((self.records[rec + 1] >> 32) as u32, self.records[rec])
    }

    /// The id and HostKey of `origin`, if held.
    #[inline]
    pub fn get(&self, origin: &[u8]) -> Option<(u32, u64)> {
        let start = authority_start(origin)?;
        self.find(origin, origin_hash(origin, start)).ok().map(|rec| self.record(rec))
    }

    /// Remembers `origin` (`http(s)://` + ASCII authority, no `/`) with its HostKey and
    /// returns its id; an origin already held keeps its entry and returns that id. Returns
    /// `None`, storing nothing, for bytes that are not such an origin.
    pub fn insert(&mut self, origin: &[u8], host: u64) -> Option<u32> {
        let start = authority_start(origin)?;
        if origin.len() == start || origin[start..].iter().any(|&b| b == b'/' || b >= 0x80) {
            return None;
        }
        let words = HEAD_WORDS + (origin.len() + 7) / 8;
        if self.records.len() + words >= u32::MAX as usize || self.starts.len() >= (u32::MAX / 4) as usize {
            return None;
        }
        let h = origin_hash(origin, start);
        let at = match self.find(origin, h) {
            Ok(rec) => return Some(self.record(rec).0),
            Err(at) => at,
        };
        let id = self.starts.len() as u32;
        let rec = self.records.len();
        self.records.push(host);
        self.records.push((u64::from(id) << 32) | origin.len() as u64);
        let mut k = 0;
        while k < origin.len() {
            self.records.push(word(origin, k));
            k += 8;
        }
        self.starts.push(rec as u32);
        self.slots[at] = ((h >> 32) << 32) | (rec as u64 + 1);
        if self.starts.len() * 4 > self.slots.len() * 3 {
            self.grow();
        }
        Some(id)
    }

    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        let mut slots = vec![0u64; size];
        let mask = size - 1;
        for &rec in &self.starts {
            let rec = rec as usize;
            let len = self.records[rec + 1] as u32 as usize;
            let mut bytes = Vec::with_capacity(len + 8);
            for &w in &self.records[rec + HEAD_WORDS..rec + HEAD_WORDS + (len + 7) / 8] {
                bytes.extend_from_slice(&w.to_le_bytes());
            }
            let origin = &bytes[..len];
            let h = origin_hash(origin, authority_start(origin).unwrap_or(0));
            let mut at = (h as usize) & mask;
            while slots[at] != 0 {
                at = (at + 1) & mask;
            }
            slots[at] = ((h >> 32) << 32) | (rec as u64 + 1);
        }
        self.slots = slots;
    }

    /// The id and HostKey for the origin of `url`, or `None` when the URL has no memoizable
    /// origin or the origin is not held.
    #[inline]
    pub fn lookup_url(&self, url: &[u8]) -> Option<(u32, u64)> {
        match scan_origin(url) {
            Some(o) if o.ascii => self.find(&url[..o.end], o.hash).ok().map(|rec| self.record(rec)),
            _ => None,
        }
    }

    /// Keys one URL: returns `[HostKey, PathKey]` and the origin's id, or `[0, PathKey]` and
    /// [`MISS`] when the origin is not held.
    pub fn key_one(&self, url: &[u8], path_seed: u64) -> ([u64; 2], u32) {
        let path = xxh64(url, path_seed);
        match self.lookup_url(url) {
            Some((id, host)) => ([host, path], id),
            None => ([0, path], MISS),
        }
    }

    /// Keys `count` URLs packed in `data`, URL `i` spanning `data[offsets[i]..offsets[i+1]]`:
    /// `keys[2i]` = HostKey (0 on a miss), `keys[2i + 1]` = PathKey, `ids[i]` = the origin's
    /// id or [`MISS`] when `ids` is given. The indexes of the missed URLs are written in order
    /// to the front of `misses`; returns how many.
    ///
    /// Three passes, so that the table's cache misses overlap instead of queueing: with 10k
    /// origins the slots and records outgrow L2, and one URL at a time (parse, probe, compare,
    /// hash) measured about 150 ns per URL, nearly all of it waiting on memory; the passes
    /// below issue each URL's loads independently of the previous URL's results.
    ///
    /// Preconditions: `offsets.len() == count + 1`, offsets non-decreasing and within
    /// `data`, `keys.len() == 2·count`, `misses.len() >= count`, `ids` (if given) of `count`.
    /// Violations panic (abort in the wasm build) rather than read out of range.
    pub fn key_batch(&mut self, data: &[u8], offsets: &[u32], path_seed: u64, keys: &mut [u64], mut ids: Option<&mut [u32]>, misses: &mut [u32]) -> usize {
        let count = offsets.len() - 1;
        assert_eq!(keys.len(), 2 * count, "key_batch: two u64 per URL");
        assert!(misses.len() >= count, "key_batch: one miss slot per URL");
        if let Some(ids) = ids.as_deref() {
            assert_eq!(ids.len(), count, "key_batch: one id per URL");
        }
        let url = |i: usize| &data[offsets[i] as usize..offsets[i + 1] as usize];
        // Pass 1: each URL's origin and its hash; touch its first slot (the load is what
        // matters: it brings the slot's cache line in while later URLs are parsed).
        let mut pending = std::mem::take(&mut self.pending);
        pending.clear();
        let mask = self.slots.len() - 1;
        let mut touched = 0u64;
        for i in 0..count {
            let u = url(i);
            let p = match scan_origin(u) {
                Some(o) if o.ascii => {
                    touched ^= self.slots[(o.hash as usize) & mask];
                    (o.hash, o.end as u32)
                }
                _ => (0, 0),
            };
            pending.push(p);
        }
        // Pass 2: resolve each origin (the probe's slot is now cached; its record is the one
        // remaining miss, and consecutive URLs' records load in parallel).
        let mut missed = 0;
        for (i, &(h, end)) in pending.iter().enumerate() {
            let hit = if end == 0 { None } else { self.find(&url(i)[..end as usize], h).ok() };
            let id = match hit {
                Some(rec) => {
                    let (id, host) = self.record(rec);
                    keys[2 * i] = host;
                    id
                }
                None => {
                    keys[2 * i] = 0;
                    misses[missed] = i as u32;
                    missed += 1;
                    MISS
                }
            };
            if let Some(ids) = ids.as_deref_mut() {
                ids[i] = id;
            }
        }
        // Pass 3: the PathKeys, a sequential read of the staged bytes.
        for i in 0..count {
            keys[2 * i + 1] = xxh64(url(i), path_seed);
        }
        // Keeps pass 1's loads from being optimized away (the value itself is meaningless).
        if touched == 1 {
            self.pending = Vec::new();
        } else {
            self.pending = pending;
        }
        missed
    }

    /// Inserts `count` origins packed like [`OriginTable::key_batch`]'s URLs with their
    /// HostKeys `hosts[i]`, writing each one's id (or [`MISS`] when it is not memoizable) to
    /// `ids[i]`.
    pub fn insert_batch(&mut self, data: &[u8], offsets: &[u32], hosts: &[u64], ids: &mut [u32]) {
        let count = offsets.len() - 1;
        assert!(hosts.len() == count && ids.len() == count, "insert_batch: one host and one id per origin");
        for i in 0..count {
            let origin = &data[offsets[i] as usize..offsets[i + 1] as usize];
            ids[i] = self.insert(origin, hosts[i]).unwrap_or(MISS);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;

    #[test]
    fn origins_parse_like_the_typescript_side() {
        let end = |u: &[u8]| scan_origin(u).map(|o| (o.end, o.ascii));
        assert_eq!(end(b"https://a.com/x"), Some((13, true)));
        assert_eq!(end(b"http://a.com/"), Some((12, true)));
        assert_eq!(end(b"http://[::1]:80/"), Some((15, true)));
        assert_eq!(end("http://\u{e9}.fr/".as_bytes()), Some((12, false)));
        assert_eq!(end(b"http://a/"), Some((8, true)));
        for bad in [&b"https://a.com"[..], b"https:///x", b"ftp://a.com/", b"HTTP://a.com/", b"http:/a.com/", b"", b"http://"] {
            assert_eq!(scan_origin(bad), None, "{:?}", std::str::from_utf8(bad));
        }
    }

    /// The origin's end and ASCII-ness found byte by byte, the oracle for the word-at-a-time scan.
    fn origin_end_bytewise(url: &[u8]) -> Option<(usize, bool)> {
        let start = authority_start(url)?;
        let slash = start + url[start..].iter().position(|&b| b == b'/')?;
        if slash == start {
            return None;
        }
        Some((slash, url[..slash].iter().all(|&b| b < 0x80)))
    }

    #[test]
    fn word_reads_match_bytewise() {
        let mut rng = Rng(0x6f72);
        let alphabet: &[u8] = b"/a.:[]9\x80\xc3\xa9\x00\x01\xff";
        for _ in 0..20_000 {
            let mut u = if rng.below(2) == 0 { b"https://".to_vec() } else { b"http://".to_vec() };
            for _ in 0..rng.below(40) {
                u.push(alphabet[rng.below(alphabet.len() as u64) as usize]);
            }
            let scanned = scan_origin(&u);
            assert_eq!(scanned.map(|o| (o.end, o.ascii)), origin_end_bytewise(&u), "{:?}", u);
            if let Some(o) = scanned {
                let start = authority_start(&u).unwrap();
                assert_eq!(o.hash, origin_hash(&u[..o.end], start), "{:?}", u);
            }
            for at in 0..u.len() {
                let expect = u[at..].iter().take(8).enumerate().fold(0u64, |w, (k, &b)| w | u64::from(b) << (8 * k));
                assert_eq!(word(&u, at), expect);
                assert_eq!(word(&u[at..], 0), expect, "short slices take the byte loop");
            }
        }
    }

    #[test]
    fn insert_get_and_ids_in_order() {
        let mut t = OriginTable::new();
        assert_eq!(t.insert(b"https://a.com", 11), Some(0));
        assert_eq!(t.insert(b"http://a.com", 12), Some(1));
        assert_eq!(t.insert(b"https://a.com", 99), Some(0), "a held origin keeps its entry");
        assert_eq!(t.get(b"https://a.com"), Some((0, 11)));
        assert_eq!(t.get(b"http://a.com"), Some((1, 12)));
        assert_eq!(t.get(b"https://b.com"), None);
        for bad in [&b"https://a.com/"[..], b"https://", b"ftp://x", "https://\u{e9}.fr".as_bytes()] {
            assert_eq!(t.insert(bad, 1), None);
        }
        assert_eq!(t.len(), 2);
        t.clear();
        assert!(t.is_empty());
        assert_eq!(t.get(b"https://a.com"), None);
        assert_eq!(t.insert(b"https://b.com", 5), Some(0));
    }

    #[test]
    fn many_origins_survive_growth() {
        let mut t = OriginTable::new();
        let origins: Vec<String> = (0..5000).map(|i| format!("https://h{}.example/", i)).collect();
        for (i, o) in origins.iter().enumerate() {
            let o = &o.as_bytes()[..o.len() - 1];
            assert_eq!(t.insert(o, i as u64 * 7), Some(i as u32));
        }
        for (i, o) in origins.iter().enumerate() {
            assert_eq!(t.lookup_url(o.as_bytes()), Some((i as u32, i as u64 * 7)));
        }
        assert!(t.slots.len() * 3 >= 4 * t.len());
        t.clear();
        assert_eq!(t.lookup_url(origins[0].as_bytes()), None);
    }

    #[test]
    fn batch_matches_one_by_one() {
        let mut rng = Rng(77);
        let mut t = OriginTable::new();
        let hosts = ["https://a.com", "http://a.com", "https://b.org:8443", "http://[::1]"];
        for (i, h) in hosts.iter().enumerate().take(3) {
            t.insert(h.as_bytes(), 100 + i as u64);
        }
        let mut data = Vec::new();
        let mut offsets = vec![0u32];
        let mut urls = Vec::new();
        for i in 0..300 {
            let u = match rng.below(5) {
                4 => format!("nope{}", i),
                k => format!("{}/p/{}", hosts[k as usize], rng.next()),
            };
            data.extend_from_slice(u.as_bytes());
            offsets.push(data.len() as u32);
            urls.push(u);
        }
        let n = urls.len();
        let mut keys = vec![0u64; 2 * n];
        let mut ids = vec![0u32; n];
        let mut misses = vec![0u32; n];
        let missed = t.key_batch(&data, &offsets, 9, &mut keys, Some(&mut ids), &mut misses);
        let mut expect_misses = Vec::new();
        for (i, u) in urls.iter().enumerate() {
            let (k, id) = t.key_one(u.as_bytes(), 9);
            assert_eq!([keys[2 * i], keys[2 * i + 1]], k);
            assert_eq!(ids[i], id);
            assert_eq!(k[1], xxh64(u.as_bytes(), 9));
            if id == MISS {
                expect_misses.push(i as u32);
            } else {
                assert_eq!(k[0], 100 + u64::from(id));
            }
        }
        assert_eq!(&misses[..missed], &expect_misses[..]);
        assert!(missed > 0 && missed < n);
    }
}
