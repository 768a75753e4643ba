/**
 * The matching core of the robots.txt matcher (RFC 9309 §2.2.2–2.2.3): normalization, compiled
 * patterns, the longest-match decision and the query-order check. Module-internal: the package
 * root and src/browser.ts export `./robots.ts`, which re-exports the public names from here
 * (`normalizeRobotsPath`, `QUERY_ORDERS_MAX`, the rule and decision types); bench/suites/
 * robots.bench.mjs reaches `decidePath` in dist to time the query-order check against the own
 * form alone on the same rules. The behaviour is described in `./robots.ts`'s module comment.
 */

/** One allow/disallow line after normalization. */
export interface RobotsRule {
  /** The normalized pattern (what the comparison uses). */
  readonly pattern: string;
  readonly allow: boolean;
  /** 1-based line number in the file. */
  readonly line: number;
}

/** Why `explain` decided as it did. */
export interface RobotsDecision {
  readonly allowed: boolean;
  /** The rule that decided, or undefined when no rule matched (or the URL is /robots.txt). */
  readonly rule?: RobotsRule | undefined;
}

export interface CompiledRule extends RobotsRule {
  /** Literal pieces between the `*` wildcards (the first is an anchored prefix). */
  readonly pieces: readonly string[];
  /** Pattern ended with `$`. */
  readonly anchored: boolean;
  /** The pattern names `?` or `&`: the only rules the query-order check runs (see `linkedOrderDisallow`). */
  readonly query: boolean;
  /**
   * A query rule's literal text between its wildcards, `?` and `&`: each must occur in a path for
   * any order of its query to match (see `linkedOrderDisallow`). Empty for other rules.
   */
  readonly fragments: readonly string[];
}

/** A group's rules, ready to decide paths: what `RobotsTxt` keeps per agent. */
export interface RuleSet {
  /** Longest pattern first, allow before disallow on a tie, then file order: the first match decides. */
  readonly rules: readonly CompiledRule[];
  /**
   * Indexes into `rules` (ascending) of its query rules (`CompiledRule.query`), or none at all
   * when not one of them is a Disallow: then no order of a query can be disallowed by them,
   * and `decidePath` never builds one.
   */
  readonly queryAt: readonly number[];
}

/** `rules` sorted for `decidePath`, with the query rules found once (per file and agent). */
export function ruleSet(rules: readonly CompiledRule[]): RuleSet {
  const sorted = [...rules].sort((a, b) => b.pattern.length - a.pattern.length || Number(b.allow) - Number(a.allow) || a.line - b.line);
  const queryAt: number[] = [];
  sorted.forEach((rule, at) => rule.query && queryAt.push(at));
  const disallows = queryAt.some((at) => !sorted[at]!.allow);
  return { rules: sorted, queryAt: disallows ? queryAt : [] };
}

const HEX = '0123456789ABCDEF';
/**
 * Printable ASCII characters that are always compared in their `%XX` form (RFC 9309 §2.2.2):
 * the ones the URL layer may encode before a URL reaches the matcher. src/url's canonicalize
 * encodes `"` `<` `>` `[` `\` `]` `^` `` ` `` `{` `|` `}` in the path and the query (its step
 * 7 table), and WHATWG's parser encodes `'` in the query of an http(s) URL, so a link to
 * `/a|b` is fetched as `/a%7Cb` and `?x='y'` as `?x=%27y%27`. A pattern written with the raw
 * character must match the URL that is fetched, and one written with the escape must match a
 * raw character in a URL given to `isAllowed`. The other reserved characters (`/`, `?`, `&`,
 * `=`, …) are never encoded by either, so they and their escapes stay distinct (`/` ≠ `%2F`).
 * Not `#`: a raw `#` never reaches a comparison `explain` makes — the parser cuts a line at it
 * (§2.2.3, a comment) and a URL's `#` starts its fragment, which `explain` drops — so encoding it
 * would only make `robotsPatternMatches('/c%23d', '/c#d')` match a fragment `explain` ignores.
 */
const ENCODED_ASCII = '"\'<>[\\]^`{|}';
const ALWAYS_ENCODED = new Uint8Array(128);
for (let k = 0; k < ENCODED_ASCII.length; k++) ALWAYS_ENCODED[ENCODED_ASCII.charCodeAt(k)] = 1;
/** Printable ASCII without `$`, `%`, `*` or an `ALWAYS_ENCODED` character: already normalized on either side. */
const PLAIN = /^[!#&()+-;=?-Z_a-z~]*$/;
/** A pattern of such characters with `*` wildcards and at most a final `$`, but no `%`. */
const PLAIN_PATTERN = /^[!#&(-;=?-Z_a-z~]*\$?$/;
const utf8 = new TextEncoder();

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 0x20;
  if (lower >= 97 && lower <= 102) return lower - 87;
  return -1;
}

function isUnreserved(code: number): boolean {
  return (
    (code >= 65 && code <= 90) ||
    (code >= 97 && code <= 122) ||
    (code >= 48 && code <= 57) ||
    code === 45 ||
    code === 46 ||
    code === 95 ||
    code === 126
  );
}

function pushEscaped(out: string[], byte: number): void {
  out.push('%', HEX[byte >> 4]!, HEX[byte & 15]!);
}

/**
 * Normalizes a path (with its query) or a pattern for comparison; see the module comment.
 * `pattern` keeps `*` as the wildcard and a final `$` as the anchor; in a URL both are
 * encoded, as is a `$` that is not the last character of a pattern.
 */
export function normalizeRobotsPath(text: string, pattern: boolean): string {
  // Fast path (most paths and patterns): printable ASCII with nothing to encode or decode.
  if (PLAIN.test(text)) return text;
  if (pattern && PLAIN_PATTERN.test(text)) return text;
  const out: string[] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 37 /* % */) {
      const hi = i + 2 < n ? hexValue(text.charCodeAt(i + 1)) : -1;
      const lo = hi >= 0 ? hexValue(text.charCodeAt(i + 2)) : -1;
      if (lo < 0) {
        out.push('%25');
        continue;
      }
      const byte = (hi << 4) | lo;
      if (isUnreserved(byte)) out.push(String.fromCharCode(byte));
      else pushEscaped(out, byte);
      i += 2;
    } else if (c === 42 /* * */) {
      out.push(pattern ? '*' : '%2A');
    } else if (c === 36 /* $ */) {
      out.push(pattern && i === n - 1 ? '$' : '%24');
    } else if (c > 32 && c < 127) {
      if (ALWAYS_ENCODED[c] === 1) pushEscaped(out, c);
      else out.push(text[i]!);
    } else {
      // Controls, space and everything non-ASCII: UTF-8 bytes, escaped. A lone surrogate
      // encodes as U+FFFD, which is what TextEncoder produces for it.
      let end = i + 1;
      if (c >= 0xd800 && c <= 0xdbff && end < n) {
        const d = text.charCodeAt(end);
        if (d >= 0xdc00 && d <= 0xdfff) end++;
      }
      for (const byte of utf8.encode(text.slice(i, end))) pushEscaped(out, byte);
      i = end - 1;
    }
  }
  return out.join('');
}

export function compileRule(raw: string, allow: boolean, line: number): CompiledRule {
  const pattern = normalizeRobotsPath(raw, true);
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const pieces = body.split('*');
  const query = /[?&]/.test(body);
  // The first piece's text before its `?` or `&` is the path prefix the head test checks; the
  // longest fragment first, as the likeliest to be missing.
  const parts = pieces.flatMap((piece) => piece.split(/[?&]/));
  const fragments = query ? parts.slice(1).filter((f) => f !== '').sort((a, b) => b.length - a.length) : [];
  return { pattern, allow, line, anchored, pieces, query, fragments };
}

/** Whether a compiled pattern matches a normalized path (RFC 9309 §2.2.2–2.2.3). */
export function ruleMatches(rule: CompiledRule, path: string): boolean {
  const pieces = rule.pieces;
  const first = pieces[0]!;
  if (!path.startsWith(first)) return false;
  const last = pieces.length - 1;
  if (last === 0) return rule.anchored ? path.length === first.length : true;
  // Only `*` wildcards: taking each middle piece at its leftmost occurrence never loses a
  // match, because anything a later occurrence could match, the leftmost one leaves room for.
  let pos = first.length;
  for (let k = 1; k < last; k++) {
    const piece = pieces[k]!;
    if (piece === '') continue;
    const at = path.indexOf(piece, pos);
    if (at < 0) return false;
    pos = at + piece.length;
  }
  const tail = pieces[last]!;
  if (rule.anchored) return path.length - tail.length >= pos && path.endsWith(tail);
  return tail === '' || path.indexOf(tail, pos) >= 0;
}

/** `rule` as the decision it makes. */
function decision(rule: CompiledRule): RobotsDecision {
  return { allowed: rule.allow, rule: { pattern: rule.pattern, allow: rule.allow, line: rule.line } };
}

/**
 * How many of a query's parameters `linkedOrderDisallow` tries at the front: a URL with more
 * is checked with each of its first `QUERY_ORDERS_MAX` parameters leading, the rest only in
 * place (each order tried costs one pass over the query rules).
 */
export const QUERY_ORDERS_MAX = 32;

/**
 * The most query rules (after the per-URL filter) the reordered forms of one URL are matched
 * against; past it the URL is judged on its own form only. Bounds the check to about
 * `QUERY_ORDERS_MAX` × 256 rule matches a call.
 */
export const ORDER_RULES_MAX = 256;

/** Whether `path[a, a + n)` and `path[b, b + n)` are the same text. */
function sameText(path: string, a: number, b: number, n: number): boolean {
  for (let k = 0; k < n; k++) if (path.charCodeAt(a + k) !== path.charCodeAt(b + k)) return false;
  return true;
}

/**
 * The query-order check (ours, not RFC 9309's): the query rule that disallows `path` (a
 * normalized path-and-query whose own form the rules allow; `own` is the index in `rules` of the
 * rule that allowed it, `rules.length` when none matched) in an order its page may have linked,
 * or undefined.
 *
 * Why: src/url's canonicalize sorts the query (DESIGN §5 step 10), so the crawler asks for
 * `/search?a=1&q=shoes` where the page linked `/search?q=shoes&a=1`, and a site's
 * `Disallow: /search?q=` or `Disallow: /*?s=`, written for the order its own pages link, never
 * matches the form that is fetched. §2.2.2 matches from the start of the path-and-query, so a
 * rule naming a query parameter nearly always names the first one the site links.
 *
 * The rule: the orders tried are the URL's own with one parameter moved to the front, for
 * parameters 2..`QUERY_ORDERS_MAX` — but not a parameter whose key is that of the parameter
 * before it, since the sort is stable for repeated keys (`s=ok&s=bad` was linked in that order,
 * so no link had `s=bad` first). Each order is decided as §2.2.2 decides any path (longest match
 * over every rule, allow on a tie), and disallows the URL only when the rule that decides it is
 * a Disallow that does not match the URL's own form. A rule that matches the own form has
 * already had its say there: it lost to a longer Allow that names the URL as it is fetched, so
 * `Disallow: /*?` does not override `Allow: /*?page=` on `/list?page=2&x=1` just because
 * `/list?x=1&page=2` escapes the Allow. The reordering only gives a say to the rules that cannot
 * see the fetched form at all.
 *
 * Which rules can answer differently for another order: only those whose pattern names `?` or
 * `&` (`CompiledRule.query`). Any other pattern's literal pieces each lie inside the path or
 * inside one parameter, and moving a parameter changes neither, so such a rule matches every
 * order iff it matches the own form — except in two shapes, which are therefore not seen in
 * other orders (the check's gaps): pieces in two different parameters in the linked order
 * (`/*y=2*x=1` on a link `?y=2&x=1`, fetched `?x=1&y=2`), and a `$`-anchored piece about the
 * parameter the link ended with (`/*.pdf$`). Only the query rules are run against the orders;
 * every other rule is taken to answer each order as it answered the own form, so it decides an
 * order only where it comes before every query rule matching that order.
 *
 * The price: an Allow naming the fetched order (`Allow: /search?a=`) does not win over a
 * Disallow naming a linked order it cannot see (`Disallow: /search?q=`) on `/search?a=1&q=x` —
 * politeness first. Further gaps: with three or more parameters only one parameter is moved, so
 * a rule naming two parameters in linked order (`/search?q=*&b=` on `?q=x&b=1&a=2`) or a
 * `$`-anchored rule about a linked last parameter that is neither the fetched last nor the one
 * before it is not seen; parameters past `QUERY_ORDERS_MAX` are only checked where they stand;
 * with more than `ORDER_RULES_MAX` kept query rules the orders are not tried at all (the URL is
 * judged on its own form, as without the check).
 *
 * Cost: nothing unless the rules have a query Disallow (`RuleSet.queryAt`) and the URL two
 * parameters; then one pass over the query rules keeps those whose literal prefix fits the path
 * and whose fragments (`CompiledRule.fragments`) all occur in it, and only when one kept rule is
 * a Disallow that could decide are the orders built — at most `QUERY_ORDERS_MAX` − 1 strings,
 * each matched against the kept rules alone. Measured in bench/suites/robots.bench.mjs.
 */
function linkedOrderDisallow(group: RuleSet, path: string, own: number): CompiledRule | undefined {
  const q = path.indexOf('?');
  if (q < 0) return undefined;
  const amp = path.indexOf('&', q + 1);
  if (amp < 0) return undefined;
  const rules = group.rules;
  // Whether a query Disallow could decide an order: one that can match an order at all (see
  // `couldMatchAnOrder`), does not match the own form, and comes before every rule that is no
  // query rule and matches the own form (that rule matches each order too, and would decide it).
  // Most URLs stop here: the Allow rules are not even looked at.
  const head = path.slice(0, q + 1);
  let cutoff = -1;
  const decides = (rule: CompiledRule, at: number): boolean => {
    if (rule.allow || !couldMatchAnOrder(rule, head, path)) return false;
    // Longer than the rule that decided the own form (an Allow), it does not match the own form.
    if (at < own) return true;
    // Matching the own form, it already lost there to a longer Allow: its say was had.
    if (ruleMatches(rule, path)) return false;
    if (cutoff < 0) cutoff = firstPlainMatch(rules, path, own);
    return at < cutoff;
  };
  if (!group.queryAt.some((at) => decides(rules[at]!, at))) return undefined;
  // The query rules an order can be decided by, in order, each marked if it would disallow.
  const candidates: CompiledRule[] = [];
  const decisive: boolean[] = [];
  for (const at of group.queryAt) {
    const rule = rules[at]!;
    if (at > cutoff && cutoff >= 0) break;
    if (!couldMatchAnOrder(rule, head, path)) continue;
    candidates.push(rule);
    decisive.push(decides(rule, at));
  }
  // A file with more query rules an order could be decided by than `ORDER_RULES_MAX` (a hostile
  // or generated one: 20 000 such rules cost 54 ms a call) is judged on the own form alone, as
  // before the check: its price per call stays a few passes over the rules (the own form's,
  // and the ones that sorted the query rules out above).
  if (candidates.length > ORDER_RULES_MAX) return undefined;
  // Each order, built as one string: `head` + the moved parameter + `&` + the others in order.
  const query = q + 1;
  let prevStart = query;
  let prevKey = keyLength(path, query, amp);
  let start = amp + 1;
  for (let i = 1; i < QUERY_ORDERS_MAX && start <= path.length; i++) {
    let end = path.indexOf('&', start);
    if (end < 0) end = path.length;
    if (end > start) {
      const key = keyLength(path, start, end);
      if (key !== prevKey || !sameText(path, prevStart, start, key)) {
        const order = head + path.slice(start, end) + '&' + path.slice(query, start - 1) + path.slice(end);
        for (let k = 0; k < candidates.length; k++) {
          if (!ruleMatches(candidates[k]!, order)) continue;
          if (decisive[k]) return candidates[k];
          break;
        }
      }
      prevStart = start;
      prevKey = key;
    }
    start = end + 1;
  }
  return undefined;
}

/**
 * Whether a query rule can match some order of `path`'s query (a necessary test, made once per
 * URL): every order starts with `head` (the path and its `?`), and text without `?` or `&` lies,
 * in any order, inside the path or inside one parameter, which every order shares — so a
 * fragment (`CompiledRule.fragments`) the own form lacks, no order has.
 */
function couldMatchAnOrder(rule: CompiledRule, head: string, path: string): boolean {
  const first = rule.pieces[0]!;
  if (first.length <= head.length ? !head.startsWith(first) : !first.startsWith(head)) return false;
  for (const fragment of rule.fragments) if (!path.includes(fragment)) return false;
  return true;
}

/** Length of the key of the parameter `path[start, end)`: up to its first `=`. */
function keyLength(path: string, start: number, end: number): number {
  const eq = path.indexOf('=', start);
  return (eq < 0 || eq > end ? end : eq) - start;
}

/**
 * The index of the first rule from `own` on that is no query rule and matches `path` (`own`
 * itself when it is one), or `rules.length`: such a rule matches every order of the query too.
 */
function firstPlainMatch(rules: readonly CompiledRule[], path: string, own: number): number {
  for (let at = own; at < rules.length; at++) {
    const rule = rules[at]!;
    if (!rule.query && (at === own || ruleMatches(rule, path))) return at;
  }
  return rules.length;
}

/**
 * The decision for a normalized path-and-query: the first (longest) matching rule decides it
 * (§2.2.2), and when that allows it and `orders` is set, the query-order check may disallow it
 * (`linkedOrderDisallow`). `orders: false` is the own form alone, RFC 9309 to the letter.
 */
export function decidePath(set: RuleSet, path: string, orders: boolean): RobotsDecision {
  const rules = set.rules;
  let own = 0;
  while (own < rules.length && !ruleMatches(rules[own]!, path)) own++;
  if (own < rules.length && !rules[own]!.allow) return decision(rules[own]!);
  if (orders && set.queryAt.length > 0) {
    const linked = linkedOrderDisallow(set, path, own);
    if (linked !== undefined) return decision(linked);
  }
  return own < rules.length ? decision(rules[own]!) : { allowed: true };
}

/**
 * Whether a path-and-query is the robots.txt file itself, which RFC 9309 §2.2.2 always allows
 * ("The /robots.txt URI is implicitly allowed"). That URI only: `/robots.txt?x=1` is another
 * URI, and the rules decide it. The one test `RobotsTxt.explain` and `RobotsCache` both use.
 */
export function isRobotsFilePath(pathAndQuery: string): boolean {
  return pathAndQuery === '/robots.txt';
}
