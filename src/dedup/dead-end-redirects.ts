/**
 * DeadEndRedirects: URL shapes whose URLs redirect where the crawl does not go.
 *
 * A site links, on every page, actions a visitor who is not logged in cannot take, and answers
 * each with a redirect to its login form carrying the URL asked: StackExchange's
 * `/posts/9140/edit` → `/users/login?ssrc=edit&returnurl=…`, a shop's "add to wishlist", a
 * forum's "report" or "subscribe". `LoginWalls` stops the crawl fetching the login form for each,
 * but not the redirect: on a StackExchange-shaped loopback site, 136 of 785 requests were such
 * redirects, one per post. Share buttons do the same off-site (Jetpack's `?share=twitter&nb=1`
 * answers a 302 to the network's sharer: 240 requests for a 60-post WordPress blog whose theme
 * drops their `rel=nofollow`), and so do short links into a URL shape another lesson refuses (a
 * Q&A site's `/a/9101/10` → `/questions/7013/how-to-x/9101`, a copy of the question
 * `ParentRedirects` learned).
 *
 * The signature, per *shape* (`deadEndShapeOf`): origin; the first path segment with digit runs
 * as `*`, `*` for each middle segment, the last with digit runs as `*` (`/posts/*\/edit`,
 * `/a/*\/*`); and the query's keys, sorted, each with its value when it is a word (letters, `_`
 * and `-`, at most 32: the action, `share=twitter`) and `*` otherwise (`returnurl=*`, `nb=*`).
 * A fetch (judged by the engine before its outcome reaches the frontier) is a *dead end* when it
 * answered a redirect whose target (canonical) the crawl would not fetch: out of the crawl's scope
 * (another site included), on a path `LoginWalls` walled, disallowed by the rules of a robots.txt
 * the crawl has read, or in a shape a lesson refuses now (`ParentRedirects`, this one). It is *content* when it answered a page of its own (2xx, whole,
 * not a soft-404), and *news* when it redirected to a page in scope the crawl had no row for —
 * news counts as content once the shape has evidence or a lesson (a mixed shape is caught), and
 * is no evidence before: a login form not yet walled is a new row too, and the first redirects to
 * it must not mark their shape for the run. Anything else (a redirect to a page the crawl holds,
 * an error) is no evidence.
 *
 * The lesson's rules are `ShapeLessons`' (eight dead ends and no content learn a shape; checks at
 * the 1st, 2nd, 4th, 8th and 16th refusals, then every 32nd; content bans, and a lifted lesson's
 * refused URLs are queued again); seeds and URLs fetched before are never refused.
 *
 * What a wrong lesson costs: a refused URL is one whose shape's eight URLs led only where the
 * crawl does not go; one of the shape that would have led to a new page is refused until a check
 * finds such a page (news then bans the shape and queues its refused URLs again), and a URL
 * refused after the run's last check stays refused while the lesson holds, a resume included
 * (`--no-learn-aliases` on a resume queues it again). A redirect to a login form, another site or a
 * page's copy loses nothing.
 *
 * Owns: the shape of a URL (`deadEndShapeOf`). Never: judge where a redirect leads (the engine
 * does, with the scope, the walls and the other lessons), fetch, refuse or count a URL
 * (`CrawlCounts.deadEndRedirects`), or clocks.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { MAX_SHAPE_LENGTH, type ShapeChange, ShapeLessons, type ShapeLessonsOptions, URL_PARTS } from './shapes.js';

const DIGITS = /\d+/g;
/** A query value kept in the shape: a word naming an action or a target (`share=twitter`, `action=edit`). */
const WORD_VALUE = /^[A-Za-z][A-Za-z_-]{0,31}$/;

/**
 * The shape of a canonical http(s) URL (see the module comment), or undefined when it is not one
 * or the shape is longer than `MAX_SHAPE_LENGTH`.
 */
export function deadEndShapeOf(url: string): string | undefined {
  const m = URL_PARTS.exec(url);
  if (m === null) return undefined;
  const segments = m[2]!.slice(1).split('/');
  const last = segments.length - 1;
  const path = segments.map((seg, i) => (i === 0 || i === last ? seg.replace(DIGITS, '*') : '*')).join('/');
  let query = '';
  if (m[3] !== undefined && m[3].length > 1) {
    const pairs = new Map<string, string>();
    for (const pair of m[3].slice(1).split('&')) {
      const eq = pair.indexOf('=');
      const key = eq < 0 ? pair : pair.slice(0, eq);
      const value = eq < 0 ? '' : pair.slice(eq + 1);
      // A repeated key keeps `*` unless every value is the same word.
      const shown = WORD_VALUE.test(value) ? value : '*';
      const seen = pairs.get(key);
      pairs.set(key, seen === undefined || seen === shown ? shown : '*');
    }
    query = `?${[...pairs.keys()].sort().map((k) => `${k}=${pairs.get(k)!}`).join('&')}`;
  }
  const shape = `${m[1]}/${path}${query}`;
  return shape.length > MAX_SHAPE_LENGTH ? undefined : shape;
}

/**
 * What a fetch of a URL said (the engine judges, `#deadEndLesson`): 'deadEnd' — a redirect where
 * the crawl does not go (out of scope, a walled login path, a path robots.txt rules disallow, a
 * shape a lesson refuses); 'news' — a
 * redirect to a page in scope the crawl had no row for; 'content' — a page of its own (2xx, whole,
 * not a soft-404).
 */
export type DeadEndVerdict = 'deadEnd' | 'news' | 'content';

/** Learns the URL shapes whose URLs redirect where the crawl does not go (see the module comment). */
export class DeadEndRedirects extends ShapeLessons {
  /** Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<ShapeLessonsOptions> | null) {
    super('DeadEndRedirects', deadEndShapeOf, options);
  }

  /**
   * A fetch of `url` (canonical) and what it said (`DeadEndVerdict`). Returns 'learned' when it
   * taught its shape, 'lifted' when it ended a lesson (the shape's refused URLs may be queued
   * again), else undefined. News before the shape has evidence or a lesson is no evidence.
   */
  observe(url: string, verdict: DeadEndVerdict): ShapeChange {
    if (typeof url !== 'string') throw new InvalidArgumentError(`DeadEndRedirects.observe: expected a URL string, received ${typeof url}`);
    if (verdict !== 'deadEnd' && verdict !== 'news' && verdict !== 'content') throw new InvalidArgumentError(`DeadEndRedirects.observe: expected 'deadEnd', 'news' or 'content', received ${JSON.stringify(verdict)}`);
    if (verdict === 'news' && !this.tracks(url)) return undefined;
    return this.observeVerdict(url, verdict === 'deadEnd');
  }
}
