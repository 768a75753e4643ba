/**
 * ShapeLessons: the state and rules shared by the lessons learned per URL *shape* — a string a
 * lesson derives from a URL (`NoindexShapes`: the path with digit segments as `*` and the query's
 * keys; `ParentRedirects`: a section and a tail pattern; `DeadEndRedirects`: first and last
 * segments, the query's keys and word values; `NamedCopies`: the path's word segments) — whose
 * pages each fetch calls *quiet*
 * (the site says the URL is not a page of its own to fetch) or *content*.
 *
 * The rules: a shape is learned once `minEvidence` distinct URLs of it were quiet and none was
 * content; from then the engine refuses its queued URLs at dispatch (`refuses`; never a seed or
 * a URL fetched before, and some refusals are let through as checks: the 1st, 2nd, 4th, 8th and
 * 16th after the lesson was learned or read back, then every `checkEvery`th, `isCheck`). Content
 * before any evidence marks the shape content for the run (never learned, not kept); content
 * after evidence, or under a lesson, bans the shape (kept), and a learned shape banned is lifted
 * ('lifted': the engine queues its refused URLs again). So a wrong lesson costs a delay, and a
 * shape that mixes quiet pages with content costs the content pages refused until a check finds
 * one: with a fifth of them content, within 16 refusals with probability 0.67 (five checks),
 * within 64 with 0.79 (seven).
 *
 * Owns: per shape, the evidence (hashes of the distinct quiet URLs, at most `minEvidence`), the
 * shapes learned (each with its refusals so far), banned, and marked content. Never: derive a
 * shape (the subclass's `shapeOf`), judge a page (the subclass and the engine), fetch, refuse or
 * count a URL, or clocks. A checkpoint keeps the shapes learned and banned (`export` /
 * `import`), not the evidence. Memory is bounded: at most `maxScopes` shapes with evidence, as
 * many learned and as many banned, and `MAX_CONTENT_SHAPES` content shapes (oldest dropped).
 */
import { InvalidArgumentError } from '../errors/index.js';
import { evictOldest } from '../lru/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { urlHash32 } from './query.js';

/** Options of a `ShapeLessons` (`NoindexShapes`, `ParentRedirects`, `DeadEndRedirects`, `NamedCopies`). */
export interface ShapeLessonsOptions {
  /** Distinct quiet URLs of a shape before the shape is learned. Default 8. */
  readonly minEvidence: number;
  /** Shapes with evidence, learned and banned remembered, each (oldest dropped). Default 4,096. */
  readonly maxScopes: number;
  /**
   * Of a learned shape's refusals, every this many-th is let through as a check, and before the
   * first such one each whose count is a power of two (the 1st, 2nd, 4th, 8th, 16th). Default 32.
   */
  readonly checkEvery: number;
}

/** The options' resolver of each lesson class, named for it in errors (`NoindexShapesOptions.minEvidence: …`). */
const resolvers = new Map<string, (input?: Partial<ShapeLessonsOptions> | null) => Readonly<ShapeLessonsOptions>>();
function resolveShapeOptions(name: string, input: Partial<ShapeLessonsOptions> | null | undefined): Readonly<ShapeLessonsOptions> {
  let resolve = resolvers.get(name);
  if (resolve === undefined) {
    resolve = defineOptions<ShapeLessonsOptions>(`${name}Options`, {
      minEvidence: numberField({ min: 2, max: 1000, integer: true, default: 8 }),
      maxScopes: numberField({ min: 1, max: 1 << 20, integer: true, default: 4096 }),
      checkEvery: numberField({ min: 2, max: 1 << 20, integer: true, default: 32 }),
    });
    resolvers.set(name, resolve);
  }
  return resolve(input);
}

/** Shapes remembered as having served content before any evidence (not checkpointed). */
const MAX_CONTENT_SHAPES = 16_384;
/**
 * A canonical http(s) URL's parts as the shape lessons read them: origin, path, and the query
 * with its `?` (a fragment aside).
 */
export const URL_PARTS = /^(https?:\/\/[^/?#]+)(\/[^?#]*)(\?[^#]*)?(?:#.*)?$/;

/** A shape longer than this (a query of many keys) is not learned. */
export const MAX_SHAPE_LENGTH = 1024;

/** A lesson as a checkpoint keeps it: the shape and whether it is learned (true) or banned (false). */
export type ShapeRecord = readonly [shape: string, learned: boolean];

const SHAPE = /^https?:\/\/[^/?#\s]+\/[^#\s]*$/;

/** Why `r` is not a `ShapeRecord`, or undefined when it is one. */
export function shapeRecordProblem(r: unknown): string | undefined {
  if (!Array.isArray(r) || r.length !== 2) return 'not a [shape, learned] record';
  if (typeof r[0] !== 'string' || r[0].length > MAX_SHAPE_LENGTH || !SHAPE.test(r[0])) return `shape ${JSON.stringify(r[0])} is not an http(s) origin and path pattern`;
  if (typeof r[1] !== 'boolean') return `learned ${JSON.stringify(r[1])} is not true or false`;
  return undefined;
}

/** Whether a lesson's `n`th refusal (from 1) is let through as a check: a power of two below `every`, or a multiple of it. */
export function isCheck(n: number, every: number): boolean {
  return n % every === 0 || (n < every && (n & (n - 1)) === 0);
}

/** What a page taught: its shape learned, a lesson lifted, or nothing new. */
export type ShapeChange = 'learned' | 'lifted' | undefined;

/** The learned, banned and content shapes of one lesson kind (see the module comment). */
export abstract class ShapeLessons {
  /** The resolved options. */
  readonly options: Readonly<ShapeLessonsOptions>;
  /** shape → hashes of the distinct quiet URLs so far (no content page yet; `urlHash32`: counted, not kept). */
  readonly #evidence = new Map<string, Set<number>>();
  /** Learned shape → its refusals so far (`isCheck` picks those let through) and of them those not let through. */
  readonly #learned = new Map<string, { refused: number; skipped: number }>();
  /** Shapes banned after evidence or a lesson: kept by the checkpoint. */
  readonly #banned = new Set<string>();
  /** Shapes that served content before any evidence: never learned, not kept. */
  readonly #content = new Set<string>();

  /**
   * `name` is the lesson's class (in error messages); `shapeOf` its shape of a canonical URL
   * (undefined: the URL has none, and is never learned or refused). Throws
   * `InvalidArgumentError` on bad options.
   */
  constructor(
    readonly name: string,
    readonly shapeOf: (url: string) => string | undefined,
    options?: Partial<ShapeLessonsOptions> | null,
  ) {
    this.options = resolveShapeOptions(name, options);
  }

  /**
   * A fetch of `url` (canonical) that was `quiet`, or content. Returns 'learned' when it taught
   * its shape, 'lifted' when it ended a lesson (the shape's refused URLs may be queued again),
   * else undefined.
   */
  protected observeVerdict(url: string, quiet: boolean): ShapeChange {
    const shape = this.shapeOf(url);
    if (shape === undefined || this.#banned.has(shape)) return undefined;
    if (this.#content.has(shape)) {
      // Refreshed: a shape that keeps serving content is the last one dropped.
      this.#content.delete(shape);
      this.#content.add(shape);
      return undefined;
    }
    const learned = this.#learned.has(shape);
    const ev = this.#evidence.get(shape);
    if (!quiet) {
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
    // Refreshed: a shape gathering evidence is the last one dropped (a site of many shapes, each
    // URL of its own — a share link per post — must not push out one on its way to a lesson).
    this.#evidence.delete(shape);
    this.#evidence.set(shape, ev);
    if (ev.size < this.options.minEvidence) return undefined;
    this.#evidence.delete(shape);
    this.#learn(shape);
    return 'learned';
  }

  /** The learned shape `url` has, when the lesson would refuse it now (but for a check), or undefined. */
  covers(url: string): string | undefined {
    if (this.#learned.size === 0) return undefined;
    const shape = this.shapeOf(url);
    return shape !== undefined && this.#learned.has(shape) && this.mayRefuse(url) ? shape : undefined;
  }

  /**
   * Whether `url`'s queued fetch is refused: true when its shape is learned, except a seed (depth
   * 0: the user's word), a URL fetched before (`fetched`: a recrawl or a relink; its own last
   * answer outweighs its shape's), and the refusals `isCheck` lets through as checks (a shape
   * that serves content now is lifted by one, which nothing else could do once every URL is
   * refused). The first refusals after a lesson is learned or read back are checks: a shape with
   * only a few URLs left is still tested, and a mixed one is caught early. A subclass adds its own
   * condition before the refusal is counted (`ParentRedirects`: the parent page was fetched).
   */
  // The refusal count and its checks as LoginWalls.refuse's, with early checks, and PathCase's #refuse: keep in sync.
  refuses(url: string, depth: number, fetched = false): boolean {
    if (this.#learned.size === 0 || depth === 0 || fetched) return false;
    const shape = this.shapeOf(url);
    const lesson = shape === undefined ? undefined : this.#learned.get(shape);
    if (lesson === undefined || !this.mayRefuse(url)) return false;
    lesson.refused++;
    if (isCheck(lesson.refused, this.options.checkEvery)) return false;
    lesson.skipped++;
    return true;
  }

  /**
   * Whether `url`'s shape has a lesson or evidence toward one: a verdict that counts as content
   * only then (`DeadEndRedirects`' news) asks it first.
   */
  protected tracks(url: string): boolean {
    const shape = this.shapeOf(url);
    return shape !== undefined && (this.#learned.has(shape) || this.#evidence.has(shape));
  }

  /** A subclass's own condition for refusing `url` of a learned shape (default: none). */
  protected mayRefuse(_url: string): boolean {
    return true;
  }

  /** How many URLs of `url`'s learned shape were refused (not let through) since it was learned or read back; 0 when it has no lesson. */
  skippedUnder(url: string): number {
    if (this.#learned.size === 0) return 0;
    const shape = this.shapeOf(url);
    return shape === undefined ? 0 : (this.#learned.get(shape)?.skipped ?? 0);
  }

  /** The learned shapes, oldest first. */
  learned(): string[] {
    return [...this.#learned.keys()];
  }

  /** The lessons for a checkpoint: learned shapes, then banned ones. */
  export(): ShapeRecord[] {
    return [...[...this.#learned.keys()].map((s): ShapeRecord => [s, true]), ...[...this.#banned].map((s): ShapeRecord => [s, false])];
  }

  /** Takes back `export`'s lessons. Throws `InvalidArgumentError` naming a bad record. */
  import(records: readonly ShapeRecord[]): void {
    if (!Array.isArray(records)) throw new InvalidArgumentError(`${this.name}.import: expected an array of [shape, learned] records`);
    for (const r of records) {
      const problem = shapeRecordProblem(r);
      if (problem !== undefined) throw new InvalidArgumentError(`${this.name}.import: ${problem}`);
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
