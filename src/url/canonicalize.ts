/**
 * `canonicalize`: the eleven steps of DESIGN §5, turning a raw link into the one string a
 * page is known by, or `null` when the link is not a frontier URL.
 *
 * Division of labour. The WHATWG parser (`URL`, ada in Node) does what it does exactly as
 * browsers do and what would be folly to redo: resolution against the base (step 1), scheme
 * and host lowercasing, IDNA to punycode, IPv4 forms (`0x7f.1` → `127.0.0.1`) and IPv6
 * compression (step 3), default ports (step 4), dot segments including `%2e` spellings
 * (step 6), stripping tab/newline and surrounding controls. This file then applies the rules
 * WHATWG deliberately leaves alone: host checks and the trailing dot (step 3), dropping the
 * userinfo and fragment (steps 5, 8), one percent-encoding form (step 7), the query filter
 * and sort (steps 9, 10) and the per-host folds (step 11).
 *
 * Step 7 is written so the result does not depend on which characters a given parser
 * version happens to escape: every component is re-encoded against a fixed table, so a
 * character is either always literal or always `%XX` in canonical output. Literal: RFC 3986
 * unreserved, sub-delims, `:` `@` `/` (and `?` in the query). Everything else is encoded,
 * escapes use uppercase hex, escapes of unreserved characters are decoded, escapes of
 * delimiters (`%2F`, `%3F`, `%26`, …) stay escaped — a literal delimiter and an escaped one
 * may mean different things to the server, so they are never merged. A `%` that does not
 * start an escape becomes `%25`; leaving it literal would make canonicalization
 * non-idempotent (`%%34%31` → `%41` → `A`).
 *
 * The asymmetry of DESIGN §5 rules every borderline choice: a missed merge costs a row, a
 * wrong merge loses a page. So `+` and `%20` stay distinct, `?a` and `?a=` stay distinct,
 * `sid` is dropped only when its value looks like a session token (on some sites it is a
 * story id), and all folds are off unless a host's policy turns them on.
 *
 * Hot path (bench/suites/url.bench.mjs). An absolute link already in canonical shape — the
 * common case — is checked by one scan and never parsed (`fastCanonical`); so is a
 * path-absolute or scheme-relative link against a plain base (`fastRelative`). Everything
 * else takes one `URL` parse. Either way the later steps return their input slice untouched
 * when nothing needs changing, so the common case allocates only the parts and the result.
 */
import { type CanonPolicy, type CompiledPolicy, compiledPolicy } from './policy.js';
import { looksLikeSessionToken } from './session.js';

// Character classes for step 7, indexed by ASCII code: 0 literal, 1 must be encoded, 2 '%'.
const PATH_CLASS = new Uint8Array(128).fill(1);
const QUERY_CLASS = new Uint8Array(128).fill(1);
{
  const literal = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~' + "!$&'()*+,;=" + ':@/';
  for (let i = 0; i < literal.length; i++) {
    PATH_CLASS[literal.charCodeAt(i)] = 0;
    QUERY_CLASS[literal.charCodeAt(i)] = 0;
  }
  QUERY_CLASS[0x3f] = 0; // '?' is data inside a query
  PATH_CLASS[0x25] = 2;
  QUERY_CLASS[0x25] = 2;
}

/** Unreserved characters (RFC 3986 §2.3): their escapes are decoded. */
const UNRESERVED = new Uint8Array(128);
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~') UNRESERVED[ch.charCodeAt(0)] = 1;

const HEX = '0123456789ABCDEF';
/** `%XX` for every byte, uppercase. */
const ESCAPE: string[] = [];
for (let b = 0; b < 256; b++) ESCAPE.push('%' + HEX[b >> 4]! + HEX[b & 15]!);

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  if (l >= 97 && l <= 102) return l - 87;
  return -1;
}

/** `%XX` escapes of the UTF-8 bytes of the code point at `s[i]` (lone surrogates as U+FFFD). */
function escapeNonAscii(s: string, i: number): { text: string; units: number } {
  let cp = s.charCodeAt(i);
  let units = 1;
  if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < s.length) {
    const lo = s.charCodeAt(i + 1);
    if (lo >= 0xdc00 && lo <= 0xdfff) {
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
      units = 2;
    }
  }
  if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
  let text: string;
  if (cp < 0x800) text = ESCAPE[0xc0 | (cp >> 6)]! + ESCAPE[0x80 | (cp & 63)]!;
  else if (cp < 0x10000) text = ESCAPE[0xe0 | (cp >> 12)]! + ESCAPE[0x80 | ((cp >> 6) & 63)]! + ESCAPE[0x80 | (cp & 63)]!;
  else {
    text =
      ESCAPE[0xf0 | (cp >> 18)]! + ESCAPE[0x80 | ((cp >> 12) & 63)]! + ESCAPE[0x80 | ((cp >> 6) & 63)]! + ESCAPE[0x80 | (cp & 63)]!;
  }
  return { text, units };
}

/**
 * Step 7 over one component: returns `s` itself when it is already in canonical form.
 * `lower` (the foldCase policy) lowercases ASCII letters; the caller has already lowercased
 * the input, so only letters decoded from escapes need it here.
 */
function normalizeEncoding(s: string, cls: Uint8Array, lower: boolean): string {
  const n = s.length;
  let i = 0;
  // Fast scan: literal characters and escapes already in canonical form change nothing.
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128) break;
    const k = cls[c]!;
    if (k === 0) continue;
    if (k === 1) break;
    const h1 = s.charCodeAt(i + 1);
    const h2 = s.charCodeAt(i + 2);
    const v = (hexValue(h1) << 4) | hexValue(h2);
    if (v < 0 || UNRESERVED[v] === 1 || (h1 >= 97 && h1 <= 102) || (h2 >= 97 && h2 <= 102)) break;
    i += 2;
  }
  if (i === n) return s;
  let out = '';
  let start = 0;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c >= 128) {
      const e = escapeNonAscii(s, i);
      out += s.slice(start, i) + e.text;
      i += e.units;
      start = i;
      continue;
    }
    const k = cls[c]!;
    if (k === 0) {
      i++;
      continue;
    }
    if (k === 1) {
      out += s.slice(start, i) + ESCAPE[c]!;
      start = ++i;
      continue;
    }
    const h1 = hexValue(s.charCodeAt(i + 1));
    const h2 = hexValue(s.charCodeAt(i + 2));
    if (h1 < 0 || h2 < 0) {
      out += s.slice(start, i) + '%25';
      start = ++i;
      continue;
    }
    const v = (h1 << 4) | h2;
    if (UNRESERVED[v] === 1) {
      out += s.slice(start, i) + String.fromCharCode(lower && v >= 65 && v <= 90 ? v | 0x20 : v);
    } else {
      out += s.slice(start, i) + ESCAPE[v]!;
    }
    i += 3;
    start = i;
  }
  return start === 0 ? s : out + s.slice(start);
}

/**
 * Step 3's checks on the host WHATWG produced, over `href[from, to)`: an IPv6 literal passes
 * as is; otherwise one trailing dot is dropped and the name must be 1–253 characters of
 * labels of 1–63 characters from `[a-z0-9_-]` (WHATWG accepts `ex$ample.com` and empty
 * labels; DNS cannot resolve them, so they are not frontier URLs). Returns the end of the
 * host to keep (`to`, or `to - 1` without the trailing dot), or -1 when the host is invalid.
 */
function checkHost(href: string, from: number, to: number): number {
  if (to <= from) return -1;
  if (href.charCodeAt(from) === 0x5b) return to;
  const end = href.charCodeAt(to - 1) === 0x2e ? to - 1 : to;
  if (end === from || end - from > 253) return -1;
  let label = 0;
  for (let i = from; i < end; i++) {
    const c = href.charCodeAt(i);
    if (c === 0x2e) {
      if (label === 0) return -1;
      label = 0;
      continue;
    }
    if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 95)) return -1;
    if (++label > 63) return -1;
  }
  return label === 0 ? -1 : end;
}

/** Session path parameters dropped in step 9 (`/cart;jsessionid=…`), case-insensitive. */
const SESSION_PATH_PARAM = /;(?:jsessionid|phpsessid)=[^/;]*/gi;

/** RFC 3986 §5.2.4 over an absolute path, for the rare path a session strip left with dot segments. */
function removeDotSegments(path: string): string {
  const segs = path.split('/');
  const out: string[] = [];
  for (let i = 1; i < segs.length; i++) {
    const s = segs[i]!;
    const last = i === segs.length - 1;
    if (s === '.') {
      if (last) out.push('');
    } else if (s === '..') {
      out.pop();
      if (last) out.push('');
    } else {
      out.push(s);
    }
  }
  return '/' + out.join('/');
}

const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

/** Index documents folded into their directory by `foldIndex` (compared lowercased). */
const INDEX_FILES = new Set([
  'index.html',
  'index.htm',
  'index.shtml',
  'index.php',
  'index.asp',
  'index.aspx',
  'index.jsp',
  'index.cgi',
  'default.htm',
  'default.html',
  'default.asp',
  'default.aspx',
]);

/**
 * Steps 6–7, the session part of 9, and the path folds of 11. `encoded` says the caller has
 * already verified step 7 holds (the fast path's scan), so only the rarer rules run.
 */
function canonicalPath(pathname: string, p: CompiledPolicy, encoded: boolean): string {
  let path = pathname;
  if (p.foldCase) path = normalizeEncoding(path.toLowerCase(), PATH_CLASS, true);
  else if (!encoded) path = normalizeEncoding(path, PATH_CLASS, false);
  if (path.includes(';')) {
    const stripped = path.replace(SESSION_PATH_PARAM, '');
    if (stripped !== path) path = DOT_SEGMENT.test(stripped) ? removeDotSegments(stripped) : stripped;
  }
  if (p.collapseSlash && path.includes('//')) path = path.replace(/\/{2,}/g, '/');
  if (p.foldTrailing || p.foldIndex) path = foldPath(path, p.foldTrailing, p.foldIndex);
  return path;
}

/** Trailing-slash and index folds, repeated to a fixed point (`/index.html/index.html` → `/`). */
function foldPath(path: string, trailing: boolean, index: boolean): string {
  for (;;) {
    const before = path;
    if (trailing && path.length > 1 && path.charCodeAt(path.length - 1) === 0x2f) {
      let end = path.length - 1;
      while (end > 1 && path.charCodeAt(end - 1) === 0x2f) end--;
      path = path.slice(0, end);
    }
    if (index) {
      const slash = path.lastIndexOf('/');
      if (INDEX_FILES.has(path.slice(slash + 1).toLowerCase())) path = path.slice(0, slash + 1);
    }
    if (trailing && path.length > 1 && path.charCodeAt(path.length - 1) === 0x2f) continue;
    if (path === before) return path;
  }
}

/**
 * Global deny-list of step 9: tracking parameters (dropped always) and unambiguous session
 * parameters. Compared lowercased; `utm_*` is matched by prefix.
 */
export const TRACKING_PARAMS: ReadonlySet<string> = new Set([
  // ad click ids and analytics linkers
  'gclid',
  'gclsrc',
  'dclid',
  'gbraid',
  'wbraid',
  'gad_source',
  'fbclid',
  'msclkid',
  'yclid',
  'twclid',
  'ttclid',
  'igshid',
  'li_fat_id',
  'srsltid',
  's_kwcid',
  'ef_id',
  '_ga',
  '_gl',
  // e-mail and marketing automation
  'mc_cid',
  'mc_eid',
  '_hsenc',
  '_hsmi',
  '__hstc',
  '__hssc',
  '__hsfp',
  'hsctatracking',
  'mkt_tok',
  'oly_anon_id',
  'oly_enc_id',
  'vero_id',
  'vero_conv',
  'wickedid',
  'rb_clickid',
  '_openstat',
  // session ids whose name is unambiguous
  'jsessionid',
  'phpsessid',
  'aspsessionid',
  'cftoken',
  'zenid',
  'oscsid',
]);

/**
 * Session-parameter names that are also used for real content (`sid` is a story id on some
 * sites, `session_id` a talk on a conference site): dropped only when the value looks like a
 * session token. `s` is not here: it is WordPress's search parameter, and a search for a
 * product code can look like a token.
 */
export const AMBIGUOUS_SESSION_PARAMS: ReadonlySet<string> = new Set(['sid', 'sessid', 'sess', 'session', 'sessionid', 'session_id']);

/**
 * Apache mod_autoindex's sort links, as a whole pair: a directory listing links itself sorted by
 * name, date, size and description, each way (`?C=N;O=D`, `?C=M;O=A`, …; `;` is the module's
 * separator, so the query is one pair), and every sorted view links the others: nine requests
 * per directory for one listing. On a loopback mirror of 85 directories and 213 files `meguri
 * crawl` made 978 requests, 680 of them sorted listings. The exact shape — `C` a column letter,
 * `O` an order, then optionally the module's `;F=` (format) and `;V=` (version sort) — is the
 * module's own, and only a directory (a path ending in `/`) has a listing, so dropping it merges
 * views of one listing and nothing else. (core-rs/src/canon.rs declines any pair keyed `C`, so
 * this stays the one place for the rule.)
 */
const AUTOINDEX_SORT = /^C=[NMSD];O=[AD](?:;[FV]=\d)*$/;

/**
 * Whether the global deny-list drops a pair with lowercased key `key` and value `pair[valueFrom:]`
 * (`directory`: the path, as linked, ends in `/`).
 */
function globallyDenied(key: string, pair: string, valueFrom: number, directory: boolean): boolean {
  if (key.startsWith('utm_') || TRACKING_PARAMS.has(key)) return true;
  if (directory && key === 'c' && AUTOINDEX_SORT.test(pair)) return true;
  return AMBIGUOUS_SESSION_PARAMS.has(key) && looksLikeSessionToken(pair, valueFrom);
}

// Reused between calls (canonicalize is synchronous and never re-entered).
let pairs: string[] = [];
let keys: string[] = [];

/** Steps 7, 9 and 10 over the query (without its '?'; `directory`: the path ends in `/`); '' when nothing survives. */
function canonicalQuery(search: string, p: CompiledPolicy, directory: boolean): string {
  const q = normalizeEncoding(p.foldCase ? search.toLowerCase() : search, QUERY_CLASS, p.foldCase);
  const allow = p.allow;
  const deny = p.deny;
  let n = 0;
  let sorted = true;
  let changed = false;
  let start = 0;
  const len = q.length;
  while (start <= len) {
    let amp = q.indexOf('&', start);
    if (amp < 0) amp = len;
    if (amp === start) {
      changed = true; // empty pair
      start = amp + 1;
      continue;
    }
    const pair = start === 0 && amp === len ? q : q.slice(start, amp);
    start = amp + 1;
    let eq = pair.indexOf('=');
    if (eq < 0) eq = pair.length;
    const key = eq === pair.length ? pair : pair.slice(0, eq);
    const lk = p.foldCase ? key : key.toLowerCase();
    const keep = allow !== undefined ? allow.has(lk) && !deny.has(lk) : !deny.has(lk) && !globallyDenied(lk, pair, eq + 1, directory);
    if (!keep) {
      changed = true;
      continue;
    }
    if (n > 0 && key < keys[n - 1]!) sorted = false;
    pairs[n] = pair;
    keys[n] = key;
    n++;
  }
  let out: string;
  if (!changed && sorted) {
    out = q;
  } else if (n === 0) {
    out = '';
  } else {
    if (!sorted) stableSortPairs(n);
    out = pairs[0]!;
    for (let i = 1; i < n; i++) out += '&' + pairs[i]!;
  }
  if (n > 64) {
    pairs = [];
    keys = [];
  }
  return out;
}

/** Stable sort of pairs[0, n) by keys (code-unit order): insertion sort, or index sort past 16. */
function stableSortPairs(n: number): void {
  if (n <= 16) {
    for (let i = 1; i < n; i++) {
      const k = keys[i]!;
      const v = pairs[i]!;
      let j = i - 1;
      while (j >= 0 && keys[j]! > k) {
        keys[j + 1] = keys[j]!;
        pairs[j + 1] = pairs[j]!;
        j--;
      }
      keys[j + 1] = k;
      pairs[j + 1] = v;
    }
    return;
  }
  const order = Array.from({ length: n }, (_, i) => i);
  const ks = keys;
  order.sort((a, b) => (ks[a]! < ks[b]! ? -1 : ks[a]! > ks[b]! ? 1 : a - b));
  const ps = order.map((i) => pairs[i]!);
  const kk = order.map((i) => keys[i]!);
  for (let i = 0; i < n; i++) {
    pairs[i] = ps[i]!;
    keys[i] = kk[i]!;
  }
}

const hasUrlParse = typeof (URL as { parse?: unknown }).parse === 'function';

function parse(raw: string, base: string | undefined): URL | null {
  if (hasUrlParse) return URL.parse(raw, base);
  try {
    return new URL(raw, base);
  } catch {
    return null;
  }
}

/** Length of the `http://` / `https://` prefix of `s`, or 0. Exact lowercase only. */
export function schemePrefix(s: string): number {
  if (s.charCodeAt(0) !== 0x68 || s.charCodeAt(1) !== 0x74 || s.charCodeAt(2) !== 0x74 || s.charCodeAt(3) !== 0x70) return 0;
  let i = 4;
  if (s.charCodeAt(4) === 0x73) i = 5;
  return s.charCodeAt(i) === 0x3a && s.charCodeAt(i + 1) === 0x2f && s.charCodeAt(i + 2) === 0x2f ? i + 3 : 0;
}

/** Whether `s[from, to)` is a dot segment (`.` or `..`). */
function isDotSegment(s: string, from: number, to: number): boolean {
  const n = to - from;
  return (n === 1 || n === 2) && s.charCodeAt(from) === 0x2e && (n === 1 || s.charCodeAt(from + 1) === 0x2e);
}

/**
 * End of a host WHATWG would keep byte for byte, scanning `s` from `authStart`: lowercase
 * labels of `[a-z0-9_-]` (1–63 characters, 253 in all), no `xn--` label (WHATWG validates
 * punycode) and a last label not starting with a digit (WHATWG may read it as IPv4).
 * Returns -1 when the host is not such a name; the caller checks the character after it.
 */
function plainHostEnd(s: string, authStart: number): number {
  const n = s.length;
  let i = authStart;
  let label = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 95) {
      if (label === 0 && c === 0x78 && s.startsWith('xn--', i)) return -1;
      if (++label > 63) return -1;
      continue;
    }
    if (c !== 0x2e || label === 0) break;
    label = 0;
  }
  if (label === 0 || i - authStart > 253) return -1;
  const first = s.charCodeAt(i - label);
  return first >= 48 && first <= 57 ? -1 : i;
}

/**
 * The fast path, taken when `raw` is an absolute http(s) URL that the WHATWG parser would
 * return unchanged in every part we keep: lowercase scheme, a lowercase DNS name without a
 * port, userinfo, `xn--` label or numeric last label, a path already in step-7 form with no
 * dot segment, and a query WHATWG would not escape. Anything else — including every
 * non-path-absolute relative link — returns `undefined` and goes through `URL`. Measured
 * side by side on bench-shaped links (66 characters, 94 % eligible), skipping the parse made
 * canonicalize 2.5× faster than the general path alone; the differential properties in
 * test/url/canonicalize.test.ts check that both paths agree and that both are exercised.
 */
function fastCanonical(raw: string, authStart: number, p: CompiledPolicy): string | null | undefined {
  const n = raw.length;
  const hostEnd = plainHostEnd(raw, authStart);
  if (hostEnd < 0 || raw.charCodeAt(hostEnd) !== 0x2f) return undefined;
  let i: number;
  // Path: literal characters and canonical escapes only, no dot segment.
  let seg = hostEnd + 1;
  for (i = seg; i < n; i++) {
    const c = raw.charCodeAt(i);
    if (c >= 128) return undefined;
    const k = PATH_CLASS[c]!;
    if (k === 0) {
      if (c === 0x2f) {
        if (isDotSegment(raw, seg, i)) return undefined;
        seg = i + 1;
      }
      continue;
    }
    if (c === 0x3f || c === 0x23) break;
    if (k === 1) return undefined;
    const h1 = raw.charCodeAt(i + 1);
    const h2 = raw.charCodeAt(i + 2);
    const v = (hexValue(h1) << 4) | hexValue(h2);
    if (v < 0 || UNRESERVED[v] === 1 || h1 >= 97 || h2 >= 97) return undefined;
    i += 2;
  }
  if (isDotSegment(raw, seg, i)) return undefined;
  const pathEnd = i;
  // Query: nothing WHATWG's special-query set would escape.
  let queryEnd = pathEnd;
  if (raw.charCodeAt(pathEnd) === 0x3f) {
    for (i = pathEnd + 1; i < n; i++) {
      const c = raw.charCodeAt(i);
      if (c === 0x23) break;
      if (c <= 0x20 || c >= 0x7f || c === 0x22 || c === 0x3c || c === 0x3e || c === 0x27) return undefined;
    }
    queryEnd = i;
  }
  const pathname = raw.slice(hostEnd, pathEnd);
  const path = canonicalPath(pathname, p, true);
  const search = queryEnd > pathEnd + 1 ? raw.slice(pathEnd + 1, queryEnd) : '';
  const query = search === '' ? '' : canonicalQuery(search, p, pathname.endsWith('/'));
  let out: string;
  if (path === pathname && query === search) out = queryEnd === n && query !== '' ? raw : raw.slice(0, query === '' ? pathEnd : queryEnd);
  else {
    out = raw.slice(0, hostEnd) + path;
    if (query !== '') out += '?' + query;
  }
  return out.length > p.maxLength ? null : out;
}

/**
 * The general path: parse with `URL` (resolving against `base`), then apply the steps to
 * the serialization. For http(s) it is scheme "//" [userinfo "@"] host [":" port] path
 * ["?" query] ["#" fragment], with the path always present and '?' / '#' escaped inside the
 * parts before them, so one scan of the authority and two index searches find every part.
 */
function slowCanonical(raw: string, base: string | undefined, p: CompiledPolicy): string | null {
  let u = parse(raw, base);
  // An unusable base only matters to relative links (the fast path never reads it either).
  if (u === null && base !== undefined) u = parse(raw, undefined);
  if (u === null) return null;
  const href = u.href;
  const authStart = schemePrefix(href);
  if (authStart === 0) return null;
  const len = href.length;
  // One scan over the authority: the last '@' ends the userinfo, a ':' after the host starts the port.
  let at = -1;
  let colon = -1;
  let i = authStart;
  for (; i < len; i++) {
    const c = href.charCodeAt(i);
    if (c === 0x2f) break;
    if (c === 0x40) {
      at = i;
      colon = -1;
    } else if (c === 0x3a) colon = i;
    else if (c === 0x5d) colon = -1; // the colons of an IPv6 literal
  }
  const pathStart = i;
  const hostStart = at >= 0 ? at + 1 : authStart;
  const hostEnd = colon > hostStart ? colon : pathStart;
  const keepHostEnd = checkHost(href, hostStart, hostEnd);
  if (keepHostEnd < 0) return null;
  let hashAt = href.indexOf('#', pathStart);
  if (hashAt < 0) hashAt = len;
  let queryAt = href.indexOf('?', pathStart);
  if (queryAt < 0 || queryAt > hashAt) queryAt = hashAt;
  const pathname = href.slice(pathStart, queryAt);
  const path = canonicalPath(pathname, p, false);
  const search = queryAt + 1 < hashAt ? href.slice(queryAt + 1, hashAt) : '';
  const query = search === '' ? '' : canonicalQuery(search, p, pathname.endsWith('/'));
  let out: string;
  if (hostStart === authStart && keepHostEnd === hostEnd && path === pathname && query === search) {
    // Nothing to change but the fragment (or an empty '?'): a slice of the serialization.
    out = query === '' ? href.slice(0, queryAt) : hashAt === len ? href : href.slice(0, hashAt);
  } else {
    out = href.slice(0, authStart) + href.slice(hostStart, keepHostEnd) + href.slice(hostEnd, pathStart) + path;
    if (query !== '') out += '?' + query;
  }
  return out.length > p.maxLength ? null : out;
}

/**
 * Canonicalizes a raw link found on the page at `base` (omit `base`, or pass '', when `raw`
 * is absolute). Returns the canonical URL — `scheme://host[:port]path[?query]`, ASCII only —
 * or `null` when the link is not a frontier URL: unparseable, not http(s), an invalid host,
 * or longer than the policy's `maxLength` (default 2,048 bytes). `base` is consulted only
 * for relative links; an unusable base makes those `null`.
 *
 * Pure (no clock, no network, no state that changes an answer) and never throws for any
 * `raw` or `base`; only an invalid `policy` object throws (`InvalidArgumentError`). Pass a
 * policy resolved by `canonPolicy()` on hot paths: it is compiled once and cached by
 * identity. `canonicalize(canonicalize(x)) === canonicalize(x)` under the same policy.
 */
export function canonicalize(raw: string, base?: string, policy?: Partial<CanonPolicy> | null): string | null {
  const p = compiledPolicy(policy);
  if (typeof raw !== 'string' || raw.length > p.maxRaw) return null;
  if (base === '' || typeof base !== 'string' || base.length > p.maxRaw) base = undefined;
  const authStart = schemePrefix(raw);
  if (authStart !== 0) {
    const fast = fastCanonical(raw, authStart, p);
    if (fast !== undefined) return fast;
  } else if (base !== undefined && raw.charCodeAt(0) === 0x2f) {
    const fast = fastRelative(raw, base, p);
    if (fast !== undefined) return fast;
  }
  return slowCanonical(raw, base, p);
}

// One-entry memo of the last base checked by `fastRelative`: a page's links share its URL.
let lastBase = '';
let lastBaseOrigin = '';

/**
 * `scheme://host` of a base URL whose authority the WHATWG parser would keep unchanged (the
 * fast path's host rules: lowercase DNS name, no port, no userinfo), or '' when it would not.
 */
function plainOrigin(base: string): string {
  if (base === lastBase) return lastBaseOrigin;
  const authStart = schemePrefix(base);
  let origin = '';
  if (authStart !== 0) {
    const end = plainHostEnd(base, authStart);
    const c = base.charCodeAt(end);
    if (end === base.length || c === 0x2f || c === 0x3f || c === 0x23) origin = base.slice(0, end);
  }
  lastBase = base;
  lastBaseOrigin = origin;
  return origin;
}

/**
 * The fast path for the commonest relative links, path-absolute (`/a/b?c`) and
 * scheme-relative (`//cdn.host/x`), against a base with a plain origin: WHATWG resolution
 * of those is the base's scheme (and, for `/…`, its origin) followed by the link, so the
 * joined string goes through `fastCanonical`, which hands anything unusual (a `\`, a dot
 * segment, a control character) back to the general path. Relative paths (`x/y`, `../x`)
 * and query-only links need the base's path and always go through `URL`.
 */
function fastRelative(raw: string, base: string, p: CompiledPolicy): string | null | undefined {
  const origin = plainOrigin(base);
  if (origin === '') return undefined;
  const schemeEnd = origin.charCodeAt(4) === 0x73 ? 6 : 5; // "https:" or "http:"
  if (raw.charCodeAt(1) === 0x2f) return fastCanonical(origin.slice(0, schemeEnd) + raw, schemeEnd + 2, p);
  return fastCanonical(origin + raw, schemeEnd + 2, p);
}

/** @internal The general path alone, for the differential test of the fast path. */
export function canonicalizeSlow(raw: string, base?: string, policy?: Partial<CanonPolicy> | null): string | null {
  const p = compiledPolicy(policy);
  if (typeof raw !== 'string' || raw.length > p.maxRaw) return null;
  if (base === '' || typeof base !== 'string' || base.length > p.maxRaw) base = undefined;
  return slowCanonical(raw, base, p);
}

/** @internal The fast paths alone: `undefined` when `raw` (with `base`) is not eligible. */
export function canonicalizeFast(raw: string, base?: string, policy?: Partial<CanonPolicy> | null): string | null | undefined {
  const p = compiledPolicy(policy);
  if (raw.length > p.maxRaw) return undefined;
  const authStart = schemePrefix(raw);
  if (authStart !== 0) return fastCanonical(raw, authStart, p);
  if (base === undefined || base === '' || base.length > p.maxRaw || raw.charCodeAt(0) !== 0x2f) return undefined;
  return fastRelative(raw, base, p);
}
