/**
 * NamedCopies: URL shapes whose pages are copies of another page of their site that they name.
 *
 * Drupal answers a comment's permalink `/comment/512` with the whole page of the article the
 * comment is on — the permalink among its links — naming the article (`/article/a-slug`) its
 * rel=canonical, and so it does under each language prefix (`/de/comment/512`). Each is a request
 * for a page the crawl has: on a Drupal-shaped loopback site of 60 articles in three languages,
 * 270 of 651 requests were comment permalinks. No other lesson sees it: the URL has no query
 * (`KnownCopies`, `ParamLearner`, `ViewKeys`), and the page it names is not its parent or under it
 * (`ParentRedirects`; an AMP view `/a-slug/amp` naming `/a-slug` is that lesson's).
 *
 * The signature, per *shape* (`namedCopyShapeOf`): origin, and the path with each segment kept
 * when it is a word (letters and `_`, at most 24: `comment`, `de`, `node`) and `*` otherwise (a
 * number, a slug, an id): `/comment/*`, `/de/comment/*`. None for a URL with a query, with fewer
 * than two segments, or whose segments are all words (no siblings) or none (a blog's date
 * permalinks `/2024/05/a-post/` would share one shape across every post).
 *
 * A fetch of a page (2xx, whole, not a soft-404), judged by the engine before its outcome
 * reaches the frontier (`namedCopyVerdict` on what the frontier holds), is *quiet* — a copy — when
 * its rel=canonical names another URL of its origin in the crawl's scope (not the URL itself in
 * another spelling, `namesItself`; not a page above it on its path, `namesAncestor`, nor its
 * parent or a page under it, `ParentRedirects'`: naming one of those, a page is content when its
 * text is more than 3 bits off that page's as fetched, `namedAboveVerdict` — a site-wide canonical
 * to the home page must not hide pages of their own — else no evidence), and that page was
 * fetched with a page at a link
 * depth no greater than this one's and was not first met named by a copy (`viaCopy`: a copy
 * naming a page the crawl had no row for makes that row, so its later copies say nothing of pages
 * reached otherwise), its text within 3 simhash bits of this one's, this page links to itself by
 * a path (a permalink its named page shows; a skip link `#main` or a hreflang naming itself is
 * not one, `Outcome.selfLinked`; a copy with none is no evidence), and every same-origin
 * in-scope link it gives is one the crawl knows (the engine counts them). It is *content* when it
 * names nothing, or itself, or a page whose text is further off or whose links it does not all
 * repeat. *News* — a named page with no row or one that ended without a page, held deeper than
 * the copy, first met named by a copy, or on another origin in the scope — counts as content
 * under a lesson only (the siblings it refused may name pages nothing else reaches) and is
 * nothing before (the page may only not be reached yet); so is a redirect to a page the crawl
 * has no row for (a moved comment's permalink: a check that leads somewhere new lifts the
 * lesson). A named page held and not fetched yet, or out of the scope, a redirect to a page the
 * crawl holds, is no evidence.
 *
 * The lesson's rules are `ShapeLessons`' (eight copies and no content learn a shape; checks at the
 * 1st, 2nd, 4th, 8th and 16th refusals, then every 32nd; content bans, and a lifted lesson's
 * refused URLs are queued again); seeds and URLs fetched before are never refused.
 *
 * What a wrong lesson costs: a refused URL is one whose shape's eight URLs each served a copy of a
 * page the crawl had reached otherwise, linking itself, and none a page of its own; one of the
 * shape that would have served a page of its own, or named a page nothing else reaches, is refused
 * until a check meets such a page (then the lesson is lifted, banned for good, and its refused URLs
 * are queued again), and a URL refused after the run's last check stays refused while the lesson
 * holds, a resume included (`--no-learn-aliases` on a resume queues it again). `viaCopy` is not
 * kept by a checkpoint, nor shared between cluster nodes: after a resume, or on another node, a
 * page first met named by a copy reads as reached otherwise, and only the self-link rule stands
 * between its copies and a lesson (a shop's collection page linking itself by a path — a
 * breadcrumb — would pass it).
 *
 * Owns: the shape of a URL (`namedCopyShapeOf`) and what a page naming another page says
 * (`namedCopyVerdict`). Never: look a URL up itself (the engine answers from the frontier),
 * fetch, refuse or count a URL (`CrawlCounts.namedCopies`), or clocks.
 */
import { NEAR_DUP_DISTANCE, hamming } from '../core/simhash.js';
import { InvalidArgumentError } from '../errors/index.js';
import { evictOldest } from '../lru/index.js';
import { urlHash32 } from './query.js';
import { MAX_SHAPE_LENGTH, type ShapeChange, ShapeLessons, type ShapeLessonsOptions, URL_PARTS } from './shapes.js';

/** A path segment kept in a shape: a word naming a section, a language, a view. */
const WORD_SEGMENT = /^[A-Za-z_]{1,24}$/;

/**
 * The shape of a canonical http(s) URL (see the module comment): origin, path segments kept when
 * words and `*` otherwise; undefined for a URL with a query, fewer than two segments, segments
 * all words (no siblings to learn from) or none (`/*\/*\/*\/`: a blog's date permalinks, every
 * post, would share one shape), or a shape longer than `MAX_SHAPE_LENGTH`.
 */
export function namedCopyShapeOf(url: string): string | undefined {
  const m = URL_PARTS.exec(url);
  if (m === null || (m[3] !== undefined && m[3] !== '?')) return undefined;
  let starred = false;
  let words = 0;
  let segments = 0;
  const path = m[2]!
    .split('/')
    .map((seg) => {
      if (seg === '') return seg;
      segments++;
      if (WORD_SEGMENT.test(seg)) {
        words++;
        return seg;
      }
      starred = true;
      return '*';
    })
    .join('/');
  if (!starred || words === 0 || segments < 2) return undefined;
  const shape = `${m[1]}${path}`;
  return shape.length > MAX_SHAPE_LENGTH ? undefined : shape;
}

/**
 * Whether `canonical` names `url` itself: the same URL in any letter case, with or without a
 * trailing slash (a page naming its own respelling is a page of its own; the respelling is
 * `PathCase`'s and `SlashRules`' to learn).
 */
export function namesItself(url: string, canonical: string): boolean {
  const a = url.toLowerCase();
  const b = canonical.toLowerCase();
  return a === b || a === `${b}/` || b === `${a}/`;
}

/**
 * Whether `canonical` names a page above `url` on its path (same origin assumed): its path, no
 * query, a leading part of the URL's ending at a `/` (`/category/news/` for
 * `/category/news/page/2/`, `/` for `/index.html`). That is a parent's page, `ParentRedirects`'
 * to judge where the URL has its shape; here no evidence either way.
 */
export function namesAncestor(url: string, canonical: string): boolean {
  const u = URL_PARTS.exec(url);
  const c = URL_PARTS.exec(canonical);
  if (u === null || c === null || c[3] !== undefined || u[1] !== c[1]) return false;
  const path = c[2]!;
  return u[2]!.startsWith(path.endsWith('/') ? path : `${path}/`);
}

/**
 * What a page naming a page above it (its parent, a page under the parent, an ancestor on its
 * path: not this lesson's copies) says of its shape, given that page's simhash as fetched
 * (undefined: not fetched with a page, or no text) and its own: content when the texts are more
 * than `NEAR_DUP_DISTANCE` bits apart — a page of its own under a site-wide canonical, which a
 * check of a learned shape must still lift — else nothing.
 */
export function namedAboveVerdict(aboveSimhash: bigint | undefined, simhash: bigint | undefined): 'content' | undefined {
  return aboveSimhash !== undefined && simhash !== undefined && hamming(aboveSimhash, simhash) > NEAR_DUP_DISTANCE ? 'content' : undefined;
}

/**
 * What the page a copy names is, as the frontier holds it (the engine looks it up):
 * `{ simhash, depth }` of a page fetched with one (simhash undefined when its text gave none);
 * 'queued' — held, not fetched with a page yet; 'missing' — no row, or one that ended without a
 * page (gone, refused, parked, disallowed).
 */
export type NamedPage = { readonly simhash: bigint | undefined; readonly depth: number; readonly viaCopy: boolean } | 'queued' | 'missing';

/**
 * What a fetch of a URL said (the engine judges, `#namedCopyLesson`): 'namedCopy' — a page naming
 * another page of its site canonical with that page's text and links, and a link to itself;
 * 'news' — one naming a page the crawl did not reach otherwise (counted as content, and only
 * under a lesson); 'content' — a page of its own.
 */
export type NamedCopyVerdict = 'namedCopy' | 'news' | 'content';

/**
 * What a page (2xx, whole, not a soft-404) naming `named` canonical says, at link depth `depth`
 * with `simhash`, `novelLinks` same-origin in-scope links the crawl did not know and a link to
 * itself or not (`linksItself`): news when the named page is missing, held deeper than this one
 * or first met named by a copy; content when it was fetched and the text is further off (or
 * missing on either side, beyond `NEAR_DUP_DISTANCE` bits) or a link is new; a copy when the text
 * and links agree and the page links to itself; undefined (no evidence) when they agree but it
 * does not, or while the named page is only queued.
 */
export function namedCopyVerdict(named: NamedPage, depth: number, simhash: bigint | undefined, novelLinks: number, linksItself: boolean): NamedCopyVerdict | undefined {
  if (named === 'queued') return undefined;
  if (named === 'missing' || named.viaCopy || named.depth > depth) return 'news';
  if (named.simhash === undefined || simhash === undefined || novelLinks > 0 || hamming(named.simhash, simhash) > NEAR_DUP_DISTANCE) return 'content';
  return linksItself ? 'namedCopy' : undefined;
}

/** Pages first met named by a copy remembered (`NamedCopies.namedUnheld`; oldest dropped). */
const MAX_NAMED_UNHELD = 1 << 16;

/** Learns the URL shapes whose pages are copies of other pages they name (see the module comment). */
export class NamedCopies extends ShapeLessons {
  /** Hashes (`urlHash32`) of pages a copy named while the crawl had no row for them: reached through a copy. */
  readonly #viaCopy = new Set<number>();

  /** Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<ShapeLessonsOptions> | null) {
    super('NamedCopies', namedCopyShapeOf, options);
  }

  /**
   * A page of a shape named `named` (canonical) while the crawl had no row for it: the row it
   * gets now comes from the copy (its links, or the page it names queued), so a later copy naming
   * it is no evidence that the shape names pages reached otherwise (`viaCopy`). Not kept by a
   * checkpoint (see the module comment).
   */
  namedUnheld(named: string): void {
    const h = urlHash32(named);
    this.#viaCopy.delete(h);
    this.#viaCopy.add(h);
    if (this.#viaCopy.size > MAX_NAMED_UNHELD) evictOldest(this.#viaCopy);
  }

  /** Whether `named` was first met named by a copy (`namedUnheld`; a 32-bit hash: a rare collision reads a page as such, the safe side). */
  viaCopy(named: string): boolean {
    return this.#viaCopy.has(urlHash32(named));
  }

  /**
   * A fetch of `url` (canonical) and what it said (`NamedCopyVerdict`). Returns 'learned' when it
   * taught its shape, 'lifted' when it ended a lesson (the shape's refused URLs may be queued
   * again), else undefined. News is evidence only under a lesson (before, the named page may only
   * not be reached yet).
   */
  observe(url: string, verdict: NamedCopyVerdict): ShapeChange {
    if (typeof url !== 'string') throw new InvalidArgumentError(`NamedCopies.observe: expected a URL string, received ${typeof url}`);
    if (verdict !== 'namedCopy' && verdict !== 'news' && verdict !== 'content') throw new InvalidArgumentError(`NamedCopies.observe: expected 'namedCopy', 'news' or 'content', received ${JSON.stringify(verdict)}`);
    if (verdict === 'news' && this.covers(url) === undefined) return undefined;
    return this.observeVerdict(url, verdict === 'namedCopy');
  }
}
