//! Byte-level URL canonicalization for the common links: the wasm twin of the fast paths of
//! `src/url/canonicalize.ts` (`fastCanonical`, `fastRelative`, `canonicalQuery` under the
//! default policy), run over a page's links in one call.
//!
//! ## Problem
//! A page hands the frontier ~60 links; each must become the one canonical string the page
//! is known by (DESIGN §5). The TypeScript path does it link by link with string slices and
//! falls back to the WHATWG parser for anything unusual. Most links are plain: an absolute
//! `http(s)` URL or a path-absolute `/a/b?c` against the page, ASCII, already in canonical
//! percent-encoding. Those need no parser, only byte scans, and can be done for the whole
//! page in wasm, next to the key hashing and the seen-set, without a boundary crossing each.
//!
//! ## Contract: agree exactly, or decline
//! For every input this module either produces exactly what `canonicalize(raw, base)` returns
//! under the default policy, or answers [`Outcome::Fallback`] and the caller runs the
//! TypeScript function for that link. It answers what the TypeScript fast paths answer, plus
//! relative-path links (`x/y`, `../x`, `?q`) against a plain page URL, which the TS path
//! parses with WHATWG ([`relative_path`] resolves them and hands the result to the same
//! checks), and relative links of every kind on a page URL whose only oddity is an uppercase
//! host or the scheme's default port (resolved against the form WHATWG parses it into,
//! [`fold_base`]). It declines everything else the TypeScript fast paths decline, and also:
//! - any byte ≥ 0x80 in the link (UTF-16 and UTF-8 lengths differ; IDNA and escaping rules),
//!   and links longer than the raw-length cap (the TS path answers null for those);
//! - a path holding `;jsessionid=` or `;phpsessid=` (the TS path strips them with a regular
//!   expression and may then remove dot segments);
//! - a query pair whose key is an ambiguous session name (`sid`, `session`, …) and whose value
//!   passes the cheap token checks: the TS path then decides with a floating-point entropy
//!   whose last bit this module does not promise to reproduce;
//! - a query pair whose key is `C` (Apache directory listings' sort links, `?C=N;O=D`, which the
//!   TS path drops on a directory's path).
//! The differential property test (test/url/canonicalize-core.test.ts) runs both over
//! generated links and the WPT URL data and requires equality wherever this module answers.
//!
//! ## Steps (numbering of DESIGN §5, as in the TS file)
//! Scheme exactly `http://` or `https://`; host a DNS name of `[A-Za-z0-9_-]` labels (1–63
//! each, 253 in all, no `xn--` label in any case, last label not starting with a digit),
//! lowercased; the scheme's default port dropped (any other port declines); path of literal
//! characters (RFC 3986 unreserved, sub-delims, `:@/`) and escapes, re-encoded by step 7
//! (uppercase hex, unreserved bytes decoded, a bare `%` as `%25`; `%2e` declines), no `.` or
//! `..` segment; query of bytes WHATWG would not escape; fragment dropped. On the url
//! bench's page links (decorated with uppercase hosts, `:443`, lowercase escapes) the core
//! answers every link (98.3 % before pages with an uppercase host or `:443` were folded);
//! what it still declines is IDNA, IPs, other ports and odd paths. The query is re-encoded against the
//! query table, split on `&`, empty pairs and tracking parameters dropped, and stable-sorted
//! by key when out of order.

/// What canonicalization of one link gave. Offsets are byte offsets, which equal UTF-16
/// offsets because every link answered here is ASCII.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Not a frontier URL (`canonicalize` returns null).
    Null,
    /// Decline: the caller must run the TypeScript path.
    Fallback,
    /// The canonical URL is `raw[..len]` (the whole link, or the link without its fragment or
    /// empty query).
    RawPrefix(usize),
    /// The canonical URL is `base[..base_len] + raw[..raw_len]` (a relative link joined to
    /// the page's scheme or origin, nothing else changed).
    Joined(usize, usize),
    /// The canonical URL is in the output buffer at `[from, to)`.
    Written(usize, usize),
}

/// Longest canonical URL, in bytes (`DEFAULT_MAX_URL_LENGTH`).
pub const MAX_LENGTH: usize = 2048;
/// Longest raw link considered (`maxLength · RAW_LENGTH_FACTOR`); longer ones are declined.
pub const MAX_RAW: usize = MAX_LENGTH * 16;

/// Byte classes for the scanning loops, one table of bit flags; [`run_end`] scans a run of
/// bytes sharing a bit. Bytes ≥ 0x80 have no bit (every loop stops at them and declines).
const PATH_PLAIN: u8 = 1; // a path byte kept as is with nothing to check: PATH_LIT but '.' and ';'
const QUERY_KEPT: u8 = 2; // a query byte WHATWG keeps (fast_canonical declines the others)
const HOST: u8 = 4; // a DNS label byte: [A-Za-z0-9_-]
const HOST_LOWER: u8 = 8; // a DNS label byte WHATWG keeps: HOST but [A-Z]
const PATH_LIT: u8 = 16; // step 7 keeps it literal in a path (RFC 3986 unreserved, sub-delims, ":@/")
const QUERY_LIT: u8 = 32; // step 7 keeps it literal in a query (PATH_LIT and '?')

const fn byte_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let lit = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/";
    let mut i = 0;
    while i < lit.len() {
        let b = lit[i];
        t[b as usize] |= PATH_LIT | QUERY_LIT;
        if b != b'.' && b != b';' {
            t[b as usize] |= PATH_PLAIN;
        }
        i += 1;
    }
    t[b'?' as usize] |= QUERY_LIT;
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        if b > 0x20 && b < 0x7F && b != b'"' && b != b'<' && b != b'>' && b != b'\'' && b != b'#' {
            t[c] |= QUERY_KEPT;
        }
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            t[c] |= HOST;
        }
        if (b.is_ascii_alphanumeric() || b == b'-' || b == b'_') && !b.is_ascii_uppercase() {
            t[c] |= HOST_LOWER;
        }
        c += 1;
    }
    t
}

const BYTE: [u8; 256] = byte_table();

/// End of the run of bytes of `s` from `i` whose class holds `bit` (`s.len()` if it runs to
/// the end): the one scanning loop of the module. (A `simd128` form testing 16 bytes at a
/// time from two nibble tables measured no faster on the url bench's pages: 98–101 ns per
/// link for the whole canonicalizer either way, the runs being short.)
#[inline(always)]
fn run_end(s: &[u8], mut i: usize, bit: u8) -> usize {
    while i < s.len() && BYTE[s[i] as usize] & bit != 0 {
        i += 1;
    }
    i
}

/// Whether `a == b`, eight bytes at a time: slice equality compiles to `memcmp`, which the
/// wasm build runs byte by byte (3.9 % of the link-intake profile before this).
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut wa, mut wb) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut wa).zip(&mut wb) {
        let mut p = [0u8; 8];
        let mut q = [0u8; 8];
        p.copy_from_slice(x);
        q.copy_from_slice(y);
        if u64::from_le_bytes(p) != u64::from_le_bytes(q) {
            return false;
        }
    }
    wa.remainder().iter().zip(wb.remainder()).all(|(x, y)| x == y)
}

#[inline]
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_' || b == b'~'
}

#[inline]
fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Tracking and unambiguous session parameters (the TS `TRACKING_PARAMS`), lowercase.
pub const TRACKING_PARAMS: [&str; 40] = [
    "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "gad_source", "fbclid", "msclkid", "yclid", "twclid", "ttclid",
    "igshid", "li_fat_id", "srsltid", "s_kwcid", "ef_id", "_ga", "_gl", "mc_cid", "mc_eid", "_hsenc", "_hsmi", "__hstc",
    "__hssc", "__hsfp", "hsctatracking", "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id", "vero_conv", "wickedid",
    "rb_clickid", "_openstat", "jsessionid", "phpsessid", "aspsessionid", "cftoken", "zenid", "oscsid",
];

/// Names dropped only when the value is a session token (the TS `AMBIGUOUS_SESSION_PARAMS`).
pub const AMBIGUOUS_SESSION_PARAMS: [&str; 6] = ["sid", "sessid", "sess", "session", "sessionid", "session_id"];

/// Length of the `http://` / `https://` prefix of `s`, or 0 (exact lowercase only).
pub fn scheme_prefix(s: &[u8]) -> usize {
    if has_prefix(s, b"https://") {
        8
    } else if has_prefix(s, b"http://") {
        7
    } else {
        0
    }
}

/// End of a host WHATWG keeps byte for byte, scanning from `auth` (the TS `plainHostEnd`),
/// or `None`: [`folding_host_end`] without uppercase letters. The caller checks the byte
/// after it.
fn plain_host_end(s: &[u8], auth: usize) -> Option<usize> {
    match folding_host_end(s, auth) {
        Some((end, false)) => Some(end),
        _ => None,
    }
}

#[inline]
fn is_dot_segment(seg: &[u8]) -> bool {
    seg == b"." || seg == b".."
}

/// Whether `path` holds a session path parameter the TS path strips (case-insensitive).
fn has_session_path_param(path: &[u8]) -> bool {
    path.iter().enumerate().any(|(i, &c)| {
        c == b';' && {
            let rest = &path[i + 1..];
            starts_with_ci(rest, b"jsessionid=") || starts_with_ci(rest, b"phpsessid=")
        }
    })
}

fn starts_with_ci(s: &[u8], lower: &[u8]) -> bool {
    s.len() >= lower.len() && s.iter().zip(lower).all(|(a, b)| a.to_ascii_lowercase() == *b)
}

/// Step 7 over a component (the TS `normalizeEncoding`, no case fold), appended to `out`:
/// bytes whose class holds `lit` ([`PATH_LIT`] or [`QUERY_LIT`]) kept, `%XY` escapes
/// re-encoded (uppercase hex, unreserved bytes decoded), a bare `%` as `%25`, any other byte
/// escaped. Returns whether anything changed. Input bytes are < 0x7F.
fn normalize(q: &[u8], lit: u8, out: &mut Vec<u8>) -> bool {
    let mut changed = false;
    let mut i = 0;
    while i < q.len() {
        let run = i;
        i = run_end(q, i, lit);
        out.extend_from_slice(&q[run..i]);
        if i == q.len() {
            break;
        }
        let c = q[i];
        if c != b'%' {
            out.extend_from_slice(&[b'%', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]);
            changed = true;
            i += 1;
            continue;
        }
        let h1 = q.get(i + 1).copied().and_then(hex_value);
        let h2 = q.get(i + 2).copied().and_then(hex_value);
        match (h1, h2) {
            (Some(a), Some(b)) => {
                let v = (a << 4) | b;
                if is_unreserved(v) {
                    out.push(v);
                    changed = true;
                } else {
                    let esc = [b'%', HEX[(v >> 4) as usize], HEX[(v & 15) as usize]];
                    changed |= esc[..] != q[i..i + 3];
                    out.extend_from_slice(&esc);
                }
                i += 3;
            }
            _ => {
                out.extend_from_slice(b"%25");
                changed = true;
                i += 1;
            }
        }
    }
    changed
}

/// The cheap half of the TS `looksLikeSessionToken`: 16–256 bytes of `[A-Za-z0-9_-]` with a
/// letter and a digit. When it holds, the entropy test decides, and this module declines.
fn may_be_session_token(v: &[u8]) -> bool {
    if v.len() < 16 || v.len() > 256 {
        return false;
    }
    let (mut letter, mut digit) = (false, false);
    for &c in v {
        if c.is_ascii_digit() {
            digit = true;
        } else if c.is_ascii_alphabetic() {
            letter = true;
        } else if c != b'-' && c != b'_' {
            return false;
        }
    }
    letter && digit
}

/// Names grouped by length (index = length, at most [`LIST_MAX`]): a key is compared only
/// with the names of its own length, a handful instead of all forty.
const LIST_MAX: usize = 16;
type ByLen = [[&'static str; 16]; LIST_MAX + 1];

const fn by_len<const N: usize>(names: [&'static str; N]) -> ByLen {
    let mut t: ByLen = [[""; 16]; LIST_MAX + 1];
    let mut fill = [0usize; LIST_MAX + 1];
    let mut i = 0;
    while i < N {
        let l = names[i].len();
        t[l][fill[l]] = names[i]; // a list outgrowing the table fails the const evaluation
        fill[l] += 1;
        i += 1;
    }
    t
}

const TRACKING_BY_LEN: ByLen = by_len(TRACKING_PARAMS);
const SESSION_BY_LEN: ByLen = by_len(AMBIGUOUS_SESSION_PARAMS);

/// Whether the lowercase key `lk` is one of the names in `table`.
#[inline]
fn listed(table: &ByLen, lk: &[u8]) -> bool {
    lk.len() <= LIST_MAX && lk.len() > 0 && table[lk.len()].iter().take_while(|p| !p.is_empty()).any(|p| same_bytes(p.as_bytes(), lk))
}

/// Whether the global deny-list drops a pair with key `key` (any case); `None` to decline.
fn denied(key: &[u8], value: Option<&[u8]>) -> Option<bool> {
    // Apache directory listings' sort links (`C=N;O=D`) are the TS path's rule alone: it reads
    // the path too. Declining every pair keyed `C` keeps the rule in one place.
    if key == b"C" {
        return None;
    }
    let mut buf = [0u8; 32];
    if key.len() > buf.len() {
        return Some(false); // longer than every listed name
    }
    let lk = &mut buf[..key.len()];
    for (d, s) in lk.iter_mut().zip(key) {
        *d = s.to_ascii_lowercase();
    }
    let lk: &[u8] = lk;
    if has_prefix(lk, b"utm_") || listed(&TRACKING_BY_LEN, lk) {
        return Some(true);
    }
    if listed(&SESSION_BY_LEN, lk) && value.map_or(false, may_be_session_token) {
        return None;
    }
    Some(false)
}

/// `s.starts_with(prefix)` through [`same_bytes`].
#[inline]
fn has_prefix(s: &[u8], prefix: &[u8]) -> bool {
    s.len() >= prefix.len() && same_bytes(&s[..prefix.len()], prefix)
}

/// Byte order of two query keys (the TS code-unit order for ASCII), compared in a loop:
/// keys are short, and slice ordering would call the wasm build's byte-wise `memcmp`.
#[inline]
fn key_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// Steps 7, 9 and 10 over a query without its `?` (the TS `canonicalQuery`, default policy):
/// writes the canonical query to `out` and returns `Some(true)` when it differs from `search`,
/// `Some(false)` when it is `search` itself (nothing written), `None` to decline.
fn canonical_query(search: &[u8], out: &mut Vec<u8>, scratch: &mut Vec<u8>, pairs: &mut Vec<(usize, usize, usize)>) -> Option<bool> {
    // Most queries need no re-encoding: then step 7 is the identity and `search` is used as is.
    let (mut changed, q): (bool, &[u8]) = if run_end(search, 0, QUERY_LIT) == search.len() {
        (false, search)
    } else {
        scratch.clear();
        (normalize(search, QUERY_LIT, scratch), &scratch[..])
    };
    pairs.clear();
    let mut sorted = true;
    let mut start = 0;
    loop {
        let amp = q[start..].iter().position(|&c| c == b'&').map_or(q.len(), |p| start + p);
        if amp == start {
            changed = true;
        } else {
            let pair = &q[start..amp];
            let eq = pair.iter().position(|&c| c == b'=');
            let key_end = eq.unwrap_or(pair.len());
            if denied(&pair[..key_end], eq.map(|e| &pair[e + 1..]))? {
                changed = true;
            } else {
                if let Some(&(ps, _, pk)) = pairs.last() {
                    if key_order(&pair[..key_end], &q[ps..ps + pk]).is_lt() {
                        sorted = false;
                    }
                }
                pairs.push((start, amp, key_end));
            }
        }
        if amp >= q.len() {
            break;
        }
        start = amp + 1;
    }
    if !changed && sorted {
        return Some(false);
    }
    if !sorted {
        // Stable by key bytes (ASCII: the TS code-unit order).
        pairs.sort_by(|a, b| key_order(&q[a.0..a.0 + a.2], &q[b.0..b.0 + b.2]));
    }
    for (j, &(s, e, _)) in pairs.iter().enumerate() {
        if j > 0 {
            out.push(b'&');
        }
        out.extend_from_slice(&q[s..e]);
    }
    Some(true)
}

/// Reusable buffers for [`canonicalize`].
#[derive(Default)]
pub struct Scratch {
    path: Vec<u8>,
    query: Vec<u8>,
    norm: Vec<u8>,
    pairs: Vec<(usize, usize, usize)>,
    joined: Vec<u8>,
    /// The page URL as WHATWG parses it, when [`fold_base`] rewrote it.
    base: Vec<u8>,
}

impl Scratch {
    /// Releases any buffer an outsized link grew past [`SCRATCH_KEEP`] bytes.
    pub fn trim(&mut self) {
        for v in [&mut self.path, &mut self.query, &mut self.norm, &mut self.joined, &mut self.base] {
            if v.capacity() > SCRATCH_KEEP {
                *v = Vec::new();
            }
        }
        if self.pairs.capacity() * std::mem::size_of::<(usize, usize, usize)>() > SCRATCH_KEEP {
            self.pairs = Vec::new();
        }
    }
}

/// End of a DNS host like [`plain_host_end`]'s, but also accepting uppercase ASCII letters,
/// which WHATWG lowercases (the `xn--` check is then case-insensitive, as WHATWG lowercases
/// before validating punycode). Returns the end and whether any letter was uppercase.
fn folding_host_end(s: &[u8], auth: usize) -> Option<(usize, bool)> {
    let mut i = auth;
    let mut upper = false;
    let mut label;
    loop {
        let start = i;
        if s.get(i).map_or(false, |&c| c | 0x20 == b'x') && starts_with_ci(&s[i..], b"xn--") {
            return None;
        }
        // The label's bytes: a run WHATWG keeps, then (rarely) the rest with uppercase letters.
        let kept = run_end(s, start, HOST_LOWER);
        i = run_end(s, kept, HOST);
        upper |= i > kept;
        label = i - start;
        if label > 63 {
            return None;
        }
        if label == 0 || s.get(i) != Some(&b'.') {
            break;
        }
        i += 1;
    }
    if label == 0 || i - auth > 253 || s[i - label].is_ascii_digit() {
        return None;
    }
    Some((i, upper))
}

/// The TS `fastCanonical` over an absolute link `raw` (scheme prefix of length `auth`),
/// widened to three things the TS path sends through WHATWG and then normalizes, which the
/// bytes determine without a parser: uppercase host letters (lowercased), the scheme's
/// default port (`:443` / `:80`, dropped; any other port declines) and path escapes that are
/// lowercase, of unreserved bytes or bare `%` (re-encoded by step 7; `%2e` declines, as WHATWG
/// reads it as a dot). `None` when it declines. A result written to `out` is appended.
fn fast_canonical(raw: &[u8], auth: usize, out: &mut Vec<u8>, sc: &mut Scratch) -> Option<Outcome> {
    let (host_end, upper) = folding_host_end(raw, auth)?;
    after_host(raw, auth, host_end, upper, out, sc)
}

/// [`fast_canonical`] past the host: `raw[auth..host_end]` is a host [`folding_host_end`]
/// accepted (`upper`: it holds uppercase letters). A link joined to a page's plain origin
/// starts here, its host checked once per page.
fn after_host(raw: &[u8], auth: usize, host_end: usize, upper: bool, out: &mut Vec<u8>, sc: &mut Scratch) -> Option<Outcome> {
    let n = raw.len();
    let mut path_start = host_end;
    if raw.get(host_end) == Some(&b':') {
        let default: &[u8] = if auth == 8 { b"443" } else { b"80" };
        let p = host_end + 1;
        if !(has_prefix(&raw[p..], default) && raw.get(p + default.len()) == Some(&b'/')) {
            return None;
        }
        path_start = p + default.len();
    }
    if raw.get(path_start) != Some(&b'/') {
        return None;
    }
    let mut i = path_start + 1;
    let mut norm_path = false;
    let mut semi = false;
    loop {
        // The run of path bytes that need no look (most of a path), then the one that does.
        i = run_end(raw, i, PATH_PLAIN);
        if i == n {
            break;
        }
        match raw[i] {
            // A dot segment ("." or ".."): its first dot follows a '/'.
            b'.' if raw[i - 1] == b'/' => {
                let j = if raw.get(i + 1) == Some(&b'.') { i + 2 } else { i + 1 };
                if matches!(raw.get(j), None | Some(b'/') | Some(b'?') | Some(b'#')) {
                    return None;
                }
            }
            b'.' => {}
            b';' => semi = true,
            b'%' => {
                if starts_with_ci(&raw[i + 1..], b"2e") {
                    return None;
                }
                match (raw.get(i + 1).copied().and_then(hex_value), raw.get(i + 2).copied().and_then(hex_value)) {
                    (Some(a), Some(b)) => {
                        let v = (a << 4) | b;
                        norm_path |= is_unreserved(v) || raw[i + 1] >= 97 || raw[i + 2] >= 97;
                        i += 2;
                    }
                    _ => norm_path = true, // a bare '%' becomes %25
                }
            }
            b'?' | b'#' => break,
            _ => return None, // step 7 would escape it, or not ASCII
        }
        i += 1;
    }
    let path_end = i;
    let mut query_end = path_end;
    if raw.get(path_end) == Some(&b'?') {
        i = run_end(raw, path_end + 1, QUERY_KEPT);
        if i < n && raw[i] != b'#' {
            return None;
        }
        query_end = i;
    }
    let Scratch { query, norm, pairs, path, .. } = sc;
    let path: &[u8] = if norm_path {
        path.clear();
        normalize(&raw[path_start..path_end], PATH_LIT, path);
        path
    } else {
        &raw[path_start..path_end]
    };
    if semi && has_session_path_param(path) {
        return None;
    }
    let search = if query_end > path_end + 1 { &raw[path_end + 1..query_end] } else { &[][..] };
    query.clear();
    let query_changed = if search.is_empty() { false } else { canonical_query(search, query, norm, pairs)? };
    let query_empty = if query_changed { query.is_empty() } else { search.is_empty() };
    if !query_changed && !upper && !norm_path && path_start == host_end {
        let len = if query_end == n && !query_empty {
            n
        } else if query_empty {
            path_end
        } else {
            query_end
        };
        return Some(if len > MAX_LENGTH { Outcome::Null } else { Outcome::RawPrefix(len) });
    }
    let from = out.len();
    out.extend_from_slice(&raw[..auth]);
    out.extend(raw[auth..host_end].iter().map(u8::to_ascii_lowercase));
    out.extend_from_slice(path);
    let q: &[u8] = if query_changed { query } else { search };
    if !q.is_empty() {
        out.push(b'?');
        out.extend_from_slice(q);
    }
    let to = out.len();
    if to - from > MAX_LENGTH {
        out.truncate(from);
        return Some(Outcome::Null);
    }
    Some(Outcome::Written(from, to))
}

/// `scheme://host` length of a base whose authority WHATWG keeps unchanged (the TS
/// `plainOrigin`), or `None`.
pub fn plain_origin(base: &[u8]) -> Option<usize> {
    let auth = scheme_prefix(base);
    if auth == 0 {
        return None;
    }
    let end = plain_host_end(base, auth)?;
    match base.get(end) {
        None | Some(b'/') | Some(b'?') | Some(b'#') => Some(end),
        _ => None,
    }
}

/// When WHATWG's parse of the page URL `base` changes its authority only by lowercasing the
/// host's letters and dropping the scheme's default port (`https://News.Example.COM:443/a`),
/// writes that parsed form to `buf` and returns true; relative links then resolve against it
/// as against a plain page URL. False (nothing usable in `buf`) for any other authority:
/// ports other than the default, userinfo, IP literals and IDNA stay declined.
pub fn fold_base(base: &[u8], buf: &mut Vec<u8>) -> bool {
    let auth = scheme_prefix(base);
    if auth == 0 {
        return false;
    }
    let end = match folding_host_end(base, auth) {
        Some((end, _)) => end,
        None => return false,
    };
    let mut rest = end;
    if base.get(end) == Some(&b':') {
        let default: &[u8] = if auth == 8 { b"443" } else { b"80" };
        if !has_prefix(&base[end + 1..], default) {
            return false;
        }
        rest = end + 1 + default.len();
    }
    if !matches!(base.get(rest), None | Some(b'/') | Some(b'?') | Some(b'#')) {
        return false;
    }
    buf.clear();
    buf.extend_from_slice(&base[..auth]);
    buf.extend(base[auth..end].iter().map(u8::to_ascii_lowercase));
    buf.extend_from_slice(&base[rest..]);
    true
}

/// Whether every byte of `s` is below 0x80, eight at a time.
#[inline]
fn is_ascii(s: &[u8]) -> bool {
    let mut words = s.chunks_exact(8);
    let mut high = 0u64;
    for w in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        high |= u64::from_le_bytes(word);
    }
    high & 0x8080_8080_8080_8080 == 0 && words.remainder().iter().all(|&b| b < 0x80)
}

/// What [`canonicalize`] needs of the page URL, worked out once per page.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    /// The page URL.
    pub base: &'a [u8],
    /// `plain_origin(base)`: `None` declines every link that is not absolute.
    origin: Option<usize>,
    /// Whether relative-path links may be resolved here (no byte WHATWG strips or rewrites).
    rel_ok: bool,
    /// End of the page's path (its `?` or `#`, or the end).
    path_end: usize,
    /// End of the page's directory (just past the last `/` of its path), 0 when the path is empty.
    dir_end: usize,
    /// Whether the directory holds a `.` or `..` segment (then [`push_without_dot_segments`]
    /// removes them along with the link's).
    dir_dots: bool,
}

impl<'a> Page<'a> {
    /// Inspects the page URL `base`.
    pub fn new(base: &'a [u8]) -> Page<'a> {
        let origin = plain_origin(base);
        let o = origin.unwrap_or(0);
        let path_end = base[o..].iter().position(|&c| c == b'?' || c == b'#').map_or(base.len(), |p| o + p);
        let dir_end = base[o..path_end].iter().rposition(|&c| c == b'/').map_or(0, |p| o + p + 1);
        let dir_dots = dir_end > o + 1 && base[o + 1..dir_end - 1].split(|&c| c == b'/').any(is_dot_segment);
        // A page path ending in a dot segment ("/a/b/..") is a directory WHATWG works out
        // from the parsed path, not the raw one: decline those pages' relative links.
        let last_dots = is_dot_segment(&base[dir_end.max(o)..path_end]);
        let rel_ok = origin.is_some() && !last_dots && !base.iter().any(odd_for_relative) && !contains_dot_escape(base);
        Page { base, origin, rel_ok, path_end, dir_end, dir_dots }
    }
}

/// Bytes WHATWG strips, trims or reads as `/`, which would change which segments `..` removes
/// before [`fast_canonical`] could see them.
#[inline]
fn odd_for_relative(c: &u8) -> bool {
    *c <= 0x20 || *c >= 0x7F || *c == b'\\'
}

/// Canonicalizes `raw` found on the page `page` (`None` when absent or unusable); see the
/// module documentation. A result written to `out` is appended at its end.
pub fn canonicalize(raw: &[u8], page: Option<&Page>, out: &mut Vec<u8>, sc: &mut Scratch) -> Outcome {
    if raw.len() > MAX_RAW || !is_ascii(raw) {
        return Outcome::Fallback;
    }
    let auth = scheme_prefix(raw);
    if auth != 0 {
        return fast_canonical(raw, auth, out, sc).unwrap_or(Outcome::Fallback);
    }
    let (page, origin) = match page {
        Some(p @ Page { origin: Some(o), .. }) => (p, *o),
        _ => return Outcome::Fallback,
    };
    let base = page.base;
    if raw.first() != Some(&b'/') {
        return relative_path(raw, page, out, sc).unwrap_or(Outcome::Fallback);
    }
    // The TS `fastRelative`: join to the base's scheme (`//host/…`) or origin (`/path`).
    let scheme_end = if base[4] == b's' { 6 } else { 5 };
    let scheme_relative = raw.get(1) == Some(&b'/');
    let prefix = if scheme_relative { scheme_end } else { origin };
    let mut joined = std::mem::take(&mut sc.joined);
    joined.clear();
    joined.extend_from_slice(&base[..prefix]);
    joined.extend_from_slice(raw);
    let got = if scheme_relative {
        fast_canonical(&joined, scheme_end + 2, out, sc)
    } else {
        // The page's plain origin: a lowercase DNS host, already checked.
        after_host(&joined, scheme_end + 2, origin, false, out, sc)
    };
    sc.joined = joined;
    match got {
        None => Outcome::Fallback,
        Some(Outcome::RawPrefix(len)) => Outcome::Joined(prefix, len - prefix),
        Some(other) => other,
    }
}

/// A relative-path link (`x/y`, `../x`, `?q`) against a plain page URL, resolved the way
/// WHATWG resolves it when nothing about either is unusual: the page's directory (its path
/// up to the last `/`; the whole path for `?q`) joined with the link, then `.`/`..`
/// segments removed (a `..` at the root stays there; a final `.` or `..` leaves a trailing
/// `/`). The joined URL then goes through [`fast_canonical`], which declines anything WHATWG
/// would still change. Declined here: an empty link or a fragment-only one, a `:` before the
/// first `/` (a scheme), `%2e` anywhere (WHATWG reads it as a dot), and a page URL with
/// bytes WHATWG strips or rewrites (controls, spaces, `\`, `%2e`).
fn relative_path(raw: &[u8], page: &Page, out: &mut Vec<u8>, sc: &mut Scratch) -> Option<Outcome> {
    let first = *raw.first()?;
    if first == b'#' || !page.rel_ok {
        return None;
    }
    let part_end = raw.iter().position(|&c| c == b'?' || c == b'#').unwrap_or(raw.len());
    if raw.iter().any(odd_for_relative) || raw[..part_end].iter().take_while(|&&c| c != b'/').any(|&c| c == b':') || contains_dot_escape(raw) {
        return None;
    }
    let (base, origin) = (page.base, page.origin?);
    let mut joined = std::mem::take(&mut sc.joined);
    joined.clear();
    joined.extend_from_slice(&base[..origin]);
    if first == b'?' {
        // The page's own path (fast_canonical declines it if it holds dot segments).
        joined.extend_from_slice(if page.path_end == origin { b"/" } else { &base[origin..page.path_end] });
    } else if page.dir_end == 0 {
        push_without_dot_segments(&mut joined, b"/", &raw[..part_end]);
    } else if page.dir_dots {
        push_without_dot_segments(&mut joined, &base[origin..page.dir_end], &raw[..part_end]);
    } else {
        joined.extend_from_slice(&base[origin..page.dir_end]);
        push_relative(&mut joined, origin, &raw[..part_end]);
    }
    joined.extend_from_slice(&raw[part_end..]);
    // The page's plain origin: a lowercase DNS host, already checked.
    let got = after_host(&joined, scheme_prefix(&joined), origin, false, out, sc);
    let got = match got {
        Some(Outcome::RawPrefix(len)) => {
            let from = out.len();
            out.extend_from_slice(&joined[..len]);
            Some(Outcome::Written(from, out.len()))
        }
        other => other,
    };
    sc.joined = joined;
    got
}

/// Appends the relative path `rel` to `out`, which holds an origin (`out[..path]`) and a
/// directory free of dot segments ending in `/`, removing `rel`'s `.` and `..` segments as
/// [`push_without_dot_segments`] does, in place: `..` drops the last directory (never the
/// root's `/`), and a final `.` or `..` leaves the trailing `/`.
fn push_relative(out: &mut Vec<u8>, path: usize, rel: &[u8]) {
    let mut segs = rel.split(|&c| c == b'/').peekable();
    while let Some(seg) = segs.next() {
        let last = segs.peek().is_none();
        if seg == b".." {
            // `out` ends with '/': cut back to the '/' before the last segment.
            let end = out.len() - 1;
            if let Some(p) = out[path..end].iter().rposition(|&c| c == b'/') {
                out.truncate(path + p + 1);
            }
        } else if seg != b"." {
            out.extend_from_slice(seg);
            if !last {
                out.push(b'/');
            }
        }
    }
}

fn contains_dot_escape(s: &[u8]) -> bool {
    s.windows(3).any(|w| w[0] == b'%' && w[1] == b'2' && (w[2] == b'e' || w[2] == b'E'))
}

/// Appends the path `dir ‖ rel` (`dir` starts with `/`) with `.` and `..` segments removed,
/// WHATWG's way: `..` pops a segment (never the root), and a final `.` or `..` leaves an
/// empty last segment (a trailing `/`).
fn push_without_dot_segments(out: &mut Vec<u8>, dir: &[u8], rel: &[u8]) {
    let start = out.len();
    let mut segs: Vec<(usize, usize, bool)> = Vec::new(); // (from, to, in rel)
    let push_segments = |s: &[u8], in_rel: bool, segs: &mut Vec<(usize, usize, bool)>| {
        let mut from = 0;
        for i in 0..=s.len() {
            if i == s.len() || s[i] == b'/' {
                segs.push((from, i, in_rel));
                from = i + 1;
            }
        }
    };
    // `dir` is "/a/b/": its segments are "a", "b" (the empty one before the first '/' and
    // after the last are not segments of the result).
    if dir.len() > 1 {
        push_segments(&dir[1..dir.len() - 1], false, &mut segs);
    }
    push_segments(rel, true, &mut segs);
    let mut keep: Vec<(usize, usize, bool)> = Vec::with_capacity(segs.len());
    let last = segs.len() - 1;
    for (j, &(f, t, in_rel)) in segs.iter().enumerate() {
        let seg = if in_rel { &rel[f..t] } else { &dir[1 + f..1 + t] };
        if seg == b".." {
            keep.pop();
            if j == last {
                keep.push((0, 0, true));
            }
        } else if seg == b"." {
            if j == last {
                keep.push((0, 0, true));
            }
        } else {
            keep.push((f, t, in_rel));
        }
    }
    for &(f, t, in_rel) in &keep {
        out.push(b'/');
        out.extend_from_slice(if in_rel { &rel[f..t] } else { &dir[1 + f..1 + t] });
    }
    if out.len() == start {
        out.push(b'/');
    }
}

/// Result kinds written by [`canonicalize_batch`], three u32 lanes per link `[kind, a, b]`.
pub mod kind {
    /// Not a frontier URL.
    pub const NULL: u32 = 0;
    /// Declined: run the TypeScript path.
    pub const FALLBACK: u32 = 1;
    /// `raw[..a]`.
    pub const RAW_PREFIX: u32 = 2;
    /// `base[..a] + raw[..b]`.
    pub const JOINED: u32 = 3;
    /// `arena[a..b]`.
    pub const WRITTEN: u32 = 4;
}

/// Canonicalizes the links of one page: link `i` is `data[offsets[i]..offsets[i+1]]`, `base`
/// the page URL (`None` when absent). Writes `[kind, a, b]` per link to `lanes` (see
/// [`kind`]) and rewritten URLs back to back into `arena`; a link whose rewrite does not fit
/// in what is left of `arena` is declined. Returns the arena bytes used.
pub fn canonicalize_batch(base: Option<&[u8]>, data: &[u8], offsets: &[u32], lanes: &mut [u32], arena: &mut [u8]) -> usize {
    BATCH_SCRATCH.with(|cell| {
        let (sc, out) = &mut *cell.borrow_mut();
        let used = batch_in(sc, out, base, data, offsets, lanes, arena);
        sc.trim();
        if out.capacity() > SCRATCH_KEEP {
            *out = Vec::new();
        }
        used
    })
}

thread_local! {
    /// [`canonicalize_batch`]'s buffers, reused from page to page (the wasm build has one
    /// thread): once grown to a page's size, a page allocates nothing. They hold no state
    /// between calls, only capacity.
    static BATCH_SCRATCH: std::cell::RefCell<(Scratch, Vec<u8>)> = std::cell::RefCell::new(Default::default());
}

/// Capacity a reused buffer keeps between pages; a larger one (an outsized page) is released.
pub const SCRATCH_KEEP: usize = 1 << 20;

fn batch_in(sc: &mut Scratch, out: &mut Vec<u8>, base: Option<&[u8]>, data: &[u8], offsets: &[u32], lanes: &mut [u32], arena: &mut [u8]) -> usize {
    let count = offsets.len() - 1;
    assert_eq!(lanes.len(), count * 3, "canonicalize_batch: three lanes per link");
    // A page URL whose host WHATWG lowercases or whose default port it drops: relative links
    // resolve against the parsed form, which the caller does not hold, so joined results are
    // written out in full.
    let mut parsed = std::mem::take(&mut sc.base);
    let folded = matches!(base, Some(b) if plain_origin(b).is_none() && fold_base(b, &mut parsed));
    let page = if folded { Some(Page::new(&parsed)) } else { base.map(Page::new) };
    let mut used = 0usize;
    for i in 0..count {
        let raw = &data[offsets[i] as usize..offsets[i + 1] as usize];
        out.clear();
        let got = match canonicalize(raw, page.as_ref(), out, sc) {
            Outcome::Joined(p, r) if folded => {
                let from = out.len();
                out.extend_from_slice(&parsed[..p]);
                out.extend_from_slice(&raw[..r]);
                Outcome::Written(from, out.len())
            }
            other => other,
        };
        let (k, a, b) = match got {
            Outcome::Null => (kind::NULL, 0, 0),
            Outcome::Fallback => (kind::FALLBACK, 0, 0),
            Outcome::RawPrefix(len) => (kind::RAW_PREFIX, len, 0),
            Outcome::Joined(p, r) => (kind::JOINED, p, r),
            Outcome::Written(f, t) => {
                let len = t - f;
                if used + len > arena.len() {
                    (kind::FALLBACK, 0, 0)
                } else {
                    arena[used..used + len].copy_from_slice(&out[f..t]);
                    used += len;
                    (kind::WRITTEN, used - len, used)
                }
            }
        };
        lanes[3 * i] = k;
        lanes[3 * i + 1] = a as u32;
        lanes[3 * i + 2] = b as u32;
    }
    sc.base = parsed;
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(raw: &str, base: Option<&str>) -> Option<Option<String>> {
        let mut out = Vec::new();
        let mut sc = Scratch::default();
        let b = base.map(str::as_bytes);
        let page = b.map(Page::new);
        match canonicalize(raw.as_bytes(), page.as_ref(), &mut out, &mut sc) {
            Outcome::Fallback => None,
            Outcome::Null => Some(None),
            Outcome::RawPrefix(len) => Some(Some(raw[..len].to_string())),
            Outcome::Joined(p, r) => Some(Some(format!("{}{}", &base.unwrap()[..p], &raw[..r]))),
            Outcome::Written(f, t) => Some(Some(String::from_utf8(out[f..t].to_vec()).unwrap())),
        }
    }

    fn ok(raw: &str, base: Option<&str>, want: &str) {
        assert_eq!(canon(raw, base), Some(Some(want.to_string())), "{} on {:?}", raw, base);
    }

    #[test]
    fn plain_links_pass_through() {
        ok("https://example.com/a/b", None, "https://example.com/a/b");
        ok("http://example.com/", None, "http://example.com/");
        ok("https://example.com/a#frag", None, "https://example.com/a");
        ok("https://example.com/a?", None, "https://example.com/a");
        ok("https://example.com/a?b=1&a=2#x", None, "https://example.com/a?a=2&b=1");
        ok("https://example.com/a?utm_source=x&id=3", None, "https://example.com/a?id=3");
        ok("https://example.com/a?x=%7e%41%2f%zz", None, "https://example.com/a?x=~A%2F%25zz");
        ok("https://example.com/a?&&b&", None, "https://example.com/a?b");
        ok("https://example.com/a?b=[1]", None, "https://example.com/a?b=%5B1%5D");
    }

    #[test]
    fn relative_links_join_the_page() {
        let page = Some("https://www.example.com/dir/page?q=1#top");
        ok("/x/y?z=1", page, "https://www.example.com/x/y?z=1");
        ok("//cdn.example.net/lib.js", page, "https://cdn.example.net/lib.js");
        ok("/x?gclid=abc", page, "https://www.example.com/x");
        ok("x/y", page, "https://www.example.com/dir/x/y");
        ok("../x?b=1&a=2", page, "https://www.example.com/x?a=2&b=1");
        ok("../../../x", page, "https://www.example.com/x");
        ok("./", page, "https://www.example.com/dir/");
        ok("a/..", page, "https://www.example.com/dir/");
        ok("?q=2", page, "https://www.example.com/dir/page?q=2");
        ok("x", Some("https://e.com"), "https://e.com/x");
        ok("x", Some("https://e.com/a/b/../c/"), "https://e.com/a/c/x");
        assert_eq!(canon("x", Some("https://e.com/a/b/..")), None, "the page's directory is /a/, which the raw path does not show");
        assert_eq!(canon("x", Some("https://e.com/a/..?q")), None);
        assert_eq!(canon("/x/../y", page), None);
        assert_eq!(canon("mailto:x", page), None);
        assert_eq!(canon("%2e%2e/x", page), None);
        assert_eq!(canon("#top", page), None);
        assert_eq!(canon("", page), None);
        assert_eq!(canon("x y", page), None);
        assert_eq!(canon(" /..", page), None);
        assert_eq!(canon("a\\..", page), None);
        assert_eq!(canon("/x", Some("https://EXAMPLE.com/")), None);
    }

    #[test]
    fn declines_what_the_ts_fast_path_declines() {
        for raw in [
            "HTTPS://example.com/",
            "https://example.com",
            "https://example.com:8080/",
            "https://example.com:0443/",
            "https://XN--bcher-kva.example/",
            "https://user@example.com/",
            "https://xn--bcher-kva.example/",
            "https://127.0.0.1/",
            "https://example.com/a b",
            "https://example.com/a/./b",
            "https://example.com/%2e/",
            "https://example.com/a%2E",
            "https://example.com/é",
            "https://example.com/a\\b",
            "https://example.com/cart;JSESSIONID=1",
            "https://example.com/?sid=a1b2c3d4e5f6a7b8c9",
            "mailto:x@example.com",
        ] {
            assert_eq!(canon(raw, None), None, "{}", raw);
        }
        ok("https://example.com/?sid=story42", None, "https://example.com/?sid=story42");
        ok("https://Example.COM:443/%7euser/caf%c3%a9%", None, "https://example.com/~user/caf%C3%A9%25");
        ok("http://e.com:80/a", None, "http://e.com/a");
        assert_eq!(canon("http://e.com:443/a", None), None);
        assert_eq!(canon("https://e.com/%6Asessionid", None).is_some(), true);
        assert_eq!(canon("https://e.com/a;%6Asessionid=1", None), None);
    }

    /// Canonicalizes `links` on `page` through [`canonicalize_batch`]; `None` for a declined link.
    fn batch(page: &str, links: &[&str]) -> Vec<Option<Option<String>>> {
        let mut data = Vec::new();
        let mut offs = vec![0u32];
        for l in links {
            data.extend_from_slice(l.as_bytes());
            offs.push(data.len() as u32);
        }
        let mut lanes = vec![0u32; 3 * links.len()];
        let mut arena = vec![0u8; 4096];
        canonicalize_batch(Some(page.as_bytes()), &data, &offs, &mut lanes, &mut arena);
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
        (0..links.len())
            .map(|i| {
                let (a, b) = (lanes[3 * i + 1] as usize, lanes[3 * i + 2] as usize);
                let raw = links[i].as_bytes();
                match lanes[3 * i] {
                    kind::FALLBACK => None,
                    kind::NULL => Some(None),
                    kind::RAW_PREFIX => Some(Some(text(&raw[..a]))),
                    kind::JOINED => Some(Some(text(&page.as_bytes()[..a]) + &text(&raw[..b]))),
                    _ => Some(Some(text(&arena[a..b]))),
                }
            })
            .collect()
    }

    #[test]
    fn relative_links_resolve_against_the_parsed_page_url() {
        let some = |s: &str| Some(Some(s.to_string()));
        let links = ["/x?b=1&a=2", "y", "../z", "?q", "//cdn.e.net/j", "https://f.org/"];
        let want = [
            some("https://news.e.com/x?a=2&b=1"),
            some("https://news.e.com/s/y"),
            some("https://news.e.com/z"),
            some("https://news.e.com/s/p?q"),
            some("https://cdn.e.net/j"),
            some("https://f.org/"),
        ];
        for page in ["https://NEWS.E.com:443/s/p", "https://News.e.com/s/p#top", "https://news.e.com:443/s/p"] {
            assert_eq!(batch(page, &links), want, "{}", page);
        }
        assert_eq!(batch("http://E.com:80", &["a"]), [some("http://e.com/a")]);
        // Other authorities stay declined: another port, the wrong default, userinfo, IDNA.
        for page in ["https://E.com:8443/s/p", "https://E.com:80/s/p", "https://u@E.com/s/p", "https://XN--bcher-kva.de/", "https://E.com:/p"] {
            assert_eq!(batch(page, &["/x", "y"]), [None, None], "{}", page);
        }
    }

    #[test]
    fn word_compares_agree_with_slice_compares() {
        let a: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for len in 0..a.len() {
            let x = &a[..len];
            assert!(same_bytes(x, x));
            assert!(!same_bytes(x, &a[..len + 1]));
            for at in 0..len {
                let mut y = x.to_vec();
                y[at] ^= 1;
                assert!(!same_bytes(x, &y), "len {} differing at {}", len, at);
                assert_eq!(key_order(x, &y), x.cmp(&y[..]));
                assert_eq!(key_order(&y, x), y[..].cmp(x));
            }
            assert_eq!(key_order(x, &a[..len + 1]), std::cmp::Ordering::Less);
        }
    }

    #[test]
    fn length_limits() {
        let long = format!("https://example.com/{}", "a".repeat(MAX_LENGTH));
        assert_eq!(canon(&long, None), Some(None));
        let tracked = format!("https://example.com/{}?utm_x={}", "a".repeat(MAX_LENGTH - 40), "b".repeat(100));
        ok(&tracked, None, &tracked[..tracked.find('?').unwrap()]);
        assert_eq!(canon(&format!("https://example.com/{}", "a".repeat(MAX_RAW)), None), None);
    }
}
