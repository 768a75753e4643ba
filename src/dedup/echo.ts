/**
 * NavigationEcho: a catch-all path that answers any suffix with the same relative navigation.
 *
 * A script serving every path below it (PATH_INFO, a catch-all route) whose menu is written as
 * relative links mints the same children again under each page: `/index.php/guide/` links
 * `guide/ api/ faq/`, so does `/index.php/guide/api/`, and `/index.php/guide/api/guide/`, … —
 * without end, and each page a little different (its breadcrumb names its path), so no soft-404
 * template forms, and a repeated-segment rule (TrapDetector) only stops a path once some name
 * comes back three times: a four-page site cost 111 fetches.
 *
 * The signature. Write N(X) for the names of the links of the page at directory X that are
 * immediate children of X (`X/name` or `X/name/`), P for the page's directory and A for an
 * ancestor directory (up to `MAX_LEVELS` up) whose page was seen, and S for the path segments
 * between them (`P = A + s1/…/sk/`, each with its `/`). P echoes A when
 *   1. S ⊆ N(A): the path was minted by A's own links;
 *   2. |N(A) ∩ N(P)| ≥ 2 and more than half of N(A): P repeats most of A's navigation;
 *   3. S ⊆ N(P): P links its own path's names once more (`/guide/api/` links `api/`); or A lies
 *      at or below a catch-all root — the A of an echo whose page did so — where the site was
 *      shown to answer any path (a page read before its root was found is judged without).
 * Then the page's child links named in N(A) are echoes, and `observe` names them to be dropped;
 * its other child links are its own and are followed (a CMS that expands the current section's
 * sub-menu: `/index.php/about/` adds `team/ history/`, the section's real pages); the page itself
 * was fetched and is kept. A page's echo depth is its ancestor's plus one (0 for a page that
 * echoes nothing); at `MAX_DEPTH` every child link is dropped, its own too: a catch-all page
 * that adds a page-specific relative link (`about-feed/` on `/site/about/`, `about-feed-feed/`
 * on `/site/about/about-feed/`) mints a new name at each level, without end.
 *
 * Why each condition. An equal-set test alone (the first version) failed both ways: versioned
 * docs (`/docs/` and `/docs/v1/` both linking `intro install … changelog`, v1 reached from a
 * versions page) and a shop's sale (`/shop/{men,women,kids}/`, `/shop/sale/{men,women,kids}/`)
 * were read as echoes and lost every page of the older versions and of the sale (a loopback docs
 * site: 11 of its 23 pages fetched) — 1 keeps them, no link of `/docs/` being named `v1/`; and a
 * menu that varies from page to page (the expanded sub-menu, or one page-specific link) was never
 * equal, so a 16-page CMS cost 2,282 fetches and a 6-page one ran past 3,000 (17, and 26 to 47
 * as its first pages come, now). 3 keeps a section that its parent does link and that reuses
 * most of its names (`/shop/` linking `men/ women/ kids/ sale/`, `/shop/sale/` linking `men/
 * women/ kids/`): a real section does not link itself as its own child, a catch-all's menu does;
 * the root waives it where a catch-all was shown, since a page-specific name (`/site/home-feed/`
 * links `home-feed-feed/`, not `home-feed/`) is told from a sale by nothing else — the same
 * sale below a root is read as an echo. `MAX_DEPTH` 4: relative menus nested four deep below the
 * root are followed whole (the deepest real pages of such a menu add no names of their own). Real
 * hierarchies name different children at each level, and pages that share a sub-navigation as
 * siblings (`/p/a/` and `/p/b/` both linking `overview/`) are not ancestors of one another. Links
 * are compared as the canonical URLs they resolve to, however the author wrote them: a template
 * that builds absolute paths from the request's path (`$_SERVER['PHP_SELF']`,
 * `{{ request.path }}`) echoes under a catch-all as relative links do.
 *
 * Owns: a bounded map of directory → its child names (the sorted 32-bit FNV-1a hashes, at most
 * `MAX_NAMES`; a directory with more is not kept) and its echo depth — the most recent 16,384
 * directories and `MAX_STORED_NAMES` names in all — and the most recent `MAX_ROOTS` catch-all
 * roots. Never: fetch, park or refuse a URL (the engine drops the links and counts them), or
 * look across origins.
 */

import { domainHash } from '../prioritize/opic.js';
import { originEnd } from '../url/host.js';
import { evictOldest } from '../lru/index.js';

/** Directories remembered (least recently recorded out first). */
const MAX_DIRECTORIES = 16_384;
/** Child names kept per directory: one linking more is a listing, no menu, and is not kept to be echoed. */
const MAX_NAMES = 256;
/** Child names kept in all (their hashes: 1 MiB), the least recently recorded directories out first. */
const MAX_STORED_NAMES = 262_144;
/** Catch-all roots remembered (least recently found out first). */
const MAX_ROOTS = 1_024;
/** Ancestor levels looked at above a page's directory. */
const MAX_LEVELS = 8;
/** The echo depth at which a page's own child links are dropped too (see the module comment). */
const MAX_DEPTH = 4;

/** What is kept of a directory's page. */
interface Directory {
  /** Its child names' hashes, sorted. */
  readonly names: Uint32Array;
  /** Its echo depth: 0 when it echoed no ancestor. */
  readonly depth: number;
}

/** The `scheme://authority` of a canonical URL and the directory of its path (up to its last `/`), or undefined. */
function directoryOf(url: string): { origin: string; dir: string } | undefined {
  const end = originEnd(url);
  if (end < 0 || url.charCodeAt(end) !== 0x2f) return undefined;
  const query = url.search(/[?#]/);
  const path = url.slice(end, query < 0 ? url.length : query);
  return { origin: url.slice(0, end), dir: path.slice(0, path.lastIndexOf('/') + 1) };
}

/** Whether `sorted` holds `h` (binary search). */
function holds(sorted: Uint32Array, h: number): boolean {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v === h) return true;
    if (v < h) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/** Whether every segment of `between` (`a/b/`, each with its `/`) is one of `names`. */
function mintedBy(names: Uint32Array, between: string): boolean {
  let from = 0;
  while (from < between.length) {
    const to = between.indexOf('/', from) + 1;
    if (!holds(names, domainHash(between.slice(from, to)))) return false;
    from = to;
  }
  return true;
}

/** How many of `theirs` are in `own` (both sorted). */
function shared(theirs: Uint32Array, own: Uint32Array): number {
  let n = 0;
  for (let i = 0, j = 0; i < theirs.length && j < own.length; ) {
    if (theirs[i] === own[j]) {
      n++;
      i++;
      j++;
    } else if (theirs[i]! < own[j]!) i++;
    else j++;
  }
  return n;
}

/** See the module comment. */
export class NavigationEcho {
  readonly #dirs = new Map<string, Directory>();
  #stored = 0;
  readonly #roots = new Set<string>();

  /** Directories remembered. */
  get size(): number {
    return this.#dirs.size;
  }

  /**
   * A page at `pageUrl` with these links (canonical URLs): records its child names, and returns
   * the child links to drop when it echoes an ancestor directory (see the module comment;
   * undefined when none is to be dropped).
   */
  observe(pageUrl: string, links: readonly { readonly url: string }[]): Set<string> | undefined {
    const at = directoryOf(pageUrl);
    if (at === undefined) return undefined;
    const prefix = at.origin + at.dir;
    // Each distinct name and its index; each child link and the index of its name.
    const index = new Map<string, number>();
    const children: string[] = [];
    const childNames: number[] = [];
    for (const l of links) {
      const u = l.url;
      if (!u.startsWith(prefix) || u.length === prefix.length) continue;
      let rest = u.slice(prefix.length);
      const q = rest.search(/[?#]/);
      if (q >= 0) rest = rest.slice(0, q);
      const slash = rest.indexOf('/');
      // An immediate child: `name` or `name/`, nothing deeper.
      if (rest === '' || (slash >= 0 && slash !== rest.length - 1)) continue;
      let k = index.get(rest);
      if (k === undefined) index.set(rest, (k = index.size));
      children.push(u);
      childNames.push(k);
    }
    if (index.size < 2) return undefined;
    // 32-bit FNV-1a (the prioritizer's string hash) of each name, by index; `own` sorted.
    const hashes = Array.from(index.keys(), domainHash);
    const own = Uint32Array.from(hashes).sort();
    // The ancestors, nearest first.
    const above: string[] = [];
    for (let dir = at.dir; above.length < MAX_LEVELS && dir.length > 1; ) {
      dir = dir.slice(0, dir.lastIndexOf('/', dir.length - 2) + 1);
      above.push(dir);
    }
    // One past the farthest catch-all root among them: `above[0 … rooted - 1]` lie at or below it.
    let rooted = above.length;
    while (rooted > 0 && !this.#roots.has(at.origin + above[rooted - 1]!)) rooted--;
    let echoed: Directory | undefined;
    for (let level = 0; level < above.length && echoed === undefined; level++) {
      const theirs = this.#dirs.get(at.origin + above[level]!);
      if (theirs === undefined) continue;
      const between = at.dir.slice(above[level]!.length);
      const common = shared(theirs.names, own);
      if (common < 2 || common * 2 <= theirs.names.length || !mintedBy(theirs.names, between)) continue;
      if (mintedBy(own, between)) this.#root(at.origin + above[level]!);
      else if (level >= rooted) continue;
      echoed = theirs;
    }
    const depth = echoed === undefined ? 0 : echoed.depth + 1;
    this.#record(prefix, own, depth);
    if (echoed === undefined) return undefined;
    const drop = new Set<string>();
    for (let i = 0; i < children.length; i++) if (depth >= MAX_DEPTH || holds(echoed.names, hashes[childNames[i]!]!)) drop.add(children[i]!);
    return drop.size > 0 ? drop : undefined;
  }

  /** Keeps `names` and `depth` for directory `key` (not when past `MAX_NAMES`), within the bounds. */
  #record(key: string, names: Uint32Array, depth: number): void {
    const old = this.#dirs.get(key);
    if (old !== undefined) {
      this.#stored -= old.names.length;
      this.#dirs.delete(key);
    }
    if (names.length > MAX_NAMES) return;
    this.#dirs.set(key, { names, depth });
    this.#stored += names.length;
    while (this.#dirs.size > MAX_DIRECTORIES || this.#stored > MAX_STORED_NAMES) {
      if (evictOldest(this.#dirs, (k) => void (this.#stored -= this.#dirs.get(k)!.names.length)) === undefined) break;
    }
  }

  /** Remembers directory `key` as a catch-all root. */
  #root(key: string): void {
    this.#roots.delete(key);
    this.#roots.add(key);
    if (this.#roots.size > MAX_ROOTS) evictOldest(this.#roots);
  }
}
