/**
 * ParentRedirects: URL shapes whose URLs redirect into their parent page, or serve it.
 *
 * A forum writes, on each post, a permalink to it: XenForo's `#5` links
 * `/threads/title.123/post-456`, and answers it with a 301 to the thread's page that holds the
 * post (`/threads/title.123/page-2#post-456`); `/threads/title.123/latest` and `/unread` redirect
 * to a page of the thread too. Each is a request for a page the crawl reaches anyway from the
 * thread: on a XenForo-shaped loopback forum of 36 threads and 798 posts, `meguri crawl` made 907
 * requests, 834 of them such redirects, for 73 pages. No other lesson sees it: the URL has no
 * query (`KnownCopies` learns worded query pairs), and its target is not the URL respelled
 * (`SlashRules`, `PathCase`, `OriginAliases`).
 *
 * The signature, per *shape*: origin, the first path segment, `*` for each middle segment, and
 * the last segment with each run of digits as `*` (`http://f.test/threads/*\/post-*`,
 * `http://f.test/t/*\/*\/*`); a URL with a query, or with fewer than two segments, or naming a
 * directory (ending `/`), has none. Its *parent* is the URL less its last segment. A fetch
 * (judged by the engine before its outcome reaches the frontier) is *quiet* when it answered a
 * redirect to the parent page itself (with or without the trailing slash, no query), or under
 * the parent's path to a page the crawl holds (XenForo's `page-2`, where the permalink was found;
 * asked before the outcome makes the target a row, and not on a relink, a redirected URL fetched
 * again, whose target row may be its own first redirect's) — never to the URL's own path or under
 * it, in any letter case (an added slash or a respelling is another lesson's, and the page it leads to is
 * the URL's own). It is *content* when it answered a page of its own (2xx, whole, not a
 * soft-404), and *news* — counted as content — when it redirected under the parent to a page the
 * crawl did not hold while the parent had been fetched: a slug completed
 * (`/news/123` → `/news/123-headline`, `/news/?story=123`), the only way to that page. Anything
 * else (a redirect to another origin or outside the parent, one met before its parent was
 * fetched, an error) is no evidence.
 *
 * A login page under the parent that the crawl holds (`/user/5` → `/user/login`) is quiet: for
 * this visitor those URLs are the login.
 *
 * A page that serves its parent is quiet too (*a copy*): 2xx, whole, not a soft-404, its
 * rel=canonical the parent page (with or without the trailing slash) or a page under it as
 * `parentRedirectOf` reads a redirect's target (a topic's `?page=2`, which Discourse's permalink
 * `/t/slug/123/25` names), its text within 3 simhash bits of that page's as fetched, and every
 * same-origin link it gives one the crawl knows (the named page's links were met when it was
 * fetched): `parentCopyVerdict`. A Q&A site's answer link `/questions/7013/how-to-x/9101` shows
 * the question's page naming `/questions/7013/how-to-x`; on a loopback StackExchange-shaped site
 * every answer link led to one (96 requests for 40 questions). Once the parent was fetched, a
 * page naming it or a page under it is content otherwise — text further off (a long topic's
 * `/t/slug/123/40` showing other posts), a link the crawl did not know (a category's page 2 under
 * a large template that names page 1 canonical, `/c/shoes/2`, links page 3), no simhash on either
 * side, or under a lesson a page under the parent the crawl does not hold (no row, or one that
 * ended without a page: news — a check finding a page reached no other way lifts the lesson) —
 * but a page under the parent the crawl holds and has not fetched with a page yet (queued,
 * redirected), or before a lesson one it does not hold (a topic's page 3, not reached yet; one
 * that failed for a while), is no evidence; before the parent was fetched nothing is (there is
 * nothing to compare with, and a copy met first must not mark its shape for the run). A page
 * under the parent the crawl has no row for is queued as the copy's link (the engine adds it).
 *
 * The lesson's rules are `ShapeLessons`' (src/dedup/shapes.ts: eight quiet URLs and no content
 * learn a shape; checks at the 1st, 2nd, 4th, 8th and 16th refusals, then every 32nd; content
 * bans, and a lifted lesson's refused URLs are queued again), with one more condition for a
 * refusal: the URL's parent page was fetched with a page (`Crawled` or due again; with or without
 * its trailing slash): its links — a thread's page list — were met, and reach the page the
 * redirect would lead into. A permalink into a thread the crawl has not fetched (a "what's new"
 * page's) is fetched: it may be the only way there.
 *
 * What a wrong lesson costs: a refused URL is one whose shape redirected into its parent (or served
 * a copy of it) eight times, never served a page of its own and never led to a page the crawl had
 * not reached; a shape whose
 * URLs mix both kinds is caught by the first such answer, before or after the lesson — after,
 * only when it lands on a check (the 1st, 2nd, 4th, 8th, 16th refusals, then every 32nd), and a
 * URL refused after the run's last check stays refused while the lesson holds, a resume included
 * (`--no-learn-aliases` on a resume queues it again). What it can cost for good: a
 * page the refused redirects alone reached at a low depth is reached through the parent's links,
 * one hop per page a page list shows, and in a thread of very many pages that chain can pass
 * `maxDepth` (parked as trapped, reported, taken up by a resume with a higher cap); and a fetched
 * parent whose links were not all followed (cut at the size limit, past `maxLinks`, nofollow)
 * may not reach what the redirect led to; and copies naming pages under the parent that nothing
 * else reaches (a topic whose later pages only permalinks show): a fetched copy queues the page
 * it names (the engine adds it as a link), and under a lesson a check naming one the crawl does
 * not hold (no row, or one that ended or is parked) lifts it, but the pages only refused copies name wait for such a check — one landing
 * on any of them lifts the lesson (banned for good: the checkpoint keeps the ban) and queues them
 * all.
 *
 * Owns: what counts as a copy of the parent or a page under it (`parentCopyVerdict`), the shape of a URL (`parentRedirectShapeOf`), its parent (`parentOf`), where a redirect
 * leads (`parentRedirectOf`), and the fetched-parent condition (through `fetched`, the engine's
 * answer). Never: fetch, look a URL up itself, refuse or count a URL (the engine does,
 * `CrawlCounts.parentRedirects`), or clocks.
 */
import { NEAR_DUP_DISTANCE, hamming } from '../core/simhash.js';
import { InvalidArgumentError } from '../errors/index.js';
import { MAX_SHAPE_LENGTH, type ShapeChange, ShapeLessons, type ShapeLessonsOptions, URL_PARTS } from './shapes.js';

const DIGITS = /\d+/g;

/**
 * The origin and the path segments of a canonical http(s) URL that can have a shape: no query,
 * two segments or more, the first and last not empty (not a directory); else undefined.
 */
function partsOf(url: string): { origin: string; segments: string[] } | undefined {
  const m = URL_PARTS.exec(url);
  if (m === null || (m[3] !== undefined && m[3] !== '?')) return undefined;
  const segments = m[2]!.slice(1).split('/');
  if (segments.length < 2 || segments[0] === '' || segments[segments.length - 1] === '') return undefined;
  return { origin: m[1]!, segments };
}

/**
 * The shape of a canonical URL (see the module comment): origin, first segment, `*` per middle
 * segment, the last segment with digit runs as `*`; undefined for a URL with a query, fewer than
 * two segments, a directory URL, or a shape longer than `MAX_SHAPE_LENGTH`.
 */
export function parentRedirectShapeOf(url: string): string | undefined {
  const p = partsOf(url);
  if (p === undefined) return undefined;
  const middle = p.segments.slice(1, -1).map(() => '*');
  const shape = `${p.origin}/${[p.segments[0]!, ...middle, p.segments[p.segments.length - 1]!.replace(DIGITS, '*')].join('/')}`;
  return shape.length > MAX_SHAPE_LENGTH ? undefined : shape;
}

/** The parent of a URL that can have a shape: the URL less its last segment, ending `/` (else undefined). */
export function parentOf(url: string): string | undefined {
  return partsOf(url) === undefined ? undefined : url.slice(0, url.lastIndexOf('/') + 1);
}

/**
 * Where a redirect from `url` to `target` (both canonical) leads relative to `url`'s parent:
 * 'parent' — the parent page itself (its path, with or without the trailing slash, and no
 * query: `/news/?story=123` may be the story); 'under' — another page under the parent's path
 * (or the parent's path with a query) that is neither `url`'s own path nor under it in any letter
 * case (the module comment says why); undefined — elsewhere (another origin, the URL respelled,
 * outside the parent), or `url` has no shape.
 */
export function parentRedirectOf(url: string, target: string): 'parent' | 'under' | undefined {
  if (partsOf(url) === undefined) return undefined;
  const u = URL_PARTS.exec(url)!;
  const t = URL_PARTS.exec(target);
  if (t === null || t[1] !== u[1]) return undefined;
  const path = t[2]!;
  const parentPath = u[2]!.slice(0, u[2]!.lastIndexOf('/') + 1);
  if (path === parentPath || path === parentPath.slice(0, -1)) return t[3] === undefined ? 'parent' : 'under';
  if (!path.startsWith(parentPath)) return undefined;
  const own = u[2]!.toLowerCase();
  const lower = path.toLowerCase();
  return lower !== own && !lower.startsWith(`${own}/`) ? 'under' : undefined;
}

/**
 * What a page naming its fetched parent page (or a page under it) canonical is: a copy
 * ('parentCopy') when its simhash is within `NEAR_DUP_DISTANCE` bits of that page's as fetched
 * and it gave no same-origin link the crawl did not know (`novelLinks` 0); else a page of its own
 * ('content') — a simhash missing on either side included, so a check under a lesson that finds
 * anything but a copy lifts it.
 */
export function parentCopyVerdict(parentSimhash: bigint | undefined, simhash: bigint | undefined, novelLinks: number): 'parentCopy' | 'content' {
  if (parentSimhash === undefined || simhash === undefined || novelLinks > 0) return 'content';
  return hamming(parentSimhash, simhash) <= NEAR_DUP_DISTANCE ? 'parentCopy' : 'content';
}

/**
 * What a fetch of a URL with a shape said (the engine judges, `#parentRedirectLesson`):
 * 'intoParent' — a redirect to its parent page, or under it to a page the crawl holds;
 * 'parentCopy' — a page naming its parent (or a page under it) canonical with that page's text
 * and links (`parentCopyVerdict`); 'news' —
 * a redirect under the parent to a page the crawl did not hold, while the parent was fetched (a
 * URL the lesson would refuse: `/news/123` → `/news/123-headline` is the only way to that
 * story), or under a lesson a copy naming a page under the parent the crawl does not hold (its
 * refused siblings may name pages nothing reaches);
 * 'content' — a page of its own (2xx, whole, not a soft-404). A relink's redirect under
 * the parent is neither (the engine gives no verdict: its target row may be its own). News counts as content does: before any evidence it marks the shape
 * (never learned this run), after it bans the shape, and under a lesson lifts it.
 */
export type ParentRedirectVerdict = 'intoParent' | 'parentCopy' | 'news' | 'content';

/** Learns the URL shapes whose URLs redirect into their parent page or copy it (see the module comment). */
export class ParentRedirects extends ShapeLessons {
  /**
   * `fetched(url)`: whether the crawl fetched `url` with a page (the engine's
   * `Frontier.fetchedCount`), asked of a learned shape's URL's parent before it is refused.
   * Throws `InvalidArgumentError` on bad options.
   */
  constructor(
    readonly fetched: (url: string) => boolean,
    options?: Partial<ShapeLessonsOptions> | null,
  ) {
    super('ParentRedirects', parentRedirectShapeOf, options);
    if (typeof fetched !== 'function') throw new InvalidArgumentError('ParentRedirects: expected fetched as a function (url) => boolean');
  }

  /**
   * A fetch of `url` (canonical) and what it said (`ParentRedirectVerdict`). Returns 'learned'
   * when it taught its shape, 'lifted' when it ended a lesson (the shape's refused URLs may be
   * queued again), else undefined.
   */
  observe(url: string, verdict: ParentRedirectVerdict): ShapeChange {
    if (typeof url !== 'string') throw new InvalidArgumentError(`ParentRedirects.observe: expected a URL string, received ${typeof url}`);
    if (verdict !== 'intoParent' && verdict !== 'parentCopy' && verdict !== 'news' && verdict !== 'content') throw new InvalidArgumentError(`ParentRedirects.observe: expected 'intoParent', 'parentCopy', 'news' or 'content', received ${JSON.stringify(verdict)}`);
    return this.observeVerdict(url, verdict === 'intoParent' || verdict === 'parentCopy');
  }

  /** Whether `url`'s parent page was fetched (with or without its trailing slash): the condition for refusing it. */
  parentFetched(url: string): boolean {
    const parent = parentOf(url);
    return parent !== undefined && (this.fetched(parent) || this.fetched(parent.slice(0, -1)));
  }

  protected override mayRefuse(url: string): boolean {
    return this.parentFetched(url);
  }
}
