//! The seen-set's batch step (DESIGN §6): a one-sided blocked Bloom filter kept beside the
//! exact key set, driven in one call per batch.
//!
//! ## Problem
//! Classify a batch of discovered URLKeys as new or already seen, inserting the new ones,
//! with no false negatives, at a per-key cost that does not grow with the set.
//!
//! ## Protocol
//! Invariant **F ⊇ S**: every key of the exact set `S` has been added to the filter `F`.
//!
//! ```text
//! merge(keys):
//!   1. verdict_i = S.merge(keys)                  one table probe per key
//!   2. F.add(k_i) for every i with verdict_i = 1  restores F ⊇ S
//! contains(keys):  S.lookup(k_i)                   one table probe per key
//! fill(F, S):      F.add(k) for every k in S       growth rebuild and recovery
//! ```
//!
//! The filter is no longer queried on the way in. It was, while the exact set was DRUM's
//! sorted runs: there a lookup was a gallop of `≈ 2·log2(|M|/c)` cache misses and a filter
//! miss (one cache line) let a new key skip it. The exact set is now an open-addressed table
//! ([`crate::drum`]) where a lookup is one control-line miss, the same as the filter query it
//! would save, and inserting a new key needs that probe anyway (to find its slot, and to
//! catch a repeat inside the batch, which the filter cannot tell from a new key). The filter
//! stays for what only it gives: the compact, marshalable "maybe seen" answer that
//! checkpoints and cold partitions carry.
//!
//! ## Cost
//! Per key: one exact-set probe (two cache misses for a new key: its control line and its
//! slot), plus one filter block for a new key. None of it depends on the set's size; see
//! `bench/suites/seenset.bench.mjs` for the figures at 1 M and 10 M keys.

use crate::bloom::BlockedBloom;
use crate::drum::{key_of, DrumSet, Key};
use crate::filter::UrlKey;

fn to_drum_keys(keys: &[UrlKey]) -> Vec<Key> {
    keys.iter().map(|k| key_of(k[0], k[1])).collect()
}

/// Classifies and inserts `keys`; see the module documentation. `verdicts[i]` becomes 1 when
/// key `i` was new (first occurrence in the batch of a key not in the set), else 0. Returns
/// the number of new keys. Both structures must satisfy F ⊇ S on entry (an empty pair does);
/// they do again on return.
pub fn merge(set: &mut DrumSet, filter: &mut BlockedBloom, keys: &[UrlKey], verdicts: &mut [u8]) -> usize {
    assert_eq!(keys.len(), verdicts.len(), "seen::merge: one verdict slot per key");
    if keys.is_empty() {
        return 0;
    }
    let added = set.merge(&to_drum_keys(keys), None, Some(verdicts));
    let fresh: Vec<UrlKey> = keys.iter().zip(verdicts.iter()).filter(|(_, &v)| v == 1).map(|(k, _)| *k).collect();
    debug_assert_eq!(fresh.len(), added);
    filter.add_batch(&fresh);
    added
}

/// Exact membership: `out[i]` = 1 when key `i` is in the set. The filter is not consulted: a
/// table probe costs what a filter query would, and answers exactly.
pub fn contains(set: &DrumSet, keys: &[UrlKey], out: &mut [u8]) {
    assert_eq!(keys.len(), out.len(), "seen::contains: one verdict slot per key");
    set.lookup_batch(&to_drum_keys(keys), |i, hit| out[i] = u8::from(hit.is_some()));
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
    use crate::filter::Membership;
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
            contains(&set, &probes, &mut out);
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
