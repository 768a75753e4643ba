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
 * directory. Such a page's child links are echoes of the ancestor's, and `observe` names them
 * to be dropped; the page itself was fetched and is kept. A real hierarchy names different
 * children at each level, and pages that share a sub-navigation as siblings (`/p/a/` and `/p/b/`
 * both linking `overview/`) are not ancestors of one another.
 *
 * Owns: a bounded map of directory → hash of its child-name set (32-bit FNV-1a of the sorted
 * names; the most recent 16,384 directories, ≈ 1.5 MB). Never: fetch, park or refuse a URL
 * (the engine drops the links and counts them), or look across origins.
 */

import { domainHash } from '../prioritize/opic.js';
import { originEnd } from '../url/host.js';
import { evictOldest } from '../lru/index.js';

/** Directories remembered (least recently recorded out first). */
const MAX_DIRECTORIES = 16_384;
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

/** See the module comment. */
export class NavigationEcho {
  readonly #sets = new Map<string, number>();

  /** Directories remembered. */
  get size(): number {
    return this.#sets.size;
  }

  /**
   * A page at `pageUrl` with these links (canonical URLs): records its child-name set, and
   * returns the child links to drop when an ancestor directory had the same set (undefined
   * when none is to be dropped).
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
    // 32-bit FNV-1a (the prioritizer's string hash).
    const hash = domainHash(names.sort().join('\n'));
    let echo = false;
    let dir = at.dir;
    for (let level = 0; level < MAX_LEVELS && dir.length > 1; level++) {
      dir = dir.slice(0, dir.lastIndexOf('/', dir.length - 2) + 1);
      if (this.#sets.get(at.origin + dir) === hash) {
        echo = true;
        break;
      }
    }
    this.#sets.delete(prefix);
    this.#sets.set(prefix, hash);
    if (this.#sets.size > MAX_DIRECTORIES) evictOldest(this.#sets);
    return echo ? new Set(children) : undefined;
  }
}
