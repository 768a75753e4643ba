/**
 * NoindexShapes: URL shapes whose pages ask not to be indexed and not to be followed.
 *
 * A wiki links, from every article, a dozen tools: its edit form, its history, its information
 * page, a permanent link to the revision, "What links here", "Related changes", "Cite this page",
 * a PDF download, an edit form per missing page it mentions. MediaWiki serves each with
 * `<meta name="robots" content="noindex,nofollow">`: the site says the page is not content and
 * its links are not to be followed. On a MediaWiki-shaped loopback wiki of 73 content pages,
 * `meguri crawl` made 826 requests, 703 of them such pages. Shops (cart, checkout, account),
 * forums (post forms) and CMSs (previews) do the same. No other lesson sees it: the pages are
 * not copies (each shows another article's form or history), not login forms, and their keys
 * select content.
 *
 * The signature, per *shape*: origin, the path with each segment holding a digit as `*`, and
 * then — for a URL with a query — the last segment and the query's keys (values as `*`:
 * `http://w.test/w/index.php?action=*&title=*`), or — without one — the last segment as `*`
 * (`http://w.test/wiki/Special:WhatLinksHere/*`). A 2xx page fetched whole (the engine leaves
 * out soft-404s once recognised: a dead link's template says nothing of its shape's live pages)
 * is *quiet* when it said both noindex and nofollow (meta robots or X-Robots-Tag, `none`), and is
 * *content* otherwise. A shape is learned once `minEvidence` (8) distinct URLs of it were quiet
 * and none was content; from then the engine refuses its queued URLs at dispatch (`refuses`;
 * never a seed or a recrawl of a URL fetched before, and some refusals are let through as checks: the 1st,
 * 2nd, 4th, 8th and 16th after the lesson was learned or read back, then every `checkEvery`th
 * (32nd), `isCheck`). A content page of a shape before any evidence marks it content for the
 * run (never learned, not kept); a content page of a shape with evidence or learned bans it
 * (kept), and a learned shape banned is lifted ('lifted': the engine queues its refused URLs
 * again).
 *
 * What a wrong lesson costs: the refused pages are ones the site asked not to index, and nofollow
 * means the crawl would not have followed their links anyway, so nothing reachable is lost
 * through them. What a shape that mixes such pages with content costs (a catalogue whose first
 * eight products fetched were withdrawn, noindex,nofollow) is the content pages refused until a
 * check finds one — then every refused URL is fetched — and the early checks make that soon: a
 * shape with a fifth of its pages content is lifted within its first 16 refusals with
 * probability 0.67 (five checks), within 64 with 0.79 (seven). It is not a guarantee: a mixed shape
 * whose checks all land on its tool pages keeps its lesson, and the content pages it refused
 * wait for a resume without it. A page that said
 * noindex alone (`noindex,follow`: a search result, a tag listing) is content here, since its
 * links lead on. A crawl that must keep every page the site serves (an archive) turns the lesson
 * off (`EngineOptions.learnNoindex`, `--no-learn-noindex`).
 *
 * Owns: the shape of a URL (`noindexShapeOf`) and what a page says of it (quiet: noindex and
 * nofollow; content otherwise). The lesson's state and rules — evidence, learned, banned and
 * content shapes, refusals and their checks, checkpoint records, bounds — are `ShapeLessons`'
 * (src/dedup/shapes.ts), shared with `ParentRedirects`, `DeadEndRedirects` and `NamedCopies`. Never: fetch, refuse or count a URL (the
 * engine does, `CrawlCounts.noindexSkipped`), or clocks.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { MAX_SHAPE_LENGTH, type ShapeChange, ShapeLessons, type ShapeLessonsOptions, type ShapeRecord, shapeRecordProblem } from './shapes.js';

/** Options of a `NoindexShapes` (`ShapeLessons`' options). */
export type NoindexShapesOptions = ShapeLessonsOptions;

/** A lesson as a checkpoint keeps it: the shape and whether it is learned (true) or banned (false). */
export type NoindexRecord = ShapeRecord;

/** Why `r` is not a `NoindexRecord`, or undefined when it is one. */
export const noindexRecordProblem = shapeRecordProblem;

const URL_PARTS = /^(https?:\/\/[^/?#]+)(\/[^?#]*)(?:\?([^#]*))?(?:#.*)?$/;
const DIGIT = /\d/;

/**
 * The shape of a canonical URL (see the module comment), or undefined for a URL that is not
 * http(s) with a path, or whose shape would be longer than `MAX_SHAPE_LENGTH`.
 */
export function noindexShapeOf(url: string): string | undefined {
  const m = URL_PARTS.exec(url);
  if (m === null) return undefined;
  const segments = m[2]!.split('/');
  const last = segments.pop()!;
  const dir = segments.map((s) => (DIGIT.test(s) ? '*' : s)).join('/');
  const query = m[3];
  let shape: string;
  if (query === undefined || query === '') {
    shape = `${m[1]}${dir}/*`;
  } else {
    const keys = [...new Set(query.split('&').map((p) => (p.includes('=') ? p.slice(0, p.indexOf('=')) : p)))].sort();
    shape = `${m[1]}${dir}/${DIGIT.test(last) ? '*' : last}?${keys.map((k) => `${k}=*`).join('&')}`;
  }
  return shape.length > MAX_SHAPE_LENGTH ? undefined : shape;
}

/** What `NoindexShapes.observe` made of a page: its shape learned, a lesson lifted, or nothing new. */
export type NoindexChange = ShapeChange;

/** The page facts `NoindexShapes.observe` reads (an `Outcome`'s). */
export interface NoindexPage {
  /** Meta robots or X-Robots-Tag said noindex (`Outcome.noindex`). */
  readonly noindex: boolean;
  /** Meta robots or X-Robots-Tag said nofollow (`Outcome.nofollow`). */
  readonly nofollow: boolean;
}

/** Learns the URL shapes whose pages say noindex and nofollow (see the module comment). */
export class NoindexShapes extends ShapeLessons {
  /** Learns nothing until observed. Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<NoindexShapesOptions> | null) {
    super('NoindexShapes', noindexShapeOf, options);
  }

  /**
   * A 2xx page fetched at `url` (canonical), whole (not cut, not a sitemap). Returns 'learned'
   * when this page taught its shape, 'lifted' when it ended a lesson (the shape's refused URLs
   * may be queued again), else undefined.
   */
  observe(url: string, page: NoindexPage): NoindexChange {
    if (typeof url !== 'string') throw new InvalidArgumentError(`NoindexShapes.observe: expected a URL string, received ${typeof url}`);
    if (typeof page !== 'object' || page === null || typeof page.noindex !== 'boolean' || typeof page.nofollow !== 'boolean') {
      throw new InvalidArgumentError('NoindexShapes.observe: expected the page as { noindex: boolean, nofollow: boolean }');
    }
    return this.observeVerdict(url, page.noindex && page.nofollow);
  }
}
