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
 * The signature: the set of names of a page's links that are immediate children of its own
 * directory (`dir/name` or `dir/name/`, at least two) equals the set of a page at an ancestor
 * directory, and every path segment between that ancestor and the page's directory is one of
 * the ancestor's own child names (`name/`): the path was minted by the ancestor's links. Such a
 * page's child links are echoes of the ancestor's, and `observe` names them to be dropped; the
 * page itself was fetched and is kept. A real hierarchy names different children at each level;
 * pages that share a sub-navigation as siblings (`/p/a/` and `/p/b/` both linking `overview/`)
 * are not ancestors of one another; and a sub-section that reuses its parent's child names is
 * reached by no link of the parent named like it: versioned docs (`/docs/` and `/docs/v1/` both
 * linking `intro install … changelog`, v1 linked from elsewhere) or a shop's sale
 * (`/shop/{men,women,kids}/` and `/shop/sale/{men,women,kids}/`) lost every page of the older
 * versions and of the sale to the equal sets alone (a loopback docs site: 10 of its 12 versioned
 * pages never fetched). Links are compared as the canonical URLs they resolve to, however the
 * author wrote them: a template that builds absolute paths from the request's path
 * (`$_SERVER['PHP_SELF']`, `{{ request.path }}`) echoes under a catch-all as relative links do.
 *
 * Owns: a bounded map of directory → its child names (the sorted 32-bit FNV-1a hashes, at most
 * `MAX_NAMES`; a directory with more is not kept) — the most recent 16,384 directories and
 * `MAX_STORED_NAMES` names in all. Never: fetch, park or refuse a URL (the engine drops the links
 * and counts them), or look across origins.
 */

import { domainHash } from '../prioritize/opic.js';
import { originEnd } from '../url/host.js';
import { evictOldest } from '../lru/index.js';

/** Directories remembered (least recently recorded out first). */
const MAX_DIRECTORIES = 16_384;
/** Child names kept per directory: a page linking more is a listing, no menu to echo. */
const MAX_NAMES = 256;
/** Child names kept in all (their hashes: 1 MiB), the least recently recorded directories out first. */
const MAX_STORED_NAMES = 262_144;
/** Ancestor levels looked at above a page's directory. */
const MAX_LEVELS = 8;

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

/** See the module comment. */
export class NavigationEcho {
  readonly #names = new Map<string, Uint32Array>();
  #stored = 0;

  /** Directories remembered. */
  get size(): number {
    return this.#names.size;
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
    const names: string[] = [];
    const children: string[] = [];
    for (const l of links) {
      const u = l.url;
      if (!u.startsWith(prefix) || u.length === prefix.length) continue;
      let rest = u.slice(prefix.length);
      const q = rest.search(/[?#]/);
      if (q >= 0) rest = rest.slice(0, q);
      const slash = rest.indexOf('/');
      // An immediate child: `name` or `name/`, nothing deeper.
      if (rest === '' || (slash >= 0 && slash !== rest.length - 1)) continue;
      if (!names.includes(rest)) names.push(rest);
      children.push(u);
    }
    if (names.length < 2) return undefined;
    // 32-bit FNV-1a (the prioritizer's string hash) of each name, sorted.
    const own = Uint32Array.from(names, domainHash).sort();
    let echo = false;
    let dir = at.dir;
    for (let level = 0; level < MAX_LEVELS && dir.length > 1; level++) {
      dir = dir.slice(0, dir.lastIndexOf('/', dir.length - 2) + 1);
      const theirs = this.#names.get(at.origin + dir);
      if (theirs !== undefined && theirs.length === own.length && theirs.every((h, i) => h === own[i]) && mintedBy(theirs, at.dir.slice(dir.length))) {
        echo = true;
        break;
      }
    }
    this.#forget(prefix);
    if (own.length <= MAX_NAMES) {
      this.#names.set(prefix, own);
      this.#stored += own.length;
      while (this.#names.size > MAX_DIRECTORIES || this.#stored > MAX_STORED_NAMES) {
        if (evictOldest(this.#names, (k) => void (this.#stored -= this.#names.get(k)!.length)) === undefined) break;
      }
    }
    return echo ? new Set(children) : undefined;
  }

  /** Drops the record of directory `key`, if any. */
  #forget(key: string): void {
    const old = this.#names.get(key);
    if (old === undefined) return;
    this.#stored -= old.length;
    this.#names.delete(key);
  }
}
