/**
 * ParentRedirects: URL shapes whose URLs redirect into their parent page.
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
 * directory (ending `/`), has none. A fetch is *quiet* when it answered a redirect into its
 * *parent* — the URL less its last segment: a target on the same origin whose path is the
 * parent's (with or without the trailing slash) or lies under it, and is neither the URL itself
 * nor under it, in any letter case (an added slash or a respelling is another lesson's, and the
 * page it leads to is the URL's own) — and *content* when it answered a page of its own (2xx,
 * whole, not a soft-404). Anything else (a redirect elsewhere: a login page, a CDN; an error)
 * is no evidence. The lesson's rules are `ShapeLessons`' (src/dedup/shapes.ts: eight quiet URLs
 * and no content learn a shape; checks at the 1st, 2nd, 4th, 8th and 16th refusals, then every
 * 32nd; content bans, and a lifted lesson's refused URLs are queued again), with one more
 * condition for a refusal: the URL's parent page is held by the crawl (fetched or to be fetched,
 * with or without its trailing slash) — the page the redirect would lead into, whose own links
 * (a thread's page list) reach the rest.
 *
 * What a wrong lesson costs: a refused URL is one whose shape redirected into the parent eight
 * times and never served a page; were it to serve one, a check finds it and every refused URL
 * is fetched. A redirect target deeper than the parent's own links reach (a thread's page 50
 * when its page list shows 1–5 and 50) is reached through the page list's next links.
 *
 * Owns: the shape of a URL (`parentRedirectShapeOf`), its parent (`parentOf`), what a redirect
 * says of it (`redirectsIntoParent`), and the held-parent condition (through `holds`, the
 * engine's answer). Never: fetch, refuse or count a URL (the engine does,
 * `CrawlCounts.parentRedirects`), or clocks.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { MAX_SHAPE_LENGTH, type ShapeChange, ShapeLessons, type ShapeLessonsOptions } from './shapes.js';

const URL_PARTS = /^(https?:\/\/[^/?#]+)(\/[^?#]*)(\?[^#]*)?(?:#.*)?$/;
const DIGITS = /\d+/g;

/** The origin and the path segments of a canonical http(s) URL without a query, or undefined. */
function partsOf(url: string): { origin: string; segments: string[] } | undefined {
  const m = URL_PARTS.exec(url);
  if (m === null || (m[3] !== undefined && m[3] !== '?')) return undefined;
  return { origin: m[1]!, segments: m[2]!.slice(1).split('/') };
}

/**
 * The shape of a canonical URL (see the module comment): origin, first segment, `*` per middle
 * segment, the last segment with digit runs as `*`; undefined for a URL with a query, fewer than
 * two segments, a directory URL, or a shape longer than `MAX_SHAPE_LENGTH`.
 */
export function parentRedirectShapeOf(url: string): string | undefined {
  const p = partsOf(url);
  if (p === undefined || p.segments.length < 2) return undefined;
  const last = p.segments[p.segments.length - 1]!;
  if (last === '' || p.segments[0] === '') return undefined;
  const middle = p.segments.slice(1, -1).map(() => '*');
  const shape = `${p.origin}/${[p.segments[0]!, ...middle, last.replace(DIGITS, '*')].join('/')}`;
  return shape.length > MAX_SHAPE_LENGTH ? undefined : shape;
}

/** The parent of a URL with a shape: the URL less its last segment, ending `/` (undefined without a shape). */
export function parentOf(url: string): string | undefined {
  if (parentRedirectShapeOf(url) === undefined) return undefined;
  const cut = url.lastIndexOf('/');
  return url.slice(0, cut + 1);
}

/**
 * Whether a redirect from `url` to `target` (both canonical) leads into `url`'s parent: same
 * origin, the target's path the parent's (with or without its trailing slash) or under it, and
 * neither `url`'s path nor under it in any letter case (the module comment says why).
 */
export function redirectsIntoParent(url: string, target: string): boolean {
  const parent = parentOf(url);
  const u = URL_PARTS.exec(url);
  const t = URL_PARTS.exec(target);
  if (parent === undefined || u === null || t === null || t[1] !== u[1]) return false;
  const path = t[2]!;
  const parentPath = URL_PARTS.exec(parent)![2]!;
  if (path !== parentPath.slice(0, -1) && !path.startsWith(parentPath)) return false;
  const own = u[2]!.toLowerCase();
  const lower = path.toLowerCase();
  return lower !== own && !lower.startsWith(`${own}/`);
}

/** What a fetch of a URL with a shape said: a redirect into its parent, or a page of its own. */
export type ParentRedirectVerdict = 'intoParent' | 'content';

/** Learns the URL shapes whose URLs redirect into their parent page (see the module comment). */
export class ParentRedirects extends ShapeLessons {
  /**
   * `holds(url)`: whether the crawl holds `url` live (fetched or to be; the engine's
   * `Frontier.liveCount`), asked of a learned shape's URL's parent before it is refused. Throws
   * `InvalidArgumentError` on bad options.
   */
  constructor(
    readonly holds: (url: string) => boolean,
    options?: Partial<ShapeLessonsOptions> | null,
  ) {
    super('ParentRedirects', parentRedirectShapeOf, options);
    if (typeof holds !== 'function') throw new InvalidArgumentError('ParentRedirects: expected holds as a function (url) => boolean');
  }

  /**
   * A fetch of `url` (canonical) that answered a redirect into its parent (`redirectsIntoParent`)
   * or a page of its own (2xx, whole, not a soft-404). Returns 'learned' when it taught its
   * shape, 'lifted' when it ended a lesson (the shape's refused URLs may be queued again), else
   * undefined.
   */
  observe(url: string, verdict: ParentRedirectVerdict): ShapeChange {
    if (typeof url !== 'string') throw new InvalidArgumentError(`ParentRedirects.observe: expected a URL string, received ${typeof url}`);
    if (verdict !== 'intoParent' && verdict !== 'content') throw new InvalidArgumentError(`ParentRedirects.observe: expected 'intoParent' or 'content', received ${JSON.stringify(verdict)}`);
    return this.observeVerdict(url, verdict === 'intoParent');
  }

  /** The parent page is held (with or without its trailing slash). */
  protected override mayRefuse(url: string): boolean {
    const parent = parentOf(url);
    return parent !== undefined && (this.holds(parent) || this.holds(parent.slice(0, -1)));
  }
}
