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
//! checks). It declines everything else the TypeScript fast paths decline, and also:
//! - any byte ≥ 0x80 in the link (UTF-16 and UTF-8 lengths differ; IDNA and escaping rules),
//!   and links longer than the raw-length cap (the TS path answers null for those);
//! - a path holding `;jsessionid=` or `;phpsessid=` (the TS path strips them with a regular
//!   expression and may then remove dot segments);
//! - a query pair whose key is an ambiguous session name (`sid`, `session`, …) and whose value
//!   passes the cheap token checks: the TS path then decides with a floating-point entropy
//!   whose last bit this module does not promise to reproduce.
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
//! answers 98.3 % of links; the rest are relative to odd pages, IDNA, IPs or other ports. The query is re-encoded against the
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

const LIT: u8 = 0;
const ENC: u8 = 1;
const PCT: u8 = 2;

/// Step 7's classes: 0 literal, 1 must be encoded, 2 `%`. `query` also keeps `?` literal.
const fn class_table(query: bool) -> [u8; 128] {
    let mut t = [ENC; 128];
    let lit = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/";
    let mut i = 0;
    while i < lit.len() {
        t[lit[i] as usize] = LIT;
        i += 1;
    }
    if query {
        t[b'?' as usize] = LIT;
    }
    t[b'%' as usize] = PCT;
    t
}

const PATH_CLASS: [u8; 128] = class_table(false);
const QUERY_CLASS: [u8; 128] = class_table(true);

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
    if s.starts_with(b"https://") {
        8
    } else if s.starts_with(b"http://") {
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

/// Step 7 over a component (the TS `normalizeEncoding` with `class`, no case fold), appended
/// to `out`. Returns whether anything changed. Input bytes are < 0x7F.
fn normalize(q: &[u8], class: &[u8; 128], out: &mut Vec<u8>) -> bool {
    let mut changed = false;
    let mut i = 0;
    while i < q.len() {
        let c = q[i];
        match class[c as usize] {
            LIT => {
                out.push(c);
                i += 1;
            }
            ENC => {
                out.extend_from_slice(&[b'%', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]);
                changed = true;
                i += 1;
            }
            _ => {
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

/// Whether the global deny-list drops a pair with key `key` (any case); `None` to decline.
fn denied(key: &[u8], value: Option<&[u8]>) -> Option<bool> {
    let mut buf = [0u8; 32];
    if key.len() > buf.len() {
        return Some(false); // longer than every listed name
    }
    let lk = &mut buf[..key.len()];
    for (d, s) in lk.iter_mut().zip(key) {
        *d = s.to_ascii_lowercase();
    }
    let lk: &[u8] = lk;
    if lk.starts_with(b"utm_") || TRACKING_PARAMS.iter().any(|p| p.as_bytes() == lk) {
        return Some(true);
    }
    if AMBIGUOUS_SESSION_PARAMS.iter().any(|p| p.as_bytes() == lk) && value.map_or(false, may_be_session_token) {
        return None;
    }
    Some(false)
}

/// Steps 7, 9 and 10 over a query without its `?` (the TS `canonicalQuery`, default policy):
/// writes the canonical query to `out` and returns `Some(true)` when it differs from `search`,
/// `Some(false)` when it is `search` itself (nothing written), `None` to decline.
fn canonical_query(search: &[u8], out: &mut Vec<u8>, scratch: &mut Vec<u8>, pairs: &mut Vec<(usize, usize, usize)>) -> Option<bool> {
    scratch.clear();
    let mut changed = normalize(search, &QUERY_CLASS, scratch);
    let q: &[u8] = scratch;
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
                    if pair[..key_end] < q[ps..ps + pk] {
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
        pairs.sort_by(|a, b| q[a.0..a.0 + a.2].cmp(&q[b.0..b.0 + b.2]));
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
}

/// End of a DNS host like [`plain_host_end`]'s, but also accepting uppercase ASCII letters,
/// which WHATWG lowercases (the `xn--` check is then case-insensitive, as WHATWG lowercases
/// before validating punycode). Returns the end and whether any letter was uppercase.
fn folding_host_end(s: &[u8], auth: usize) -> Option<(usize, bool)> {
    let mut i = auth;
    let mut label = 0usize;
    let mut upper = false;
    while i < s.len() {
        let c = s[i];
        if c.is_ascii_alphanumeric() || c == b'-' || c == b'_' {
            if label == 0 && (c == b'x' || c == b'X') && starts_with_ci(&s[i..], b"xn--") {
                return None;
            }
            upper |= c.is_ascii_uppercase();
            label += 1;
            if label > 63 {
                return None;
            }
            i += 1;
            continue;
        }
        if c != b'.' || label == 0 {
            break;
        }
        label = 0;
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
    let n = raw.len();
    let (host_end, upper) = folding_host_end(raw, auth)?;
    let mut path_start = host_end;
    if raw.get(host_end) == Some(&b':') {
        let default: &[u8] = if auth == 8 { b"443" } else { b"80" };
        let p = host_end + 1;
        if !(raw[p..].starts_with(default) && raw.get(p + default.len()) == Some(&b'/')) {
            return None;
        }
        path_start = p + default.len();
    }
    if raw.get(path_start) != Some(&b'/') {
        return None;
    }
    let mut seg = path_start + 1;
    let mut i = seg;
    let mut norm_path = false;
    while i < n {
        let c = raw[i];
        if c >= 0x80 {
            return None;
        }
        match PATH_CLASS[c as usize] {
            LIT => {
                if c == b'/' {
                    if is_dot_segment(&raw[seg..i]) {
                        return None;
                    }
                    seg = i + 1;
                }
            }
            ENC if c == b'?' || c == b'#' => break,
            ENC => return None,
            _ => {
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
        }
        i += 1;
    }
    if is_dot_segment(&raw[seg..i]) {
        return None;
    }
    let path_end = i;
    let mut query_end = path_end;
    if raw.get(path_end) == Some(&b'?') {
        i = path_end + 1;
        while i < n {
            let c = raw[i];
            if c == b'#' {
                break;
            }
            if c <= 0x20 || c >= 0x7F || c == b'"' || c == b'<' || c == b'>' || c == b'\'' {
                return None;
            }
            i += 1;
        }
        query_end = i;
    }
    let Scratch { query, norm, pairs, path, .. } = sc;
    path.clear();
    if norm_path {
        normalize(&raw[path_start..path_end], &PATH_CLASS, path);
    } else {
        path.extend_from_slice(&raw[path_start..path_end]);
    }
    if has_session_path_param(path) {
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

/// Canonicalizes `raw` found on the page `base` (`None` when absent or unusable); see the
/// module documentation. `origin` is `plain_origin(base)`, computed once per page. A result
/// written to `out` is appended at its end.
pub fn canonicalize(raw: &[u8], base: Option<&[u8]>, origin: Option<usize>, out: &mut Vec<u8>, sc: &mut Scratch) -> Outcome {
    if raw.len() > MAX_RAW || raw.iter().any(|&b| b >= 0x80) {
        return Outcome::Fallback;
    }
    let auth = scheme_prefix(raw);
    if auth != 0 {
        return fast_canonical(raw, auth, out, sc).unwrap_or(Outcome::Fallback);
    }
    let (base, origin) = match (base, origin) {
        (Some(b), Some(o)) => (b, o),
        _ => return Outcome::Fallback,
    };
    if raw.first() != Some(&b'/') {
        return relative_path(raw, base, origin, out, sc).unwrap_or(Outcome::Fallback);
    }
    // The TS `fastRelative`: join to the base's scheme (`//host/…`) or origin (`/path`).
    let scheme_end = if base[4] == b's' { 6 } else { 5 };
    let (prefix, auth) = if raw.get(1) == Some(&b'/') { (scheme_end, scheme_end + 2) } else { (origin, scheme_end + 2) };
    let mut joined = std::mem::take(&mut sc.joined);
    joined.clear();
    joined.extend_from_slice(&base[..prefix]);
    joined.extend_from_slice(raw);
    let got = fast_canonical(&joined, auth, out, sc);
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
fn relative_path(raw: &[u8], base: &[u8], origin: usize, out: &mut Vec<u8>, sc: &mut Scratch) -> Option<Outcome> {
    let first = *raw.first()?;
    if first == b'#' {
        return None;
    }
    let part_end = raw.iter().position(|&c| c == b'?' || c == b'#').unwrap_or(raw.len());
    // Bytes WHATWG strips, trims or reads as '/' would change which segments `..` removes,
    // before fast_canonical could see them: decline them here.
    let odd = |c: &u8| *c <= 0x20 || *c >= 0x7F || *c == b'\\';
    if raw.iter().any(odd) || raw[..part_end].iter().take_while(|&&c| c != b'/').any(|&c| c == b':') || contains_dot_escape(raw) {
        return None;
    }
    let base_end = base[origin..].iter().position(|&c| c == b'?' || c == b'#').map_or(base.len(), |p| origin + p);
    if base.iter().any(odd) || contains_dot_escape(base) {
        return None;
    }
    let base_path: &[u8] = if base_end == origin { b"/" } else { &base[origin..base_end] };
    let mut joined = std::mem::take(&mut sc.joined);
    joined.clear();
    joined.extend_from_slice(&base[..origin]);
    if first == b'?' {
        // The page's own path (fast_canonical declines it if it holds dot segments).
        joined.extend_from_slice(base_path);
    } else {
        let dir_end = base_path.iter().rposition(|&c| c == b'/').map_or(0, |p| p + 1);
        push_without_dot_segments(&mut joined, &base_path[..dir_end], &raw[..part_end]);
    }
    joined.extend_from_slice(&raw[part_end..]);
    let auth = scheme_prefix(&joined);
    let got = fast_canonical(&joined, auth, out, sc);
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
    let count = offsets.len() - 1;
    assert_eq!(lanes.len(), count * 3, "canonicalize_batch: three lanes per link");
    let origin = base.and_then(plain_origin);
    let mut sc = Scratch::default();
    let mut out = Vec::new();
    let mut used = 0usize;
    for i in 0..count {
        let raw = &data[offsets[i] as usize..offsets[i + 1] as usize];
        out.clear();
        let (k, a, b) = match canonicalize(raw, base, origin, &mut out, &mut sc) {
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
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(raw: &str, base: Option<&str>) -> Option<Option<String>> {
        let mut out = Vec::new();
        let mut sc = Scratch::default();
        let b = base.map(str::as_bytes);
        let origin = b.and_then(plain_origin);
        match canonicalize(raw.as_bytes(), b, origin, &mut out, &mut sc) {
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

    #[test]
    fn length_limits() {
        let long = format!("https://example.com/{}", "a".repeat(MAX_LENGTH));
        assert_eq!(canon(&long, None), Some(None));
        let tracked = format!("https://example.com/{}?utm_x={}", "a".repeat(MAX_LENGTH - 40), "b".repeat(100));
        ok(&tracked, None, &tracked[..tracked.find('?').unwrap()]);
        assert_eq!(canon(&format!("https://example.com/{}", "a".repeat(MAX_RAW)), None), None);
    }
}
