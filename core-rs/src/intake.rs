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
use crate::seen;
use crate::urlkey::OriginTable;

/// Canonicalizes the links of a page as [`canon::canonicalize_batch`] (writing `lanes` and
/// `arena` the same way), keys the canonical ones whose origin the table holds
/// (`keys[2i..2i+2]` for link `i`) and merges them into the seen-set, writing `verdicts[i]`
/// (1 new, 0 otherwise). Links not finished here — declined by the canonicalizer (kind
/// `FALLBACK`) or of an unknown origin — get verdict 0 and key zero, and their indexes are
/// written in ascending order to the front of `pending`; returns how many. Null links get
/// verdict 0 and key zero and are finished (nothing to do).
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
    let count = offsets.len() - 1;
    assert_eq!(keys.len(), 2 * count, "admit_links: two u64 per link");
    assert_eq!(verdicts.len(), count, "admit_links: one verdict per link");
    assert!(pending.len() >= count, "admit_links: one pending slot per link");
    canon::canonicalize_batch(base, data, offsets, lanes, arena);
    keys.fill(0);
    verdicts.fill(0);
    // Pack the canonical URLs of the answered links; note the declined ones.
    let mut packed: Vec<u8> = Vec::with_capacity(data.len() + count * 16);
    let mut offs: Vec<u32> = Vec::with_capacity(count + 1);
    offs.push(0);
    let mut which: Vec<u32> = Vec::with_capacity(count);
    let mut declined: Vec<u32> = Vec::new();
    for i in 0..count {
        let (k, a, b) = (lanes[3 * i], lanes[3 * i + 1] as usize, lanes[3 * i + 2] as usize);
        let raw = &data[offsets[i] as usize..offsets[i + 1] as usize];
        match k {
            kind::NULL => continue,
            kind::FALLBACK => {
                declined.push(i as u32);
                continue;
            }
            kind::RAW_PREFIX => packed.extend_from_slice(&raw[..a]),
            kind::JOINED => {
                packed.extend_from_slice(&base.expect("a joined link has a page")[..a]);
                packed.extend_from_slice(&raw[..b]);
            }
            _ => packed.extend_from_slice(&arena[a..b]),
        }
        offs.push(packed.len() as u32);
        which.push(i as u32);
    }
    let m = which.len();
    let mut found = vec![0u64; 2 * m];
    let mut misses = vec![0u32; m];
    let missed = table.key_batch(&packed, &offs, path_seed, &mut found, None, &mut misses);
    // The keyed links: every packed one but the misses (both lists ascending).
    let mut url_keys: Vec<UrlKey> = Vec::with_capacity(m - missed);
    let mut keyed: Vec<u32> = Vec::with_capacity(m - missed);
    let mut next_miss = 0;
    for j in 0..m {
        if next_miss < missed && misses[next_miss] as usize == j {
            next_miss += 1;
            continue;
        }
        url_keys.push([found[2 * j], found[2 * j + 1]]);
        keyed.push(which[j]);
    }
    let mut v = vec![0u8; url_keys.len()];
    seen::merge(set, filter, &url_keys, &mut v);
    for ((&i, k), &vj) in keyed.iter().zip(&url_keys).zip(&v) {
        let i = i as usize;
        keys[2 * i] = k[0];
        keys[2 * i + 1] = k[1];
        verdicts[i] = vj;
    }
    // Pending: the declined links and the missed ones, merged in page order.
    let (mut d, mut x, mut p) = (0, 0, 0);
    while d < declined.len() || x < missed {
        let from_declined = x >= missed || (d < declined.len() && declined[d] < which[misses[x] as usize]);
        pending[p] = if from_declined {
            d += 1;
            declined[d - 1]
        } else {
            x += 1;
            which[misses[x - 1] as usize]
        };
        p += 1;
    }
    p
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
        let (data, offs) = pack(links);
        let n = links.len();
        let (mut lanes, mut arena, mut keys, mut v, mut pending) = (vec![0u32; 3 * n], vec![0u8; 4096], vec![0u64; 2 * n], vec![9u8; n], vec![0u32; n]);
        let page: &[u8] = b"https://e.com/dir/page";
        let np = admit_links(table, set, filter, Some(page), &data, &offs, 7, &mut lanes, &mut arena, &mut keys, &mut v, &mut pending);
        pending.truncate(np);
        (pending, v, keys)
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
