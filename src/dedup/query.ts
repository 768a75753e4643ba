/**
 * Query pairs as the query-key lessons read them (`ViewKeys`, `KnownCopies`): one place for what
 * a URL's pairs are, what counts as a number value, and which URLs a lesson lets through as
 * checks. Pure functions over canonical URLs (pairs as written, `key=value`, in canonical order).
 * Never: decode keys, or canonicalize (src/url does).
 */
import { originEnd } from '../url/host.js';

/**
 * Whether a query value is a number or a list of them (`2`, `1,2`, `-5`, `1.5`; escapes decoded:
 * `1%2C2`): a page number, a count, an id.
 */
export function isNumberValue(v: string): boolean {
  let d = v;
  try {
    d = decodeURIComponent(v.replace(/\+/g, ' '));
  } catch {
    // an undecodable escape is no number
  }
  return /\d/.test(d) && /^[\d,.+\- ]+$/.test(d);
}

/**
 * Whether `url` is one of the one in `every` URLs a lesson lets through as checks: picked by an
 * FNV-1a hash of the URL, so every process and a resume agree without state (`ViewKeys`,
 * `KnownCopies`).
 */
export function picksAsCheck(url: string, every: number): boolean {
  // The high bits: a multiplicative hash's low bits depend only on the characters' low bits.
  return Math.floor((urlHash32(url) / 2 ** 32) * every) === 0;
}

/** 32-bit FNV-1a of a string's UTF-16 code units, unsigned. */
export function urlHash32(url: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < url.length; i++) h = Math.imul(h ^ url.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A query pair's value (`a=1` → `1`; a bare `flag` → ''). */
export function valueOf(pair: string): string {
  const eq = pair.indexOf('=');
  return eq < 0 ? '' : pair.slice(eq + 1);
}

/** A URL's query pairs (none without a query). */
export function pairsOf(url: string): string[] {
  const q = url.indexOf('?');
  return q < 0 || q === url.length - 1 ? [] : url.slice(q + 1).split('&');
}

/**
 * Whether `canonical` is `url` less some of its query pairs (the same path, each of its pairs one
 * of `url`'s): a key ignored or a view, which `ParamLearner` and `ViewKeys` judge, not
 * `KnownCopies`.
 */
export function isUrlLessPairs(url: string, canonical: string): boolean {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const cq = canonical.indexOf('?');
  if ((cq < 0 ? canonical : canonical.slice(0, cq)) !== path) return false;
  if (cq < 0) return true;
  const own = new Set(pairsOf(url));
  return pairsOf(canonical).every((p) => own.has(p));
}

/** Query pairs of one link looked at by `carriesPage` (a hostile link may carry thousands). */
const MAX_CARRIED_PAIRS = 8;

/**
 * Whether `link` carries `page` (both canonical http(s) URLs) as the value of one of its first
 * query pairs — the page's URL, or its path and query, decoded, a `#fragment` after it aside: a
 * link *about* the page, a login or share form told where to return
 * (`/user/login?destination=/comment/5`, `?returnurl=http%3A%2F%2F…`). Each page of a site has
 * its own, so such a link is new on every copy and says nothing of pages the crawl has not met.
 */
export function carriesPage(link: string, page: string): boolean {
  const pairs = pairsOf(link);
  if (pairs.length === 0) return false;
  const path = page.slice(Math.max(0, originEnd(page)));
  for (let i = 0; i < pairs.length && i < MAX_CARRIED_PAIRS; i++) {
    let v = valueOf(pairs[i]!);
    if (v.length < path.length) continue;
    try {
      v = decodeURIComponent(v.replace(/\+/g, ' '));
    } catch {
      continue;
    }
    const hash = v.indexOf('#');
    if (hash >= 0) v = v.slice(0, hash);
    if (v === page || v === path) return true;
  }
  return false;
}
