//! A page's link intake in one call: canonicalize ([`crate::canon`]), key ([`crate::urlkey`])
//! and check-and-insert into the seen-set ([`crate::seen`]).
//!
//! The three steps exist as separate exports; chaining them from TypeScript costs three
//! boundary crossings per page plus re-staging the canonical URLs. Here the canonical URLs
//! stay in wasm memory between the steps. The call finishes the page only when the core can
//! answer every link: a link the canonicalizer declines, or an origin the key table has not
//! seen (its host group needs the public suffix list, held in TypeScript), stops it after
//! the canonicalize step, with the per-link results written, and the caller finishes the
//! page with the separate steps. Nothing is inserted in that case, so the two routes give
//! the same seen-set and the same verdicts.

use crate::bloom::BlockedBloom;
use crate::canon::{self, kind};
use crate::drum::DrumSet;
use crate::filter::UrlKey;
use crate::seen;
use crate::urlkey::OriginTable;

/// How far [`admit_page`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admitted {
    /// Every link answered: verdicts and keys are written.
    Done,
    /// Only the canonicalize step ran (a declined link or an unknown origin): the caller
    /// finishes the page.
    Canonicalized,
}

/// Canonicalizes the links of a page as [`canon::canonicalize_batch`] (writing `lanes` and
/// `arena` the same way), then, when every link was answered and every origin is known, keys
/// the canonical ones (`keys[2i..2i+2]` for link `i`; zero for a null link) and merges them
/// into the seen-set, writing `verdicts[i]` (1 new, 0 otherwise; null links 0).
#[allow(clippy::too_many_arguments)]
pub fn admit_page(
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
) -> Admitted {
    let count = offsets.len() - 1;
    assert_eq!(keys.len(), 2 * count, "admit_page: two u64 per link");
    assert_eq!(verdicts.len(), count, "admit_page: one verdict per link");
    canon::canonicalize_batch(base, data, offsets, lanes, arena);
    // Pack the canonical URLs of the non-null links.
    let mut packed: Vec<u8> = Vec::new();
    let mut offs: Vec<u32> = vec![0];
    let mut which: Vec<usize> = Vec::new();
    for i in 0..count {
        let (k, a, b) = (lanes[3 * i], lanes[3 * i + 1] as usize, lanes[3 * i + 2] as usize);
        let raw = &data[offsets[i] as usize..offsets[i + 1] as usize];
        match k {
            kind::NULL => continue,
            kind::FALLBACK => return Admitted::Canonicalized,
            kind::RAW_PREFIX => packed.extend_from_slice(&raw[..a]),
            kind::JOINED => {
                packed.extend_from_slice(&base.expect("a joined link has a page")[..a]);
                packed.extend_from_slice(&raw[..b]);
            }
            _ => packed.extend_from_slice(&arena[a..b]),
        }
        offs.push(packed.len() as u32);
        which.push(i);
    }
    let m = which.len();
    let mut found = vec![0u64; 2 * m];
    let mut misses = vec![0u32; m];
    if table.key_batch(&packed, &offs, path_seed, &mut found, None, &mut misses) > 0 {
        return Admitted::Canonicalized;
    }
    let url_keys: Vec<UrlKey> = (0..m).map(|j| [found[2 * j], found[2 * j + 1]]).collect();
    let mut v = vec![0u8; m];
    seen::merge(set, filter, &url_keys, &mut v);
    keys.fill(0);
    verdicts.fill(0);
    for (j, &i) in which.iter().enumerate() {
        keys[2 * i] = found[2 * j];
        keys[2 * i + 1] = found[2 * j + 1];
        verdicts[i] = v[j];
    }
    Admitted::Done
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

    fn run(table: &mut OriginTable, set: &mut DrumSet, filter: &mut BlockedBloom, links: &[&str]) -> (Admitted, Vec<u8>, Vec<u64>) {
        let (data, offs) = pack(links);
        let n = links.len();
        let (mut lanes, mut arena, mut keys, mut v) = (vec![0u32; 3 * n], vec![0u8; 4096], vec![0u64; 2 * n], vec![9u8; n]);
        let page: &[u8] = b"https://e.com/dir/page";
        let got = admit_page(table, set, filter, Some(page), &data, &offs, 7, &mut lanes, &mut arena, &mut keys, &mut v);
        (got, v, keys)
    }

    #[test]
    fn finishes_a_page_of_known_origins_and_declines_otherwise_without_inserting() {
        let mut table = OriginTable::new();
        table.insert(b"https://e.com", 0xE).unwrap();
        table.insert(b"https://f.org", 0xF).unwrap();
        let mut set = DrumSet::new(4);
        let mut filter = BlockedBloom::new(1000, 0.01).unwrap();
        let links = ["/a", "x/y", "https://f.org/p?b=1&a=2", "/a#again", "mailto:x", "https://f.org/p?a=2&b=1"];
        let (got, v, keys) = run(&mut table, &mut set, &mut filter, &links);
        assert_eq!(got, Admitted::Canonicalized, "mailto: is declined (the TS path answers null for it)");
        assert_eq!(set.len(), 0);
        let links = ["/a", "x/y", "https://f.org/p?b=1&a=2", "/a#again", "https://f.org/p?a=2&b=1"];
        let (got, v2, keys2) = run(&mut table, &mut set, &mut filter, &links);
        let _ = (v, keys);
        assert_eq!(got, Admitted::Done);
        assert_eq!(v2, [1, 1, 1, 0, 0]);
        assert_eq!(set.len(), 3);
        assert_eq!(keys2[0], 0xE);
        assert_eq!(keys2[4], 0xF);
        assert_eq!((keys2[0], keys2[1]), (keys2[6], keys2[7]), "the fragment does not change the key");
        assert!(filter.may_contain(&[keys2[2], keys2[3]]));
        // Again: everything seen.
        let (_, v3, _) = run(&mut table, &mut set, &mut filter, &links);
        assert_eq!(v3, [0, 0, 0, 0, 0]);
        // An origin the table has not seen stops after canonicalizing.
        let (got, _, _) = run(&mut table, &mut set, &mut filter, &["https://new.example/x"]);
        assert_eq!(got, Admitted::Canonicalized);
        assert_eq!(set.len(), 3);
    }
}
