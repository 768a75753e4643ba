/**
 * PagingEnd: a listing that pages on past its last page. Many shops and CMSs answer
 * `?page=N` beyond the end with "no more products" — a 200, the site's navigation and a "next"
 * link to `?page=N+1` — so the crawl walks page after empty page until the depth cap: a
 * loopback shop of 45 items (3 pages) cost 29 fetches of empty pages up to `--max-depth 32`.
 * The pages differ from one another only by their number (title, the next and previous links),
 * so no soft-404 template forms early enough and the simhash of a tiny page moves 11–14 bits.
 *
 * The signature: a page of a paging series — its URL has a query key named as pagination
 * (`page`, `p`, `pg`, `paged`, `start`, `offset`, `skip`, …) with a number for value — whose
 * links outside the series (every link but the same URL with another number for that key)
 * are exactly those of an earlier page of the same series, and whose body is that page's but
 * for its digits (the title's and the paging links' numbers, "page 5 of 3"). A page past the
 * end repeats the one before it; real pages of a listing link different items, and pages of a
 * thread or of search results show different words. (A listing of numbers alone — a table of
 * figures with no link but the paging ones — would read as past its end after two pages.) Then the page's links to later pages of the series are named to be dropped
 * (the page itself was fetched and is kept): the walk stops one page after the first empty
 * one. Paging in the path is read only where a segment names it — `/blog/page/5/`, `/seite/5`,
 * `/news/page-5` (`page`, `pg`, `seite`, `pagina`, `strona`, then the number, or `page-N` /
 * `pageN` as one segment; the last such in the path): a bare number in a path is too often the
 * item itself (`/photo/123`, a gallery's next link), which an empty page can not be told from. A
 * blog paged so past its end (a CMS that answers `/page/40/` with "nothing here" and a next link)
 * cost 27 fetches of empty pages on a loopback blog of 30 posts on 6 listing pages (65 requests;
 * 40 now). A viewer paged so (`/comic/page/5`, `/book/12/page/5/`: one image and prev/next links
 * a page) is told apart by its image: digits inside `src`/`srcset` values are read (`pagingHash`),
 * in the query's series too.
 *
 * Owns: a bounded map of series → the signatures of its pages seen (the most recent 16,384
 * series, at most 64 signatures each; ≈ 3 MB at worst). Never: fetch, park or refuse a URL
 * (the engine drops the links and counts them), or look across series.
 */
import { domainHash } from '../prioritize/opic.js';
import { evictOldest, lruSet } from '../lru/index.js';

/** Series remembered (least recently observed out first). */
const MAX_SERIES = 16_384;
/** Signatures kept per series (a listing of more pages keeps its latest ones). */
const MAX_SIGNATURES = 64;

/**
 * Query keys that number the pages of a listing (compared lower-cased): English names, the
 * words `PATH_PAGING` reads in a path (`seite`, `pagina`, `strona`) and ASP.NET's `PageIndex`.
 */
const PAGING_KEYS = new Set([
  'page', 'p', 'pg', 'paged', 'pagenum', 'page_num', 'pageno', 'page_no', 'pagenumber', 'currentpage', 'pn', 'pageindex', 'page_index',
  'seite', 'pagina', 'strona', 'start', 'offset', 'skip', 'from',
]);

/**
 * Whether query pair `pair` (`key=value`) asks for a page of a listing past its first: a paging
 * key (`PAGING_KEYS`) with a number above 1 (`page=2`, `offset=20`; not `page=1`, `start=0`).
 * `ParamLearner` never drops such a pair from a link: a key learned from first pages that name the
 * listing canonical (`?page=1`) must not take its later pages away.
 */
export function isLaterPagePair(pair: string): boolean {
  const eq = pair.indexOf('=');
  if (eq <= 0 || !PAGING_KEYS.has(pair.slice(0, eq).toLowerCase())) return false;
  const value = pair.slice(eq + 1);
  return /^\d{1,9}$/.test(value) && Number(value) > 1;
}

/**
 * Paging in the path: a segment naming the page, then the number as the next segment
 * (`/page/5/`), or `page-5` / `page5` as one segment; the last such, so a page number beneath an
 * item's own (`/t/page/2/page/3`) is the one read.
 */
const PATH_PAGING = /^(.*\/(?:(?:page|pg|seite|pagina|strona)\/|page-?))(\d{1,9})((?:\/[^/?#]*)*)$/i;

/** A URL's paging key and number, and its series (the URL without that key), or undefined. */
function seriesOf(url: string): { series: string; key: string; n: number } | undefined {
  const q = url.indexOf('?');
  if (q < 0) return pathSeriesOf(url);
  const hash = url.indexOf('#', q);
  const query = url.slice(q + 1, hash < 0 ? url.length : hash);
  const parts = query.split('&');
  for (let i = 0; i < parts.length; i++) {
    const eq = parts[i]!.indexOf('=');
    if (eq <= 0) continue;
    const key = parts[i]!.slice(0, eq);
    const value = parts[i]!.slice(eq + 1);
    if (!PAGING_KEYS.has(key.toLowerCase()) || !/^\d{1,9}$/.test(value)) continue;
    const rest = parts.filter((_, j) => j !== i).join('&');
    return { series: `${url.slice(0, q)}?${rest}\u0000${key}`, key, n: Number(value) };
  }
  return pathSeriesOf(url);
}

/** `seriesOf` for paging in the path (`PATH_PAGING`): the series is the URL with the number taken out. */
function pathSeriesOf(url: string): { series: string; key: string; n: number } | undefined {
  const hash = url.indexOf('#');
  const noHash = hash < 0 ? url : url.slice(0, hash);
  const q = noHash.indexOf('?');
  const path = q < 0 ? noHash : noHash.slice(0, q);
  // Past the origin only: `https://page5.example/` names no page.
  const origin = /^https?:\/\/[^/]+/.exec(path);
  if (origin === null) return undefined;
  const m = PATH_PAGING.exec(path.slice(origin[0].length));
  if (m === null) return undefined;
  return { series: `${origin[0]}${m[1]}\u0001${m[3]}${q < 0 ? '' : noHash.slice(q)}\u0000`, key: '', n: Number(m[2]) };
}

/**
 * 32-bit FNV-1a of `bytes` without their ASCII digits (keep in sync with `domainHash`'s constants):
 * pages that differ only by numbers (a page's own number, a date) hash alike. With
 * `keepSourceDigits`, the digits inside an attribute value whose name ends in `src` (`src`,
 * `data-src`) or is `srcset` are read (`pagingHash`); the name is compared lower-cased, and a
 * value unquoted ends at white space or `>`.
 */
export function digitlessHash(bytes: Uint8Array, keepSourceDigits = false): number {
  let h = 0x811c9dc5;
  let keep = 0; // inside a source value: the byte that closes it (a quote, or 0x20 for unquoted)
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (keep !== 0) {
      if (b === keep || (keep === 0x20 && (b === 0x20 || b === 0x3e || b === 0x09 || b === 0x0a || b === 0x0d))) keep = 0;
      else {
        h = Math.imul(h ^ b, 0x01000193);
        continue;
      }
    } else if (keepSourceDigits && b === 0x3d /* = */ && (endsWithName(bytes, i, 'src') || endsWithName(bytes, i, 'srcset'))) {
      const q = bytes[i + 1];
      keep = q === 0x22 || q === 0x27 ? q : 0x20;
      if (keep !== 0x20) {
        // The opening quote is part of the name's side, not the value.
        h = Math.imul(h ^ b, 0x01000193);
        h = Math.imul(h ^ q!, 0x01000193);
        i++;
        continue;
      }
    }
    if (b >= 0x30 && b <= 0x39) continue;
    h = Math.imul(h ^ b, 0x01000193);
  }
  return h >>> 0;
}

/**
 * `digitlessHash` reading the digits of image sources: a book's, comic's or slide viewer's pages
 * (`/comic/page/5`) differ only by the image they show (`<img src="/strips/005.jpg">`), and are
 * no listing past its end; a page past a listing's end shows the images the one before it did.
 */
export function pagingHash(bytes: Uint8Array): number {
  return digitlessHash(bytes, true);
}

/** Whether the bytes before `end` spell `name` (ASCII, compared lower-cased). */
function endsWithName(bytes: Uint8Array, end: number, name: string): boolean {
  if (end < name.length) return false;
  for (let k = 0; k < name.length; k++) if ((bytes[end - name.length + k]! | 0x20) !== name.charCodeAt(k)) return false;
  return true;
}

/** See the module comment. */
export class PagingEnd {
  readonly #series = new Map<string, Set<string>>();

  /** Series remembered. */
  get size(): number {
    return this.#series.size;
  }

  /**
   * A page at `pageUrl` (canonical) with these links (canonical) and (decoded) body; none:
   * nothing is read: records its signature in its series, and returns the links to later
   * pages of the series to drop when an earlier page had the same one.
   */
  observe(pageUrl: string, links: readonly { readonly url: string }[], body: Uint8Array | undefined): Set<string> | undefined {
    if (body === undefined || body.length === 0) return undefined;
    const at = seriesOf(pageUrl);
    if (at === undefined) return undefined;
    const outside: string[] = [];
    const later: string[] = [];
    for (const l of links) {
      const s = seriesOf(l.url);
      if (s !== undefined && s.series === at.series) {
        if (s.n > at.n) later.push(l.url);
      } else {
        outside.push(l.url);
      }
    }
    // 32-bit FNV-1a of the sorted links (the prioritizer's string hash) and of the body's bytes
    // but its ASCII digits outside image sources (`pagingHash`).
    const signature = `${domainHash(outside.sort().join('\n'))}:${pagingHash(body)}`;
    const seen = this.#series.get(at.series) ?? new Set<string>();
    lruSet(this.#series, at.series, seen, MAX_SERIES);
    if (seen.has(signature)) return later.length > 0 ? new Set(later) : undefined;
    seen.add(signature);
    if (seen.size > MAX_SIGNATURES) evictOldest(seen);
    return undefined;
  }
}
