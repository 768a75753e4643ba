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
 * Owns: per shape, the evidence (hashes of the distinct quiet URLs, at most `minEvidence`), the
 * shapes learned (each with its refusals so far), banned, and marked content. Never: fetch,
 * refuse or count a URL (the engine does, `CrawlCounts.noindexSkipped`), or clocks. A checkpoint
 * keeps the shapes learned and banned (`export` / `import`), not the evidence. Memory is
 * bounded: at most `maxScopes` shapes with evidence, as many learned and as many banned, and
 * `MAX_CONTENT_SHAPES` content shapes (oldest dropped).
 */
import { InvalidArgumentError } from '../errors/index.js';
import { evictOldest } from '../lru/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { urlHash32 } from './query.js';

/** Options of a `NoindexShapes`. */
export interface NoindexShapesOptions {
  /** Distinct URLs of a shape that said noindex and nofollow before the shape is learned. Default 8. */
  readonly minEvidence: number;
  /** Shapes with evidence, learned and banned remembered, each (oldest dropped). Default 4,096. */
  readonly maxScopes: number;
  /**
   * Of a learned shape's refusals, every this many-th is let through as a check, and before the
   * first such one each whose count is a power of two (the 1st, 2nd, 4th, 8th, 16th). Default 32.
   */
  readonly checkEvery: number;
}

const resolveNoindexOptions = defineOptions<NoindexShapesOptions>('NoindexShapesOptions', {
  minEvidence: numberField({ min: 2, max: 1000, integer: true, default: 8 }),
  maxScopes: numberField({ min: 1, max: 1 << 20, integer: true, default: 4096 }),
  checkEvery: numberField({ min: 2, max: 1 << 20, integer: true, default: 32 }),
});

/** Shapes remembered as having served content before any evidence (not checkpointed). */
const MAX_CONTENT_SHAPES = 16_384;
/** A shape longer than this (a query of many keys) is not learned. */
const MAX_SHAPE_LENGTH = 1024;

/** A lesson as a checkpoint keeps it: the shape and whether it is learned (true) or banned (false). */
export type NoindexRecord = readonly [shape: string, learned: boolean];

const SHAPE = /^https?:\/\/[^/?#\s]+\/[^#\s]*$/;

/** Why `r` is not a `NoindexRecord`, or undefined when it is one. */
export function noindexRecordProblem(r: unknown): string | undefined {
  if (!Array.isArray(r) || r.length !== 2) return 'not a [shape, learned] record';
  if (typeof r[0] !== 'string' || r[0].length > MAX_SHAPE_LENGTH || !SHAPE.test(r[0])) return `shape ${JSON.stringify(r[0])} is not an http(s) origin and path pattern`;
  if (typeof r[1] !== 'boolean') return `learned ${JSON.stringify(r[1])} is not true or false`;
  return undefined;
}

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

/** Whether a lesson's `n`th refusal (from 1) is let through as a check: a power of two below `every`, or a multiple of it. */
export function isCheck(n: number, every: number): boolean {
  return n % every === 0 || (n < every && (n & (n - 1)) === 0);
}

/** What `NoindexShapes.observe` made of a page: its shape learned, a lesson lifted, or nothing new. */
export type NoindexChange = 'learned' | 'lifted' | undefined;

/** The page facts `NoindexShapes.observe` reads (an `Outcome`'s). */
export interface NoindexPage {
  /** Meta robots or X-Robots-Tag said noindex (`Outcome.noindex`). */
  readonly noindex: boolean;
  /** Meta robots or X-Robots-Tag said nofollow (`Outcome.nofollow`). */
  readonly nofollow: boolean;
}

/** Learns the URL shapes whose pages say noindex and nofollow (see the module comment). */
export class NoindexShapes {
  /** The resolved options. */
  readonly options: Readonly<NoindexShapesOptions>;
  /** shape → hashes of the distinct quiet URLs so far (no content page yet; `urlHash32`: counted, not kept). */
  readonly #evidence = new Map<string, Set<number>>();
  /** Learned shape → its refusals so far (`isCheck` picks those let through) and of them those not let through. */
  readonly #learned = new Map<string, { refused: number; skipped: number }>();
  /** Shapes banned after evidence or a lesson: kept by the checkpoint. */
  readonly #banned = new Set<string>();
  /** Shapes that served content before any evidence: never learned, not kept. */
  readonly #content = new Set<string>();

  /** Learns nothing until observed. Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<NoindexShapesOptions> | null) {
    this.options = resolveNoindexOptions(options);
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
    const shape = noindexShapeOf(url);
    if (shape === undefined || this.#banned.has(shape)) return undefined;
    if (this.#content.has(shape)) {
      // Refreshed: a shape that keeps serving content is the last one dropped.
      this.#content.delete(shape);
      this.#content.add(shape);
      return undefined;
    }
    const learned = this.#learned.has(shape);
    const ev = this.#evidence.get(shape);
    if (!page.noindex || !page.nofollow) {
      if (!learned && ev === undefined) {
        this.#content.add(shape);
        if (this.#content.size > MAX_CONTENT_SHAPES) evictOldest(this.#content);
        return undefined;
      }
      this.#ban(shape);
      return learned ? 'lifted' : undefined;
    }
    if (learned) return undefined;
    if (ev === undefined) {
      this.#evidence.set(shape, new Set([urlHash32(url)]));
      if (this.#evidence.size > this.options.maxScopes) evictOldest(this.#evidence);
      return undefined;
    }
    ev.add(urlHash32(url));
    if (ev.size < this.options.minEvidence) return undefined;
    this.#evidence.delete(shape);
    this.#learn(shape);
    return 'learned';
  }

  /** The learned shape `url` has, or undefined when it has none. */
  covers(url: string): string | undefined {
    if (this.#learned.size === 0) return undefined;
    const shape = noindexShapeOf(url);
    return shape !== undefined && this.#learned.has(shape) ? shape : undefined;
  }

  /**
   * Whether `url`'s queued fetch is refused: true when its shape is learned, except a seed (depth
   * 0: the user's word), a URL fetched before (`fetched`: a recrawl or a relink; its own last
   * answer outweighs its shape's), and the refusals `isCheck` lets through as checks (a shape
   * that serves content now is lifted by one, which nothing else could do once every URL is
   * refused). The first refusals after a lesson is learned or read back are checks: a shape with
   * only a few URLs left is still tested, and a mixed one is caught early.
   */
  // The refusal count and its checks as LoginWalls.refuse's, with early checks: keep in sync.
  refuses(url: string, depth: number, fetched = false): boolean {
    if (this.#learned.size === 0 || depth === 0 || fetched) return false;
    const shape = noindexShapeOf(url);
    const lesson = shape === undefined ? undefined : this.#learned.get(shape);
    if (lesson === undefined) return false;
    lesson.refused++;
    if (isCheck(lesson.refused, this.options.checkEvery)) return false;
    lesson.skipped++;
    return true;
  }

  /** How many URLs of `url`'s learned shape were refused (not let through) since it was learned or read back; 0 when it has no lesson. */
  skippedUnder(url: string): number {
    if (this.#learned.size === 0) return 0;
    const shape = noindexShapeOf(url);
    return shape === undefined ? 0 : (this.#learned.get(shape)?.skipped ?? 0);
  }

  /** The learned shapes, oldest first. */
  learned(): string[] {
    return [...this.#learned.keys()];
  }

  /** The lessons for a checkpoint: learned shapes, then banned ones. */
  export(): NoindexRecord[] {
    return [...[...this.#learned.keys()].map((s): NoindexRecord => [s, true]), ...[...this.#banned].map((s): NoindexRecord => [s, false])];
  }

  /** Takes back `export`'s lessons. Throws `InvalidArgumentError` naming a bad record. */
  import(records: readonly NoindexRecord[]): void {
    if (!Array.isArray(records)) throw new InvalidArgumentError('NoindexShapes.import: expected an array of [shape, learned] records');
    for (const r of records) {
      const problem = noindexRecordProblem(r);
      if (problem !== undefined) throw new InvalidArgumentError(`NoindexShapes.import: ${problem}`);
      if (r[1]) {
        if (!this.#banned.has(r[0])) this.#learn(r[0]);
      } else {
        this.#ban(r[0]);
      }
    }
  }

  #learn(shape: string): void {
    this.#learned.set(shape, { refused: 0, skipped: 0 });
    if (this.#learned.size > this.options.maxScopes) evictOldest(this.#learned);
  }

  // The lesson sets' upkeep as LoginWalls' (#wall, #ban): keep the eviction rules in sync.
  #ban(shape: string): void {
    this.#evidence.delete(shape);
    this.#learned.delete(shape);
    this.#banned.delete(shape); // re-inserted: the most recent ban is the last evicted
    this.#banned.add(shape);
    if (this.#banned.size > this.options.maxScopes) evictOldest(this.#banned);
  }
}
