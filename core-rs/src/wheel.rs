//! Hierarchical timing wheel: the frontier's due-time schedule index.
//!
//! ## Problem
//! Hold up to tens of millions of `(id, tick)` pairs — a URL row and the epoch-hour it is next
//! due — where ids are rescheduled or cancelled at any time, and repeatedly remove "every id
//! due by `now`" in `(tick, id)` order. A binary heap does this in `O(log n)` per operation
//! but cannot cancel or move an entry without a position index, and touches `log n` cache
//! lines per operation. Most ticks are far in the future (days to months of hours), and the
//! clock advances in small steps.
//!
//! ## Shape (Varghese & Lauck, "Hashed and hierarchical timing wheels", SOSP 1987; the
//! absolute-digit placement follows the Linux and tokio timer wheels)
//! A tick is a 32-bit number read as six base-64 digits `d₀ … d₅` (`dₗ = (t >> 6ℓ) & 63`).
//! The wheel keeps `elapsed`, the last tick fully processed. An entry with `t > elapsed` goes
//! to **level** `ℓ = ⌊msb(t ⊕ elapsed) / 6⌋` — the highest digit where it differs from
//! `elapsed` — and **slot** `dₗ(t)` of that level. Everything above digit `ℓ` agrees with
//! `elapsed`, so the slot's start tick is `elapsed` with digits `< ℓ+1` cleared plus
//! `dₗ(t)·64^ℓ`; a level-0 slot holds exactly one tick. An entry with `t ≤ elapsed` (a tick in
//! the past) goes to the **overdue list** and is returned by the next `advance`.
//!
//! Each of the 6 × 64 slots is a circular doubly linked list threaded through per-entry
//! `next`/`prev` arrays, so scheduling, moving and cancelling are `O(1)`. A 64-bit occupancy
//! mask per level finds the next non-empty slot with one `trailing_zeros`.
//!
//! ## Advance
//! `advance(now)` repeatedly takes the earliest slot: the lowest level with an occupied slot
//! at or after `elapsed`'s digit (entries on lower levels lie in `elapsed`'s current block,
//! which ends before any higher-level slot starts). If its start is `≤ now`, a level-0 slot is
//! emitted (its ids sorted) and a higher slot is **cascaded**: `elapsed` moves to the slot's
//! start and its entries are re-placed, landing on lower levels. Then `elapsed = now`.
//!
//! ## Cost
//! Schedule, cancel, reschedule: `O(1)`. Each entry is cascaded at most 5 times before it is
//! emitted, so advancing costs `O(due + cascaded + levels)` plus `O(k log k)` to sort the `k`
//! ids of each due tick — independent of how much empty time is skipped, and a tick months
//! ahead costs the same as one an hour ahead. `next_tick` is `O(1)` when the earliest slot is
//! on level 0 and scans one slot otherwise (cached until the next mutation).
//!
//! ## Ids and memory
//! Entries are found by id through one of two indexes. **Dense** (the frontier's case: ids
//! are row numbers): entry handle = id + 385, no map, 12 bytes per id up to the largest id
//! (`tick`, `next`, `prev`). **Sparse** (arbitrary u32 ids): a linear-probing hash map
//! id → handle (8 bytes a slot, at most 7/8 full) plus a reverse array, about 28 bytes per
//! entry. A wheel starts dense and converts to sparse once,
//! when an id would stretch the dense arrays past `max(2²⁰, 4·(entries + 1))`.

const LEVELS: usize = 6;
const SLOTS: usize = 64;
/// List heads: 6 × 64 slots, then the overdue list.
const OVERDUE: u32 = (LEVELS * SLOTS) as u32;
/// Number of sentinel nodes; entry handles start here.
const SENTINELS: u32 = OVERDUE + 1;
/// `next[h] == NONE` marks an unscheduled handle.
const NONE: u32 = u32::MAX;
/// Dense ids are allowed up to this many even when the wheel is nearly empty.
const DENSE_FLOOR: usize = 1 << 20;

/// An id → handle hash map: linear probing over a power-of-two table of `(id, handle)` with
/// `handle == NONE` marking a free slot, kept at most 7/8 full, with backward-shift deletion
/// (no tombstones). Written here rather than using `std::collections::HashMap`, which adds
/// about 20 KiB to the wasm binary and wants a random seed this target does not have.
struct IdMap {
    ids: Vec<u32>,
    handles: Vec<u32>,
    len: usize,
}

impl IdMap {
    fn new() -> Self {
        IdMap { ids: vec![0; 16], handles: vec![NONE; 16], len: 0 }
    }

    #[inline]
    fn home(&self, id: u32) -> usize {
        (crate::hash::mix64(u64::from(id)) as usize) & (self.ids.len() - 1)
    }

    fn get(&self, id: u32) -> Option<u32> {
        let mask = self.ids.len() - 1;
        let mut i = self.home(id);
        loop {
            let h = self.handles[i];
            if h == NONE {
                return None;
            }
            if self.ids[i] == id {
                return Some(h);
            }
            i = (i + 1) & mask;
        }
    }

    fn insert(&mut self, id: u32, handle: u32) {
        if (self.len + 1) * 8 > self.ids.len() * 7 {
            let old_ids = std::mem::replace(&mut self.ids, vec![0; self.handles.len() * 2]);
            let old_handles = std::mem::replace(&mut self.handles, vec![NONE; old_ids.len() * 2]);
            self.len = 0;
            for (&i, &h) in old_ids.iter().zip(old_handles.iter()) {
                if h != NONE {
                    self.insert(i, h);
                }
            }
        }
        let mask = self.ids.len() - 1;
        let mut i = self.home(id);
        while self.handles[i] != NONE {
            if self.ids[i] == id {
                self.handles[i] = handle;
                return;
            }
            i = (i + 1) & mask;
        }
        self.ids[i] = id;
        self.handles[i] = handle;
        self.len += 1;
    }

    fn remove(&mut self, id: u32) {
        let mask = self.ids.len() - 1;
        let mut i = self.home(id);
        loop {
            if self.handles[i] == NONE {
                return;
            }
            if self.ids[i] == id {
                break;
            }
            i = (i + 1) & mask;
        }
        // Backward shift: pull later members of the probe run into the hole when their home
        // position does not lie strictly between the hole and themselves.
        let mut hole = i;
        let mut j = (i + 1) & mask;
        while self.handles[j] != NONE {
            let home = self.home(self.ids[j]);
            let dist_home = j.wrapping_sub(home) & mask;
            let dist_hole = j.wrapping_sub(hole) & mask;
            if dist_home >= dist_hole {
                self.ids[hole] = self.ids[j];
                self.handles[hole] = self.handles[j];
                hole = j;
            }
            j = (j + 1) & mask;
        }
        self.handles[hole] = NONE;
        self.len -= 1;
    }

    fn bytes(&self) -> usize {
        (self.ids.capacity() + self.handles.capacity()) * 4
    }
}

enum Ids {
    /// handle = id + SENTINELS.
    Dense,
    /// id → handle, handle → id, and recycled handles.
    Sparse { map: IdMap, id_of: Vec<u32>, free: Vec<u32> },
}

/// The timing wheel (see the module documentation).
pub struct TimingWheel {
    elapsed: u32,
    tick: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    occupied: [u64; LEVELS],
    ids: Ids,
    len: usize,
    /// Ids returned by the last `advance`.
    out: Vec<u32>,
    /// Scratch for cascades and overdue sorting.
    tmp: Vec<(u32, u32)>,
    /// `Some(answer)` while no mutation has happened since `next_tick` computed it.
    next_cache: Option<Option<u32>>,
}

#[inline(always)]
fn level_for(elapsed: u32, tick: u32) -> usize {
    let x = elapsed ^ tick;
    if x == 0 {
        0
    } else {
        (31 - x.leading_zeros()) as usize / 6
    }
}

#[inline(always)]
fn digit(t: u32, level: usize) -> usize {
    ((t >> (6 * level)) & 63) as usize
}

impl TimingWheel {
    /// An empty wheel whose clock reads `now` (ticks `≤ now` are already due).
    pub fn new(now: u32) -> Self {
        let n = SENTINELS as usize;
        let mut w = TimingWheel {
            elapsed: now,
            tick: vec![0; n],
            next: (0..SENTINELS).collect(),
            prev: (0..SENTINELS).collect(),
            occupied: [0; LEVELS],
            ids: Ids::Dense,
            len: 0,
            out: Vec::new(),
            tmp: Vec::new(),
            next_cache: None,
        };
        w.next_cache = Some(None);
        w
    }

    /// Number of scheduled ids.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no id is scheduled.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The wheel's clock: the last tick `advance` processed (or the construction time).
    pub fn now(&self) -> u32 {
        self.elapsed
    }

    /// Bytes held by the entry arrays, the id index and the output buffer.
    pub fn memory_bytes(&self) -> usize {
        let nodes = (self.tick.capacity() + self.next.capacity() + self.prev.capacity()) * 4;
        let index = match &self.ids {
            Ids::Dense => 0,
            // hashbrown keeps capacity·8/7 buckets of (u32, u32) plus one control byte each.
            Ids::Sparse { map, id_of, free } => map.bytes() + (id_of.capacity() + free.capacity()) * 4,
        };
        nodes + index + self.out.capacity() * 4 + self.tmp.capacity() * 8
    }

    // ---- id index -------------------------------------------------------------------------

    fn lookup(&self, id: u32) -> Option<u32> {
        match &self.ids {
            Ids::Dense => {
                // u64: on wasm32 `id + SENTINELS` can overflow usize.
                let h = u64::from(id) + u64::from(SENTINELS);
                if h < self.next.len() as u64 {
                    Some(h as u32)
                } else {
                    None
                }
            }
            Ids::Sparse { map, .. } => map.get(id),
        }
    }

    fn id_of(&self, h: u32) -> u32 {
        match &self.ids {
            Ids::Dense => h - SENTINELS,
            Ids::Sparse { id_of, .. } => id_of[(h - SENTINELS) as usize],
        }
    }

    /// Prepares the index for ids up to `max_id` arriving with `incoming` new entries:
    /// grows the dense arrays, or converts to the sparse index when they would be too sparse.
    fn reserve_ids(&mut self, max_id: u32, incoming: usize) {
        if let Ids::Dense = self.ids {
            // u64 throughout: on wasm32 `max_id + 1` can overflow usize.
            let need = u64::from(max_id) + 1;
            let have = (self.next.len() - SENTINELS as usize) as u64;
            if need <= have {
                return;
            }
            if need <= DENSE_FLOOR.max(4 * (self.len + incoming + 1)) as u64 {
                let grow = need.max(have + have / 2) as usize + SENTINELS as usize;
                self.tick.resize(grow, 0);
                self.next.resize(grow, NONE);
                self.prev.resize(grow, NONE);
            } else {
                self.to_sparse();
            }
        }
    }

    /// Handle for `id`, creating it if needed (after `reserve_ids`).
    fn handle_for(&mut self, id: u32) -> u32 {
        match &mut self.ids {
            Ids::Dense => id + SENTINELS,
            Ids::Sparse { map, id_of, free } => {
                if let Some(h) = map.get(id) {
                    return h;
                }
                let h = match free.pop() {
                    Some(h) => h,
                    None => {
                        let h = self.next.len() as u32;
                        self.tick.push(0);
                        self.next.push(NONE);
                        self.prev.push(NONE);
                        id_of.push(0);
                        h
                    }
                };
                id_of[(h - SENTINELS) as usize] = id;
                map.insert(id, h);
                h
            }
        }
    }

    /// Forgets an unscheduled handle (sparse index only; dense handles are the ids).
    fn release(&mut self, h: u32) {
        if let Ids::Sparse { map, id_of, free } = &mut self.ids {
            map.remove(id_of[(h - SENTINELS) as usize]);
            free.push(h);
        }
    }

    /// Rebuilds the wheel around a sparse index, re-placing every entry relative to the
    /// current clock (always a valid placement: no slot is left half-cascaded).
    fn to_sparse(&mut self) {
        let entries = self.entries();
        let elapsed = self.elapsed;
        let mut fresh = TimingWheel::new(elapsed);
        fresh.ids = Ids::Sparse { map: IdMap::new(), id_of: Vec::new(), free: Vec::new() };
        for (id, t) in entries {
            fresh.schedule_one(id, t);
        }
        *self = fresh;
    }

    /// Every scheduled `(id, tick)`, in no particular order.
    pub fn entries(&self) -> Vec<(u32, u32)> {
        let mut all = Vec::with_capacity(self.len);
        for h in SENTINELS..self.next.len() as u32 {
            if self.next[h as usize] != NONE {
                all.push((self.id_of(h), self.tick[h as usize]));
            }
        }
        all
    }

    // ---- lists ----------------------------------------------------------------------------

    #[inline]
    fn link(&mut self, head: u32, h: u32) {
        let tail = self.prev[head as usize];
        self.next[tail as usize] = h;
        self.prev[h as usize] = tail;
        self.next[h as usize] = head;
        self.prev[head as usize] = h;
    }

    #[inline]
    fn unlink(&mut self, h: u32) {
        let (p, n) = (self.prev[h as usize], self.next[h as usize]);
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
        self.next[h as usize] = NONE;
    }

    #[inline]
    fn list_empty(&self, head: u32) -> bool {
        self.next[head as usize] == head
    }

    /// Detaches every node of list `head` into `self.tmp` as `(id, handle)`, leaving it empty.
    fn drain_list(&mut self, head: u32) {
        self.tmp.clear();
        let mut h = self.next[head as usize];
        while h != head {
            let after = self.next[h as usize];
            self.next[h as usize] = NONE;
            let id = self.id_of(h);
            self.tmp.push((id, h));
            h = after;
        }
        self.next[head as usize] = head;
        self.prev[head as usize] = head;
    }

    /// Places handle `h` (unlinked, `tick[h]` set) relative to the clock. `overdue_if_now`
    /// decides where a tick equal to `elapsed` goes: the overdue list for a fresh schedule,
    /// level 0 during a cascade (where `elapsed` is the start of the slot being cascaded, whose
    /// own tick is still to be emitted).
    #[inline]
    fn place(&mut self, h: u32, overdue_if_now: bool) {
        let t = self.tick[h as usize];
        if t < self.elapsed || (t == self.elapsed && overdue_if_now) {
            self.link(OVERDUE, h);
            return;
        }
        let level = level_for(self.elapsed, t);
        let slot = digit(t, level);
        self.occupied[level] |= 1u64 << slot;
        self.link((level * SLOTS + slot) as u32, h);
    }

    // ---- public operations ----------------------------------------------------------------

    fn schedule_one(&mut self, id: u32, t: u32) {
        let h = self.handle_for(id);
        if self.next[h as usize] == NONE {
            self.len += 1;
        } else {
            self.unlink(h);
        }
        self.tick[h as usize] = t;
        self.place(h, true);
    }

    /// Schedules `id` at tick `t`, moving it if it was already scheduled.
    pub fn schedule(&mut self, id: u32, t: u32) {
        self.reserve_ids(id, 1);
        self.schedule_one(id, t);
        self.next_cache = None;
    }

    /// Schedules every `(ids[i], ticks[i])` in order (a later entry for the same id wins).
    pub fn schedule_batch(&mut self, ids: &[u32], ticks: &[u32]) {
        assert_eq!(ids.len(), ticks.len(), "TimingWheel::schedule_batch: lengths");
        if let Some(&max) = ids.iter().max() {
            self.reserve_ids(max, ids.len());
        }
        for (&id, &t) in ids.iter().zip(ticks) {
            self.schedule_one(id, t);
        }
        self.next_cache = None;
    }

    /// Removes `id`; returns whether it was scheduled.
    pub fn cancel(&mut self, id: u32) -> bool {
        match self.lookup(id) {
            Some(h) if self.next[h as usize] != NONE => {
                self.unlink(h);
                self.release(h);
                self.len -= 1;
                self.next_cache = None;
                true
            }
            _ => false,
        }
    }

    /// The tick `id` is scheduled at, if any.
    pub fn tick_of(&self, id: u32) -> Option<u32> {
        self.lookup(id).filter(|&h| self.next[h as usize] != NONE).map(|h| self.tick[h as usize])
    }

    /// The earliest non-empty slot: `(level, slot, start tick)`. Clears occupancy bits of
    /// slots found empty (cancellation leaves them set).
    fn next_expiration(&mut self) -> Option<(usize, usize, u32)> {
        for level in 0..LEVELS {
            let d = digit(self.elapsed, level);
            loop {
                let bits = self.occupied[level] & (!0u64 << d);
                if bits == 0 {
                    break;
                }
                let slot = bits.trailing_zeros() as usize;
                if self.list_empty((level * SLOTS + slot) as u32) {
                    self.occupied[level] &= !(1u64 << slot);
                    continue;
                }
                let span = 6 * (level as u32 + 1);
                let high = if span >= 32 { 0 } else { (u64::from(self.elapsed) >> span) << span };
                let start = high | ((slot as u64) << (6 * level));
                return Some((level, slot, start as u32));
            }
        }
        None
    }

    /// Removes every id with tick `≤ now` and returns them ordered by tick, then id. The clock
    /// moves to `now`; an earlier `now` leaves the clock where it is and only returns overdue
    /// entries due by then.
    pub fn advance(&mut self, now: u32) -> &[u32] {
        self.next_cache = None;
        if self.out.capacity() > 1 << 16 {
            self.out = Vec::new();
        }
        self.out.clear();
        // 1. Overdue entries (all ticks ≤ elapsed), sorted by (tick, id).
        if !self.list_empty(OVERDUE) {
            self.tmp.clear();
            let mut h = self.next[OVERDUE as usize];
            while h != OVERDUE {
                let after = self.next[h as usize];
                if self.tick[h as usize] <= now {
                    self.tmp.push((self.tick[h as usize], h));
                }
                h = after;
            }
            let mut due = std::mem::take(&mut self.tmp);
            for &(_, h) in due.iter() {
                self.unlink(h);
            }
            for e in due.iter_mut() {
                let id = self.id_of(e.1);
                self.release(e.1);
                e.1 = id;
            }
            due.sort_unstable();
            self.len -= due.len();
            self.out.extend(due.iter().map(|&(_, id)| id));
            self.tmp = due;
        }
        // 2. The wheel, slot by slot in time order.
        if now > self.elapsed {
            while let Some((level, slot, start)) = self.next_expiration() {
                if start > now {
                    break;
                }
                let head = (level * SLOTS + slot) as u32;
                self.occupied[level] &= !(1u64 << slot);
                self.drain_list(head);
                self.elapsed = start;
                let batch = std::mem::take(&mut self.tmp);
                if level == 0 {
                    let from = self.out.len();
                    for &(id, h) in batch.iter() {
                        self.release(h);
                        self.out.push(id);
                    }
                    self.len -= batch.len();
                    self.out[from..].sort_unstable();
                } else {
                    for &(_, h) in batch.iter() {
                        self.place(h, false);
                    }
                }
                self.tmp = batch;
            }
            self.elapsed = now;
        }
        &self.out
    }

    /// The ids the last `advance` returned.
    pub fn last_out(&self) -> &[u32] {
        &self.out
    }

    /// The smallest tick in list `head` (`u32::MAX` when empty).
    fn min_tick(&self, head: u32) -> u32 {
        let mut best = u32::MAX;
        let mut h = self.next[head as usize];
        while h != head {
            best = best.min(self.tick[h as usize]);
            h = self.next[h as usize];
        }
        best
    }

    /// The earliest scheduled tick, if any.
    pub fn next_tick(&mut self) -> Option<u32> {
        if let Some(cached) = self.next_cache {
            return cached;
        }
        let answer = if !self.list_empty(OVERDUE) {
            Some(self.min_tick(OVERDUE))
        } else {
            match self.next_expiration() {
                None => None,
                Some((0, _, start)) => Some(start),
                Some((level, slot, _)) => Some(self.min_tick((level * SLOTS + slot) as u32)),
            }
        };
        self.next_cache = Some(answer);
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use crate::testutil::Rng;

    /// The sorted-array model: id → tick, drained by filtering and sorting.
    fn model_advance(model: &mut BTreeMap<u32, u32>, now: u32) -> Vec<u32> {
        let mut due: Vec<(u32, u32)> = model.iter().filter(|(_, &t)| t <= now).map(|(&id, &t)| (t, id)).collect();
        due.sort_unstable();
        for (_, id) in due.iter() {
            model.remove(id);
        }
        due.into_iter().map(|(_, id)| id).collect()
    }

    fn run_against_model(seed: u64, sparse_ids: bool, start: u32) {
        let mut r = Rng(seed);
        let mut w = TimingWheel::new(start);
        let mut model = BTreeMap::new();
        let mut now = start;
        let id_of = |r: &mut Rng| if sparse_ids { r.next() as u32 | 0x8000_0000 } else { r.below(3000) as u32 };
        let mut known: Vec<u32> = Vec::new();
        for step in 0..4000 {
            match r.below(10) {
                0..=4 => {
                    let id = if !known.is_empty() && r.below(3) == 0 { known[r.below(known.len() as u64) as usize] } else { id_of(&mut r) };
                    known.push(id);
                    let t = match r.below(5) {
                        0 => now.saturating_sub(r.below(100) as u32), // past or now
                        1 => now.saturating_add(r.below(64) as u32),
                        2 => now.saturating_add(r.below(5000) as u32),
                        3 => now.saturating_add(r.below(1 << 24) as u32),
                        _ => r.next() as u32, // anywhere, including far future and u32::MAX
                    };
                    w.schedule(id, t);
                    model.insert(id, t);
                }
                5 => {
                    let id = if known.is_empty() { 0 } else { known[r.below(known.len() as u64) as usize] };
                    assert_eq!(w.cancel(id), model.remove(&id).is_some());
                }
                6..=8 => {
                    let to = match r.below(4) {
                        0 => now.saturating_sub(r.below(50) as u32),
                        1 => now.saturating_add(r.below(100) as u32),
                        2 => now.saturating_add(r.below(100_000) as u32),
                        _ => now.saturating_add(r.below(1 << 28) as u32),
                    };
                    let got = w.advance(to).to_vec();
                    let want = model_advance(&mut model, to);
                    assert_eq!(got, want, "seed {} step {} advance {} -> {}", seed, step, now, to);
                    now = now.max(to);
                }
                _ => {
                    let want = model.values().min().copied();
                    assert_eq!(w.next_tick(), want, "seed {} step {}", seed, step);
                }
            }
            assert_eq!(w.len(), model.len());
        }
        let got = w.advance(u32::MAX).to_vec();
        assert_eq!(got, model_advance(&mut model, u32::MAX));
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn agrees_with_sorted_model() {
        for seed in 1..6 {
            run_against_model(seed, false, 1000);
            run_against_model(seed + 100, true, 0);
            run_against_model(seed + 200, false, u32::MAX - 5_000_000);
        }
    }

    #[test]
    fn id_map_matches_btreemap() {
        let mut r = Rng(77);
        let mut map = IdMap::new();
        let mut model = BTreeMap::new();
        for _ in 0..50_000 {
            // A small id range forces long probe runs, collisions and many deletions.
            let id = (r.below(2000) as u32).wrapping_mul(0x0101_0101);
            if r.below(3) == 0 {
                map.remove(id);
                model.remove(&id);
            } else {
                let h = r.next() as u32 >> 1;
                map.insert(id, h);
                model.insert(id, h);
            }
            assert_eq!(map.len, model.len());
        }
        for id in 0..2000u32 {
            let id = id.wrapping_mul(0x0101_0101);
            assert_eq!(map.get(id), model.get(&id).copied());
        }
    }

    #[test]
    fn converts_to_sparse_on_huge_ids() {
        let mut w = TimingWheel::new(0);
        w.schedule(5, 10);
        w.schedule(4_000_000_000, 9);
        assert!(matches!(w.ids, Ids::Sparse { .. }));
        assert_eq!(w.tick_of(5), Some(10));
        assert_eq!(w.advance(20), &[4_000_000_000, 5]);
        assert!(w.memory_bytes() < 1 << 20);
    }

    #[test]
    fn far_jumps_skip_empty_time() {
        let mut w = TimingWheel::new(0);
        w.schedule(1, u32::MAX);
        w.schedule(2, 1 << 31);
        assert_eq!(w.next_tick(), Some(1 << 31));
        assert!(w.advance((1 << 31) - 1).is_empty());
        assert_eq!(w.advance(u32::MAX - 1), &[2]);
        assert_eq!(w.next_tick(), Some(u32::MAX));
        assert_eq!(w.advance(u32::MAX), &[1]);
        // At the end of time everything new is overdue.
        w.schedule(3, 7);
        assert_eq!(w.advance(u32::MAX), &[3]);
    }
}
