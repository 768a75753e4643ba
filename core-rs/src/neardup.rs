//! Near-duplicate index over 64-bit simhashes: "is any stored page within Hamming distance 3
//! of this one?", answered with exact recall.
//!
//! ## Problem
//! Given a growing set of `n` simhashes (about a million per partition) and a query `q`, find
//! the stored `s` with `popcount(s ⊕ q) ≤ k`, `k = 3`. Brute force is `n` XOR-popcounts per
//! query; a hash lookup only finds `k = 0`; enumerating every `q'` within distance 3 means
//! `Σ_{d≤3} C(64, d) = 43 745` probes per query.
//!
//! ## Permuted tables (Manku, Jain & Das Sarma, "Detecting near-duplicates for web
//! crawling", WWW 2007)
//! Cut the 64 bits into `B = 4` blocks of 16. If `s` and `q` differ in at most 3 bits, those
//! bits fall in at most 3 blocks, so by pigeonhole **at least one block is identical**. Keep
//! `B` copies of the set, copy `j` permuted by `πⱼ(x) = rotl(x, 16·j)` so block `j` (bits
//! `63−16j … 48−16j`) leads, and sort each copy. To query, for each `j` take the run of copy
//! `j` whose top 16 bits equal those of `πⱼ(q)` and test every member with
//! `popcount(πⱼ(s) ⊕ πⱼ(q)) ≤ k` (a rotation preserves Hamming distance). Every true
//! match shares at least one block, so it lies in at least one probed run: recall is exact
//! for any `k ≤ B − 1 = 3`, and nothing farther than `k` is reported because every candidate
//! is verified. For random simhashes a run holds `n / 2¹⁶` entries on average — 15 at
//! `n = 10⁶` — so a query reads about `4 · 15` candidates instead of a million.
//!
//! A directory over the top `d = min(16, ⌈log₂ n⌉)` bits of each copy turns the run lookup into
//! two array reads (plus a short binary search when `d < 16`).
//!
//! ## Lazy insertion
//! New entries wait in a pending list that queries scan by brute force. When it passes
//! `max(1024, 4·⌊√n⌋)` entries, a query first folds it into the four copies (sort the pending
//! entries per copy, one backward merge each, rebuild the directories): `O(n)` per fold,
//! `O(√n)` amortized per insert, and at most a few thousand brute-force tests per query.
//!
//! ## Identity
//! The index stores distinct simhashes: adding a simhash already present (pending or
//! indexed) is a no-op that keeps the first key, so `len` counts distinct simhashes and a
//! thousand copies of one page cost one entry. Entries are numbered in insertion order;
//! `find` returns the key of the lowest-numbered match (the earliest page added), so the
//! answer does not depend on table layout.
//!
//! ## Memory
//! Per entry: the 16-byte key, and in each of the 4 copies the permuted simhash (8 bytes) and
//! the entry number (4 bytes): 64 bytes, plus directories of at most 4 · 256 KiB.

use crate::drum::{key_to_lanes, Key};

/// Number of 16-bit blocks, and so of permuted copies.
pub const BLOCKS: usize = 4;
/// The largest distance answered with exact recall (`BLOCKS − 1`).
pub const MAX_DISTANCE: u32 = (BLOCKS - 1) as u32;

#[inline(always)]
fn permute(x: u64, j: usize) -> u64 {
    x.rotate_left(16 * j as u32)
}

/// One permuted, sorted copy of the indexed entries.
#[derive(Default)]
struct Table {
    /// `πⱼ(sim)` ascending.
    vals: Vec<u64>,
    /// Entry number of each value.
    ids: Vec<u32>,
    /// `dir[t]` = first index whose value's top `dir_bits` bits are `≥ t` (`2^dir_bits + 1` entries).
    dir: Vec<u32>,
    dir_bits: u32,
}

impl Table {
    fn rebuild_dir(&mut self, bits: u32) {
        self.dir_bits = bits;
        let slots = 1usize << bits;
        self.dir.clear();
        self.dir.resize(slots + 1, 0);
        // Count per top-bits value, then prefix-sum into starting offsets.
        for &v in self.vals.iter() {
            self.dir[(v >> (64 - bits)) as usize + 1] += 1;
        }
        for t in 0..slots {
            self.dir[t + 1] += self.dir[t];
        }
    }

    /// Index range of the values whose top 16 bits equal `top`.
    #[inline]
    fn block_range(&self, top: u64) -> (usize, usize) {
        if self.dir.is_empty() {
            return (0, 0);
        }
        let t = (top >> (16 - self.dir_bits)) as usize;
        let (lo, hi) = (self.dir[t] as usize, self.dir[t + 1] as usize);
        if self.dir_bits == 16 {
            return (lo, hi);
        }
        let run = &self.vals[lo..hi];
        let a = run.partition_point(|v| (v >> 48) < top);
        let b = a + run[a..].partition_point(|v| (v >> 48) <= top);
        (lo + a, lo + b)
    }

    /// Merges `(vals, ids)` sorted by value into this table in one backward pass.
    fn merge_from(&mut self, add: &[(u64, u32)]) {
        let n = self.vals.len();
        let m = add.len();
        // Grow by max(m, n/8) so repeated folds reallocate rarely with at most 12.5 % slack.
        if n + m > self.vals.capacity() {
            let grow = m.max(n / 8);
            self.vals.reserve_exact(grow);
            self.ids.reserve_exact(grow);
        }
        self.vals.resize(n + m, 0);
        self.ids.resize(n + m, 0);
        let (mut i, mut j, mut w) = (n, m, n + m);
        while j > 0 {
            w -= 1;
            if i > 0 && self.vals[i - 1] > add[j - 1].0 {
                i -= 1;
                self.vals[w] = self.vals[i];
                self.ids[w] = self.ids[i];
            } else {
                j -= 1;
                self.vals[w] = add[j].0;
                self.ids[w] = add[j].1;
            }
        }
    }

    fn bytes(&self) -> usize {
        self.vals.capacity() * 8 + (self.ids.capacity() + self.dir.capacity()) * 4
    }
}

/// An open-addressing set of pending entry numbers keyed by their simhash, so a pending
/// duplicate is found in O(1). Slot value 0 = empty, else pending index + 1.
#[derive(Default)]
struct PendingSet {
    slots: Vec<u32>,
}

impl PendingSet {
    #[inline]
    fn home(&self, sim: u64) -> usize {
        (crate::hash::mix64(sim) as usize) & (self.slots.len() - 1)
    }

    /// Finds `sim` among `sims`, or inserts index `idx` for it; returns whether it was new.
    fn insert(&mut self, sims: &[u64], sim: u64, idx: usize) -> bool {
        if (idx + 1) * 2 > self.slots.len() {
            self.slots = vec![0; (self.slots.len() * 2).max(64)];
            for (k, &s) in sims[..idx].iter().enumerate() {
                let mask = self.slots.len() - 1;
                let mut p = self.home(s);
                while self.slots[p] != 0 {
                    p = (p + 1) & mask;
                }
                self.slots[p] = k as u32 + 1;
            }
        }
        let mask = self.slots.len() - 1;
        let mut p = self.home(sim);
        while self.slots[p] != 0 {
            if sims[self.slots[p] as usize - 1] == sim {
                return false;
            }
            p = (p + 1) & mask;
        }
        self.slots[p] = idx as u32 + 1;
        true
    }

    fn clear(&mut self) {
        self.slots = Vec::new();
    }
}

/// The near-duplicate index (see the module documentation).
#[derive(Default)]
pub struct NearDup {
    /// Key of each entry, by entry number.
    keys: Vec<Key>,
    /// The four permuted copies of entries `0..indexed`.
    tables: [Table; BLOCKS],
    indexed: usize,
    /// Simhashes of entries `indexed..`, in entry order.
    pending: Vec<u64>,
    pending_set: PendingSet,
    /// Keys found by the last `find_all`, as u32 lanes (4 per key, HostKey first).
    out: Vec<u32>,
}

impl NearDup {
    /// An empty index.
    pub fn new() -> Self {
        NearDup::default()
    }

    /// Number of distinct simhashes stored.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Bytes held (keys, copies, directories, pending list).
    pub fn memory_bytes(&self) -> usize {
        self.keys.capacity() * 16
            + self.tables.iter().map(Table::bytes).sum::<usize>()
            + self.pending.capacity() * 8
            + self.pending_set.slots.capacity() * 4
            + self.out.capacity() * 4
    }

    fn indexed_contains(&self, sim: u64) -> bool {
        let t = &self.tables[0];
        let (lo, hi) = t.block_range(sim >> 48);
        t.vals[lo..hi].binary_search(&sim).is_ok()
    }

    /// Stores `sim` with `key` unless `sim` is already stored; returns whether it was added.
    pub fn add(&mut self, sim: u64, key: Key) -> bool {
        if self.indexed_contains(sim) {
            return false;
        }
        let idx = self.pending.len();
        self.pending.push(sim);
        if !self.pending_set.insert(&self.pending, sim, idx) {
            self.pending.pop();
            return false;
        }
        self.keys.push(key);
        true
    }

    fn pending_cap(&self) -> usize {
        let n = self.indexed;
        let mut r = (n as f64).sqrt() as usize;
        while r * r > n {
            r -= 1;
        }
        (4 * r).max(1024)
    }

    /// Folds the pending entries into the four sorted copies.
    pub fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let base = self.indexed as u32;
        let mut add: Vec<(u64, u32)> = Vec::with_capacity(self.pending.len());
        let total = self.indexed + self.pending.len();
        // Directory resolution: about one entry per slot, 16 bits at most.
        let bits = (usize::BITS - total.leading_zeros()).clamp(1, 16);
        for (j, table) in self.tables.iter_mut().enumerate() {
            add.clear();
            add.extend(self.pending.iter().enumerate().map(|(k, &s)| (permute(s, j), base + k as u32)));
            add.sort_unstable();
            table.merge_from(&add);
            table.rebuild_dir(bits);
            debug_assert!(table.vals.windows(2).all(|w| w[0] < w[1]));
        }
        self.indexed = total;
        // Drop a large pending buffer rather than keep its capacity resident.
        if self.pending.capacity() > 4096 {
            self.pending = Vec::new();
        } else {
            self.pending.clear();
        }
        self.pending_set.clear();
    }

    /// Calls `hit(entry)` for every stored entry within distance `k` of `sim` (an entry can be
    /// reported once per copy it matches in). Flushes first when the pending list is long.
    fn scan(&mut self, sim: u64, k: u32, mut hit: impl FnMut(u32)) {
        assert!(k <= MAX_DISTANCE, "NearDup: distance {} above {}", k, MAX_DISTANCE);
        if self.pending.len() > self.pending_cap() {
            self.flush();
        }
        if self.indexed > 0 {
            for (j, table) in self.tables.iter().enumerate() {
                let q = permute(sim, j);
                let (lo, hi) = table.block_range(q >> 48);
                for (v, &id) in table.vals[lo..hi].iter().zip(&table.ids[lo..hi]) {
                    if (v ^ q).count_ones() <= k {
                        hit(id);
                    }
                }
            }
        }
        let base = self.indexed as u32;
        for (p, &s) in self.pending.iter().enumerate() {
            if (s ^ sim).count_ones() <= k {
                hit(base + p as u32);
            }
        }
    }

    /// The key of the earliest-added entry within distance `k ≤ 3` of `sim`, if any.
    pub fn find(&mut self, sim: u64, k: u32) -> Option<Key> {
        let mut best = u32::MAX;
        self.scan(sim, k, |id| best = best.min(id));
        if best == u32::MAX {
            None
        } else {
            Some(self.keys[best as usize])
        }
    }

    /// Keys of every entry within distance `k ≤ 3` of `sim`, in insertion order, as u32 lanes
    /// (4 per key: HostKey low, high, PathKey low, high).
    pub fn find_all(&mut self, sim: u64, k: u32) -> &[u32] {
        let mut ids: Vec<u32> = Vec::new();
        self.scan(sim, k, |id| ids.push(id));
        ids.sort_unstable();
        ids.dedup();
        self.out.clear();
        self.out.resize(ids.len() * 4, 0);
        for (i, &id) in ids.iter().enumerate() {
            key_to_lanes(self.keys[id as usize], &mut self.out, i);
        }
        &self.out
    }

    /// The lanes the last `find_all` returned.
    pub fn last_out(&self) -> &[u32] {
        &self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drum::{key_from_lanes, key_of};
    use crate::testutil::Rng;

    fn flip(r: &mut Rng, s: u64, d: u32) -> u64 {
        let mut x = s;
        let mut done = 0;
        while done < d {
            let b = 1u64 << r.below(64);
            if (x ^ s) & b == 0 {
                x ^= b;
                done += 1;
            }
        }
        x
    }

    #[test]
    fn matches_brute_force_with_planted_pairs() {
        let mut r = Rng(11);
        let mut idx = NearDup::new();
        let mut all: Vec<u64> = Vec::new();
        // Bases, then relatives at distances 0..=5 from random earlier entries.
        for round in 0..40 {
            for _ in 0..200 {
                let s = if all.is_empty() || r.below(2) == 0 {
                    r.next()
                } else {
                    let base = all[r.below(all.len() as u64) as usize];
                    let d = r.below(6) as u32;
                    flip(&mut r, base, d)
                };
                if idx.add(s, key_of(s, round)) {
                    all.push(s);
                } else {
                    assert!(all.contains(&s));
                }
            }
            assert_eq!(idx.len(), all.len());
            for _ in 0..100 {
                let base = all[r.below(all.len() as u64) as usize];
                let d = r.below(6) as u32;
                let q = flip(&mut r, base, d);
                for k in 0..=3 {
                    let want: Vec<Key> = all.iter().filter(|&&s| (s ^ q).count_ones() <= k).map(|&s| idx.keys[all.iter().position(|&x| x == s).unwrap()]).collect();
                    let lanes = idx.find_all(q, k);
                    let got: Vec<Key> = (0..lanes.len() / 4).map(|i| key_from_lanes(lanes, i)).collect();
                    assert_eq!(got, want, "round {} k {}", round, k);
                    assert_eq!(idx.find(q, k), want.first().copied());
                }
            }
        }
        assert!(idx.indexed > 0 && idx.indexed < idx.len() + 1);
    }

    #[test]
    fn duplicates_keep_the_first_key() {
        let mut idx = NearDup::new();
        assert!(idx.add(42, key_of(1, 1)));
        assert!(!idx.add(42, key_of(2, 2)));
        idx.flush();
        assert!(!idx.add(42, key_of(3, 3)));
        assert_eq!(idx.len(), 1);
        assert_eq!(idx.find(42 ^ 0b111, 3), Some(key_of(1, 1)));
        assert_eq!(idx.find(42 ^ 0b1111, 3), None);
    }

    #[test]
    fn directory_resolutions_agree() {
        // Clustered top bits stress the sub-16-bit directory's binary search.
        let mut r = Rng(5);
        let mut idx = NearDup::new();
        let sims: Vec<u64> = (0..3000).map(|i| (i % 7) << 48 | (r.next() & 0xFFFF_FFFF_FFFF)).collect();
        for (i, &s) in sims.iter().enumerate() {
            idx.add(s, key_of(0, i as u64));
        }
        idx.flush();
        for &s in sims.iter().step_by(37) {
            assert_eq!(idx.find(s, 0).map(|k| sims[k as u64 as usize]), Some(s));
        }
    }
}
