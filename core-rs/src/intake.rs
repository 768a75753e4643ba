//! A page's link intake in one call: canonicalize ([`crate::canon`]), key ([`crate::urlkey`])
//! and check-and-insert into the seen-set ([`crate::seen`]).
//!
//! The three steps exist as separate exports; chaining them from TypeScript costs three
//! boundary crossings per page plus re-staging the canonical URLs. Here the canonical URLs
//! stay in wasm memory between the steps. The core finishes every link it can answer and
//! hands back only the others, by index: a link the canonicalizer declines, or one whose
//! origin the key table has not seen (its host group needs the public suffix list, held in
//! TypeScript). The caller finishes those with the separate steps, after this call's merge.
//!
//! Merging the answered links first changes one thing the caller must repair: the "first
//! occurrence on the page is the new one" rule. When a handed-back link `i` and an answered
//! link `j > i` share a key that was new on this page, this call marks `j` new; the caller's
//! later merge then answers 0 for `i`, and moves the 1 from `j` to `i` (src/dedup/intake.ts).
//! The seen-set's contents do not depend on the order, only which link carries the 1.

use crate::bloom::BlockedBloom;
use crate::canon::{self, kind};
use crate::drum::DrumSet;
use crate::filter::UrlKey;
use crate::hash::xxh64;
use crate::seen;
use crate::urlkey::OriginTable;

/// What a link is, between the steps of [`admit_links`] (kept in its `verdicts` slot).
mod state {
    /// Nothing to key: null, or not reached yet.
    pub const NONE: u8 = 0;
    /// Keyed (`keys[2i..2i+2]` set): goes into the merge.
    pub const KEYED: u8 = 2;
    /// Declined, or of an origin the table does not hold: handed back.
    pub const PENDING: u8 = 3;
}

/// [`admit_links`]' buffers, reused from page to page (the wasm build has one thread): once
/// grown to a page's size, a page's intake allocates nothing here. No state survives a call,
/// only capacity.
#[derive(Default)]
struct Scratch {
    /// Canonical URLs of the links keyed by [`OriginTable::key_batch`], packed, and their
    /// offsets and link indexes.
    packed: Vec<u8>,
    offs: Vec<u32>,
    which: Vec<u32>,
    /// `key_batch`'s outputs.
    found: Vec<u64>,
    misses: Vec<u32>,
    /// A joined canonical URL (page prefix + link), for hashing.
    joined: Vec<u8>,
    /// The keyed links in page order, their keys and their merge verdicts.
    keyed: Vec<u32>,
    url_keys: Vec<UrlKey>,
    merged: Vec<u8>,
}

impl Scratch {
    fn clear(&mut self) {
        self.packed.clear();
        self.offs.clear();
        self.offs.push(0);
        self.which.clear();
        self.keyed.clear();
        self.url_keys.clear();
    }

    /// Releases buffers an outsized page grew past [`canon::SCRATCH_KEEP`] bytes.
    fn trim(&mut self) {
        if self.packed.capacity() + 16 * self.url_keys.capacity() + 16 * self.found.capacity() > canon::SCRATCH_KEEP {
            *self = Scratch::default();
        }
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Canonicalizes the links of a page as [`canon::canonicalize_batch`] (writing `lanes` and
/// `arena` the same way), keys the canonical ones whose origin the table holds
/// (`keys[2i..2i+2]` for link `i`) and merges them into the seen-set, writing `verdicts[i]`
/// (1 new, 0 otherwise). Links not finished here — declined by the canonicalizer (kind
/// `FALLBACK`) or of an unknown origin — get verdict 0 and key zero, and their indexes are
/// written in ascending order to the front of `pending`; returns how many. Null links get
/// verdict 0 and key zero and are finished (nothing to do).
///
/// A link of the page's own origin (a path-absolute or relative link, or an absolute one
/// back to the same host: most of a real page's links) takes the page's HostKey, looked up
/// once per page; only the others go through the table's batch lookup.
#[allow(clippy::too_many_arguments)]
pub fn admit_links(
    table: &mut OriginTable,
    set: &mut DrumSet,
    filter: &mut BlockedBloom,
    base: Option<&[u8]>,
    data: &[u8],
    offsets: &[u32],
    path_seed: u64,
    lanes: &mut [u32],
    arena: &mut [u8],
    keys: &mut [u64],
    verdicts: &mut [u8],
    pending: &mut [u32],
) -> usize {
    SCRATCH.with(|cell| {
        let sc = &mut *cell.borrow_mut();
        let count = offsets.len() - 1;
        assert_eq!(keys.len(), 2 * count, "admit_links: two u64 per link");
        assert_eq!(verdicts.len(), count, "admit_links: one verdict per link");
        assert!(pending.len() >= count, "admit_links: one pending slot per link");
        canon::canonicalize_batch(base, data, offsets, lanes, arena);
        keys.fill(0);
        verdicts.fill(state::NONE);
        sc.clear();
        // The page's origin and HostKey, when the page has a plain origin the table holds.
        let home = base.and_then(|b| {
            let o = canon::plain_origin(b)?;
            table.get(&b[..o]).map(|(_, host)| (&b[..o], host))
        });
        // Step 1: key the links of the page's origin now; pack the others for the table.
        for i in 0..count {
            let (k, a, b) = (lanes[3 * i], lanes[3 * i + 1] as usize, lanes[3 * i + 2] as usize);
            let raw = &data[offsets[i] as usize..offsets[i + 1] as usize];
            let url: &[u8] = match k {
                kind::NULL => continue,
                kind::FALLBACK => {
                    verdicts[i] = state::PENDING;
                    continue;
                }
                kind::RAW_PREFIX => &raw[..a],
                kind::JOINED => {
                    sc.joined.clear();
                    sc.joined.extend_from_slice(&base.expect("a joined link has a page")[..a]);
                    sc.joined.extend_from_slice(&raw[..b]);
                    &sc.joined
                }
                _ => &arena[a..b],
            };
            match home {
                Some((origin, host)) if url.get(origin.len()) == Some(&b'/') && canon::same_bytes(&url[..origin.len()], origin) => {
                    keys[2 * i] = host;
                    keys[2 * i + 1] = xxh64(url, path_seed);
                    verdicts[i] = state::KEYED;
                }
                _ => {
                    sc.packed.extend_from_slice(url);
                    sc.offs.push(sc.packed.len() as u32);
                    sc.which.push(i as u32);
                }
            }
        }
        // Step 2: the table's batch lookup for the rest; a miss is handed back.
        let m = sc.which.len();
        sc.found.clear();
        sc.found.resize(2 * m, 0);
        sc.misses.clear();
        sc.misses.resize(m, 0);
        let missed = table.key_batch(&sc.packed, &sc.offs, path_seed, &mut sc.found, None, &mut sc.misses);
        let mut next_miss = 0;
        for (j, &i) in sc.which.iter().enumerate() {
            let i = i as usize;
            if next_miss < missed && sc.misses[next_miss] as usize == j {
                next_miss += 1;
                verdicts[i] = state::PENDING;
                continue;
            }
            keys[2 * i] = sc.found[2 * j];
            keys[2 * i + 1] = sc.found[2 * j + 1];
            verdicts[i] = state::KEYED;
        }
        // Step 3: merge the keyed links in page order; hand back the pending ones in order.
        let mut p = 0;
        for i in 0..count {
            match verdicts[i] {
                state::KEYED => {
                    sc.keyed.push(i as u32);
                    sc.url_keys.push([keys[2 * i], keys[2 * i + 1]]);
                }
                state::PENDING => {
                    pending[p] = i as u32;
                    p += 1;
                }
                _ => {}
            }
            verdicts[i] = 0;
        }
        sc.merged.clear();
        sc.merged.resize(sc.url_keys.len(), 0);
        seen::merge(set, filter, &sc.url_keys, &mut sc.merged);
        for (&i, &v) in sc.keyed.iter().zip(&sc.merged) {
            verdicts[i as usize] = v;
        }
        sc.trim();
        p
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Membership;

    fn pack(links: &[&str]) -> (Vec<u8>, Vec<u32>) {
        let mut data = Vec::new();
        let mut offs = vec![0u32];
        for l in links {
            data.extend_from_slice(l.as_bytes());
            offs.push(data.len() as u32);
        }
        (data, offs)
    }

    fn run(table: &mut OriginTable, set: &mut DrumSet, filter: &mut BlockedBloom, links: &[&str]) -> (Vec<u32>, Vec<u8>, Vec<u64>) {
        run_on(b"https://e.com/dir/page", table, set, filter, links)
    }

    fn run_on(page: &[u8], table: &mut OriginTable, set: &mut DrumSet, filter: &mut BlockedBloom, links: &[&str]) -> (Vec<u32>, Vec<u8>, Vec<u64>) {
        let (data, offs) = pack(links);
        let n = links.len();
        let (mut lanes, mut arena, mut keys, mut v, mut pending) = (vec![0u32; 3 * n], vec![0u8; 4096], vec![0u64; 2 * n], vec![9u8; n], vec![0u32; n]);
        let np = admit_links(table, set, filter, Some(page), &data, &offs, 7, &mut lanes, &mut arena, &mut keys, &mut v, &mut pending);
        pending.truncate(np);
        (pending, v, keys)
    }

    #[test]
    fn links_of_the_page_origin_get_the_keys_the_table_gives() {
        // The page's HostKey is looked up once and given to every link of its origin; the
        // keys must be those of keying each canonical URL through the table.
        let mut table = OriginTable::new();
        table.insert(b"https://e.com", 0xE).unwrap();
        table.insert(b"https://f.org", 0xF).unwrap();
        let mut set = DrumSet::new(4);
        let mut filter = BlockedBloom::new(1000, 0.01).unwrap();
        let links = ["/a", "x/y", "https://e.com/b?z=1&y=2", "https://E.com/c", "//e.com/d", "https://f.org/e", "/a", "../up", "?q=1"];
        let (pending, v, keys) = run(&mut table, &mut set, &mut filter, &links);
        assert!(pending.is_empty());
        assert_eq!(v, [1, 1, 1, 1, 1, 1, 0, 1, 1]);
        let want = [
            "https://e.com/a", "https://e.com/dir/x/y", "https://e.com/b?y=2&z=1", "https://e.com/c", "https://e.com/d",
            "https://f.org/e", "https://e.com/a", "https://e.com/up", "https://e.com/dir/page?q=1",
        ];
        for (i, url) in want.iter().enumerate() {
            let (k, _) = table.key_one(url.as_bytes(), 7);
            assert_eq!([keys[2 * i], keys[2 * i + 1]], k, "link {} ({})", i, links[i]);
        }
        // A page whose origin the table does not hold: its links are handed back.
        let (pending, v, _) = run_on(b"https://g.net/p", &mut table, &mut set, &mut filter, &["/a", "https://e.com/a"]);
        assert_eq!(pending, [0]);
        assert_eq!(v, [0, 0], "https://e.com/a was merged above");
    }

    #[test]
    fn finishes_the_links_it_can_and_hands_back_the_rest_in_order() {
        let mut table = OriginTable::new();
        table.insert(b"https://e.com", 0xE).unwrap();
        table.insert(b"https://f.org", 0xF).unwrap();
        let mut set = DrumSet::new(4);
        let mut filter = BlockedBloom::new(1000, 0.01).unwrap();
        let links = ["/a", "mailto:x", "x/y", "https://new.example/q", "https://f.org/p?b=1&a=2", "/a#again", "https://f.org/p?a=2&b=1", "javascript:0"];
        let (pending, v, keys) = run(&mut table, &mut set, &mut filter, &links);
        assert_eq!(pending, [1, 3, 7], "declined (mailto:, javascript:) and unknown-origin links, in page order");
        assert_eq!(v, [1, 0, 1, 0, 1, 0, 0, 0]);
        assert_eq!(set.len(), 3, "only the answered links are inserted");
        assert_eq!(keys[0], 0xE);
        assert_eq!(keys[8], 0xF);
        assert_eq!((keys[2], keys[3], keys[6], keys[7]), (0, 0, 0, 0), "pending links get key zero");
        assert_eq!((keys[0], keys[1]), (keys[10], keys[11]), "the fragment does not change the key");
        assert!(filter.may_contain(&[keys[4], keys[5]]));
        // Again: everything answered is seen; the pending ones are still handed back.
        let (pending, v, _) = run(&mut table, &mut set, &mut filter, &links);
        assert_eq!(pending, [1, 3, 7]);
        assert_eq!(v, [0; 8]);
        assert_eq!(set.len(), 3);
        // A page the core answers in full hands back nothing.
        let (pending, v, _) = run(&mut table, &mut set, &mut filter, &["/b", "/b", "https://f.org/"]);
        assert!(pending.is_empty());
        assert_eq!(v, [1, 0, 1]);
    }
}
