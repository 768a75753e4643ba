//! The seen-set's batch step (DESIGN §6): a one-sided blocked Bloom filter in front of the
//! DRUM exact key set, driven in one call per batch.
//!
//! ## Problem
//! Classify a batch of discovered URLKeys as new or already seen, inserting the new ones,
//! with no false negatives and as few cache misses per key as possible. The exact set alone
//! answers correctly but pays for it: at intake batch sizes (thousands of keys into
//! millions) a bucket's batch keys land far apart in its sorted main run, so each lookup is a
//! gallop of about `2·log2(|M|/c)` probes, nearly all cache misses (measured natively: 1.8 µs
//! per key for 1 M keys in batches of 4096, two thirds of it in those probes). A Bloom query
//! is one cache line.
//!
//! ## Protocol
//! Invariant **F ⊇ S**: every key of the exact set `S` has been added to the filter `F`.
//!
//! ```text
//! merge(keys):
//!   1. maybe_i   = F.may_contain(k_i)                   one cache miss per key
//!   2. verdict_i = S.merge_hinted(keys, maybe)           maybe_i = 0 skips the exact lookup
//!   3. F.add(k_i) for every i with verdict_i = 1         restores F ⊇ S
//!   (steps 1–2 become a plain S.merge when the batch is dense in S: see HINT_MIN_RATIO)
//! contains(keys):  maybe_i = F.may_contain(k_i); exact lookup only where maybe_i = 1
//! fill(F, S):      F.add(k) for every k in S             growth rebuild and recovery
//! ```
//!
//! Step 2 is sound because of the invariant: `maybe_i = 0` means `k_i ∉ F ⊇ S`, exactly the
//! promise `DrumSet::merge_hinted` asks for. A key repeated inside the batch gets the same
//! `maybe` at each occurrence (the filter is queried before anything is inserted) and the
//! DRUM sort keeps only its first occurrence new. A false positive (`maybe_i = 1`, key absent)
//! costs one ordinary exact lookup and is then inserted: never a dropped URL.
//!
//! ## Cost
//! With a fraction `r` of rediscoveries and filter false-positive rate `ε`, the exact lookups
//! fall from every key to `r + (1 − r)·ε` of them (31 % for a crawl's 30 % rediscoveries at
//! ε = 1 %); the insert itself (side run, then a sequential fold into the main run) is paid
//! for every new key either way. Measured numbers: see `HINT_MIN_RATIO` and
//! `bench/suites/seenset.bench.mjs`.

use crate::bloom::BlockedBloom;
use crate::drum::{key_of, DrumSet, Key};
use crate::filter::{Membership, UrlKey};

/// The filter query is skipped when the set holds fewer than this many keys per batch key.
/// Then a bucket's batch keys fall close together in its main run, each gallop stays within
/// a few cache lines, and the query costs more than the lookups it saves. Measured (wasm, CPU
/// ns per key, bench/suites/seenset.bench.mjs, 1M-key stream): batches of 65 536 (ratio ≈ 15)
/// hinted 433 vs unhinted 407; batches of 4096 (ratio ≈ 240) hinted 1041 vs 1257; 10M keys in
/// batches of 4096 (ratio ≈ 2400) hinted 2437 vs 3134.
const HINT_MIN_RATIO: usize = 32;

fn to_drum_keys(keys: &[UrlKey]) -> Vec<Key> {
    keys.iter().map(|k| key_of(k[0], k[1])).collect()
}

/// Classifies and inserts `keys` through the filter; see the module documentation.
/// `verdicts[i]` becomes 1 when key `i` was new (first occurrence in the batch of a key not in
/// the set), else 0. Returns the number of new keys. Both structures must satisfy F ⊇ S on
/// entry (an empty pair does); they do again on return.
pub fn merge(set: &mut DrumSet, filter: &mut BlockedBloom, keys: &[UrlKey], verdicts: &mut [u8]) -> usize {
    assert_eq!(keys.len(), verdicts.len(), "seen::merge: one verdict slot per key");
    let n = keys.len();
    if n == 0 {
        return 0;
    }
    let drum_keys = to_drum_keys(keys);
    let added = if set.len() >= HINT_MIN_RATIO * n {
        let mut maybe = vec![0u8; n];
        filter.may_contain_batch(keys, &mut maybe);
        set.merge_hinted(&drum_keys, None, Some(&maybe), Some(verdicts))
    } else {
        set.merge(&drum_keys, None, Some(verdicts))
    };
    let fresh: Vec<UrlKey> = keys.iter().zip(verdicts.iter()).filter(|(_, &v)| v == 1).map(|(k, _)| *k).collect();
    debug_assert_eq!(fresh.len(), added);
    filter.add_batch(&fresh);
    added
}

/// Exact membership through the filter: `out[i]` = 1 when key `i` is in the set. Keys the
/// filter rules out are answered without touching the exact set; the rest go to the exact
/// set as one lookup batch (sorted and galloped when it is large).
pub fn contains(set: &DrumSet, filter: &BlockedBloom, keys: &[UrlKey], out: &mut [u8]) {
    assert_eq!(keys.len(), out.len(), "seen::contains: one verdict slot per key");
    filter.may_contain_batch(keys, out);
    let mut at: Vec<usize> = Vec::new();
    let mut maybe: Vec<Key> = Vec::new();
    for (i, (k, o)) in keys.iter().zip(out.iter()).enumerate() {
        if *o != 0 {
            at.push(i);
            maybe.push(key_of(k[0], k[1]));
        }
    }
    set.lookup_batch(&maybe, |j, hit| out[at[j]] = u8::from(hit.is_some()));
}

/// Adds every key of `set` to `filter`, establishing F ⊇ S for a fresh filter (the growth
/// rebuild and the recovery path). Keys are added in chunks so a prefetching `add_batch`
/// can overlap their cache misses.
pub fn fill(set: &DrumSet, filter: &mut BlockedBloom) {
    const CHUNK: usize = 4096;
    let mut buf: Vec<UrlKey> = Vec::with_capacity(CHUNK);
    set.for_each_key(|k| {
        buf.push([(k >> 64) as u64, k as u64]);
        if buf.len() == CHUNK {
            filter.add_batch(&buf);
            buf.clear();
        }
    });
    filter.add_batch(&buf);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;
    use std::collections::HashSet;

    fn key(r: &mut Rng) -> UrlKey {
        // 50 hosts × 400 paths: batches repeat keys and revisit earlier ones.
        [crate::hash::mix64(r.below(50)), r.below(400)]
    }

    #[test]
    fn merge_is_exact_and_keeps_the_filter_a_superset() {
        let mut r = Rng(5);
        let mut set = DrumSet::new(4);
        // A small filter overfills, so false positives exercise the confirm path.
        let mut filter = BlockedBloom::new(500, 0.05).unwrap();
        let mut model: HashSet<UrlKey> = HashSet::new();
        for round in 0..400 {
            let m = if round % 50 == 0 { 1500 } else { r.below(50) as usize };
            let keys: Vec<UrlKey> = (0..m).map(|_| key(&mut r)).collect();
            let mut v = vec![9u8; m];
            let added = merge(&mut set, &mut filter, &keys, &mut v);
            let mut expect = 0;
            for (i, k) in keys.iter().enumerate() {
                let new = model.insert(*k);
                expect += usize::from(new);
                assert_eq!(v[i], u8::from(new), "round {} key {}", round, i);
            }
            assert_eq!(added, expect);
            assert_eq!(set.len(), model.len());
            let probes: Vec<UrlKey> = (0..40).map(|_| key(&mut r)).collect();
            let mut out = vec![9u8; probes.len()];
            contains(&set, &filter, &probes, &mut out);
            for (k, o) in probes.iter().zip(&out) {
                assert_eq!(*o, u8::from(model.contains(k)));
            }
        }
        assert!(model.iter().all(|k| filter.may_contain(k)));
    }

    #[test]
    fn fill_covers_every_key() {
        let mut r = Rng(6);
        let mut set = DrumSet::new(3);
        let keys: Vec<Key> = (0..20_000).map(|_| key_of(r.next(), r.next())).collect();
        set.merge(&keys, None, None);
        let mut filter = BlockedBloom::new(20_000, 0.01).unwrap();
        fill(&set, &mut filter);
        assert_eq!(filter.len(), 20_000);
        assert!(keys.iter().all(|&k| filter.may_contain(&[(k >> 64) as u64, k as u64])));
    }
}
