/**
 * NamedCopies: URL shapes whose pages are copies of another page of their site that they name.
 *
 * Drupal answers a comment's permalink `/comment/512` with the whole page of the article the
 * comment is on, naming the article (`/article/a-slug`) its rel=canonical, and so it does under
 * each language prefix (`/de/comment/512`); without its redirect module it answers `/node/12`
 * with the article its alias names; a print view or an AMP view names the page it renders. Each
 * is a request for a page the crawl has: on a Drupal-shaped loopback site of 60 articles in three
 * languages, 270 of 651 requests were comment permalinks. No other lesson sees it: the URL has no
 * query (`KnownCopies`, `ParamLearner`, `ViewKeys`), and the page it names is not its parent or
 * under it (`ParentRedirects`).
 *
 * The signature, per *shape* (`namedCopyShapeOf`): origin, and the path with each segment kept
 * when it is a word (letters and `_`, at most 24: `comment`, `de`, `node`, `amp`) and `*`
 * otherwise (a number, a slug, an id): `/comment/*`, `/de/comment/*`, `/article/*\/amp`. A URL
 * with a query has none, nor one whose segments are all words (it has no siblings to learn from).
 * A fetch (judged by the engine before its outcome reaches the frontier, `namedCopyVerdict` on
 * what the frontier holds) of a page (2xx, whole, not a soft-404) is *quiet* — a copy — when its
 * rel=canonical names another URL of its origin in the crawl's scope (not the URL itself in
 * another spelling, not its parent or a page under it: those are `ParentRedirects'`) that the
 * crawl fetched with a page, at a link depth no greater than this page's (reached without it),
 * with text within 3 simhash bits of that page's as fetched, and every same-origin in-scope link
 * it gives is one the crawl knows. It is *content* when it names nothing, or itself, or a page
 * whose text is further off or whose links it does not all repeat. The rest is no evidence
 * before a lesson — a named page held and not fetched yet, held deeper than the copy (reached
 * through copies, maybe only so), with no row (the engine queues it as the copy's link) or one
 * that ended without a page, a canonical on another origin or outside the scope — and under a
 * lesson all but the first are *news*, counted as content: the siblings it refused may name
 * pages nothing else reaches.
 *
 * The lesson's rules are `ShapeLessons`' (eight copies and no content learn a shape; checks at the
 * 1st, 2nd, 4th, 8th and 16th refusals, then every 32nd; content bans, and a lifted lesson's
 * refused URLs are queued again); seeds and URLs fetched before are never refused.
 *
 * What a wrong lesson costs: a refused URL is one whose shape's eight URLs each served a copy of a
 * page the crawl had reached at no greater depth, and none a page of its own; one of the shape
 * that would have served a page of its own, or named a page nothing else reaches, is refused until
 * a check meets such a page (then the lesson is lifted, banned for good, and its refused URLs are
 * queued again), and a URL refused after the run's last check stays refused while the lesson holds,
 * a resume included (`--no-learn-aliases` on a resume queues it again).
 *
 * Owns: the shape of a URL (`namedCopyShapeOf`) and what a page naming another page says
 * (`namedCopyVerdict`). Never: look a URL up itself (the engine answers from the frontier),
 * fetch, refuse or count a URL (`CrawlCounts.namedCopies`), or clocks.
 */
import { NEAR_DUP_DISTANCE, hamming } from '../core/simhash.js';
import { InvalidArgumentError } from '../errors/index.js';
import { evictOldest } from '../lru/index.js';
import { urlHash32 } from './query.js';
import { MAX_SHAPE_LENGTH, type ShapeChange, ShapeLessons, type ShapeLessonsOptions } from './shapes.js';

const URL_PARTS = /^(https?:\/\/[^/?#]+)(\/[^?#]*)(\?[^#]*)?(?:#.*)?$/;
/** A path segment kept in a shape: a word naming a section, a language, a view. */
const WORD_SEGMENT = /^[A-Za-z_]{1,24}$/;

/**
 * The shape of a canonical http(s) URL (see the module comment): origin, path segments kept when
 * words and `*` otherwise; undefined for a URL with a query, one whose segments are all words,
 * or a shape longer than `MAX_SHAPE_LENGTH`.
 */
export function namedCopyShapeOf(url: string): string | undefined {
  const m = URL_PARTS.exec(url);
  if (m === null || (m[3] !== undefined && m[3] !== '?')) return undefined;
  let starred = false;
  const path = m[2]!
    .split('/')
    .map((seg) => {
      if (seg === '' || WORD_SEGMENT.test(seg)) return seg;
      starred = true;
      return '*';
    })
    .join('/');
  if (!starred) return undefined;
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
 * What the page a copy names is, as the frontier holds it (the engine looks it up):
 * `{ simhash, depth }` of a page fetched with one (simhash undefined when its text gave none);
 * 'queued' — held, not fetched with a page yet; 'missing' — no row, or one that ended without a
 * page (gone, refused, parked, disallowed).
 */
export type NamedPage = { readonly simhash: bigint | undefined; readonly depth: number; readonly viaCopy: boolean } | 'queued' | 'missing';

/**
 * What a fetch of a URL said (the engine judges, `#namedCopyLesson`): 'namedCopy' — a page naming
 * another page of its site canonical with that page's text and links; 'news' — one naming a page
 * the crawl does not hold fetched at no greater depth (counted as content, and only under a
 * lesson); 'content' — a page of its own.
 */
export type NamedCopyVerdict = 'namedCopy' | 'news' | 'content';

/**
 * What a page (2xx, whole, not a soft-404) naming `named` canonical says, at link depth `depth`
 * with `simhash` and `novelLinks` same-origin in-scope links the crawl did not know: a copy when
 * the named page was fetched with a page at no greater depth, within `NEAR_DUP_DISTANCE` bits of
 * this page's text, and no link is new; content when it was fetched and the text is further off
 * (or missing on either side) or a link is new; news when the named page is missing or held
 * deeper than this one; undefined (no evidence) while it is only queued.
 */
export function namedCopyVerdict(named: NamedPage, depth: number, simhash: bigint | undefined, novelLinks: number): NamedCopyVerdict | undefined {
  if (named === 'queued') return undefined;
  if (named === 'missing' || named.viaCopy || named.depth > depth) return 'news';
  if (named.simhash === undefined || simhash === undefined || novelLinks > 0) return 'content';
  return hamming(named.simhash, simhash) <= NEAR_DUP_DISTANCE ? 'namedCopy' : 'content';
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
   * checkpoint: after a resume such a page has a row, and a refused copy naming it loses nothing.
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
