/**
 * AnchorCopies: links that point at a spot on the page they sit on, under another URL.
 *
 * A forum gives each post a permalink, `viewtopic.php?p=1003#p1003`, and writes it on the topic
 * page beside the post it names (`<div id="p1003">`). The server answers it with the topic page
 * that holds the post: a copy of the page the link is on. A topic page of ten posts has ten
 * such links, every one a copy; on a phpBB-shaped loopback forum they were 560 of 914 requests
 * (with login walls learned), each fetched to find a page fetched already. No query key is
 * ignorable (`p` selects the post) and nothing names the copy's URL before it is fetched.
 *
 * The extractor marks a link whose fragment names an element id (or `<a name>`) of its own page
 * and whose URL is not the page's (`Link.anchored`). Per *shape* — origin, path and the sorted
 * names of the query keys (`http://f/viewtopic.php?p`) — the first anchored links met are
 * remembered with the text of the page they were on (`noteLinks`); when one is fetched
 * (`observe`), its page either matches (visible text within `maxDistance` simhash bits) — evidence
 * — or does not, which bans the shape for the run. After `minEvidence` distinct URLs agree the
 * shape is learned: from then on an anchored link of that shape is a copy of the page it is on
 * and is dropped, and one already queued from such a link is refused at dispatch (`refuses`).
 * Only anchored links of a learned shape are touched: a link of the same shape without the
 * fragment (a feed's link to a post, another page's "last post" link) is fetched as ever. Every
 * `checkEvery`th anchored link of a learned shape is kept and fetched as a check; one whose page
 * is not its linking page's bans the shape (the links dropped before stay dropped for the run:
 * copies, as three fetches and every check said).
 *
 * Owns: the anchored links waiting for their fetch (`MAX_PENDING`, oldest dropped) with their
 * page's simhash, per shape the evidence, the shapes learned and banned. Never: fetch, drop or
 * count a URL (the engine does, `CrawlCounts.anchorCopies`), or clocks. A checkpoint keeps the
 * shapes learned and banned (`export` / `import`), not the evidence or the waiting links.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { evictOldest } from '../lru/index.js';
import { NEAR_DUP_DISTANCE, hamming } from '../core/simhash.js';
import type { Link } from '../model/index.js';

/** Options of an `AnchorCopies`. */
export interface AnchorCopiesOptions {
  /** Distinct anchored URLs of a shape that must be copies of the page they were on. Default 3. */
  readonly minEvidence: number;
  /** Simhash bits a copy's visible text may differ from its page's. Default 3. */
  readonly maxDistance: number;
  /** Shapes with evidence, learned and banned remembered, each (oldest dropped). Default 4,096. */
  readonly maxShapes: number;
  /** Of a learned shape's anchored links, every this many-th is kept and fetched as a check. Default 32. */
  readonly checkEvery: number;
}

const resolveAnchorOptions = defineOptions<AnchorCopiesOptions>('AnchorCopiesOptions', {
  minEvidence: numberField({ min: 1, max: 1000, integer: true, default: 3 }),
  maxDistance: numberField({ min: 0, max: 64, integer: true, default: NEAR_DUP_DISTANCE }),
  maxShapes: numberField({ min: 1, max: 1 << 20, integer: true, default: 4096 }),
  checkEvery: numberField({ min: 2, max: 1 << 20, integer: true, default: 32 }),
});

/** Anchored links remembered until their fetch (≈ 3 MB at 100-character URLs). */
export const MAX_PENDING = 16_384;

/** A lesson as a checkpoint keeps it: the shape (`scheme://authority/path?key,key`) and whether it is learned (true) or banned (false). */
export type AnchorRecord = readonly [shape: string, learned: boolean];

const SHAPE = /^https?:\/\/[^/?#\s]+\/[^?#\s]*\?[^?#\s]*$/;

/** Why `r` is not an `AnchorRecord`, or undefined when it is one. */
export function anchorRecordProblem(r: unknown): string | undefined {
  if (!Array.isArray(r) || r.length !== 2) return 'not a [shape, learned] record';
  if (typeof r[0] !== 'string' || !SHAPE.test(r[0])) return `shape ${JSON.stringify(r[0])} is not an http(s) origin and path with its key names after "?"`;
  if (typeof r[1] !== 'boolean') return `learned ${JSON.stringify(r[1])} is not true or false`;
  return undefined;
}

/** The shape of a canonical URL: origin and path, then `?` and its query's key names, sorted and distinct, comma-separated. */
export function anchorShapeOf(url: string): string {
  const hash = url.indexOf('#');
  const bare = hash < 0 ? url : url.slice(0, hash);
  const q = bare.indexOf('?');
  if (q < 0) return `${bare}?`;
  const keys = new Set<string>();
  for (const pair of bare.slice(q + 1).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    keys.add(eq < 0 ? pair : pair.slice(0, eq));
  }
  return `${bare.slice(0, q)}?${[...keys].sort().join(',')}`;
}

/** Learns the URL shapes whose anchored links are copies of the page they sit on (see the module comment). */
export class AnchorCopies {
  /** The resolved options. */
  readonly options: Readonly<AnchorCopiesOptions>;
  /** Anchored URL → the simhash of the page it was found on. */
  readonly #pending = new Map<string, bigint>();
  /** Of them, the ones kept as checks of a learned shape: never refused at dispatch. */
  readonly #checks = new Set<string>();
  /** Shape → the distinct URLs that were copies of their page. */
  readonly #evidence = new Map<string, Set<string>>();
  /** Learned shape → its anchored links met since (every `checkEvery`th is kept as a check). */
  readonly #learned = new Map<string, number>();
  readonly #banned = new Set<string>();

  /** Learns nothing until told. Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<AnchorCopiesOptions> | null) {
    this.options = resolveAnchorOptions(options);
  }

  /**
   * A fetched page's links (the page whole, 2xx; `simhash` its visible text's): returns the
   * anchored ones of a learned shape — copies of this page, for the engine to drop — or
   * undefined when there are none; the other anchored ones are remembered for their fetch.
   */
  noteLinks(simhash: bigint | undefined, links: readonly Link[]): Set<string> | undefined {
    if (!Array.isArray(links)) throw new InvalidArgumentError('AnchorCopies.noteLinks: expected an array of links');
    if (simhash === undefined || simhash === 0n) return undefined;
    let copies: Set<string> | undefined;
    for (const l of links) {
      if (l.anchored !== true) continue;
      const shape = anchorShapeOf(l.url);
      if (this.#banned.has(shape)) continue;
      const met = this.#learned.get(shape);
      if (met !== undefined) {
        this.#learned.set(shape, met + 1);
        if ((met + 1) % this.options.checkEvery !== 0) {
          (copies ??= new Set()).add(l.url);
          continue;
        }
        this.#checks.add(l.url);
        if (this.#checks.size > MAX_PENDING) evictOldest(this.#checks);
      }
      if (this.#pending.has(l.url)) continue;
      this.#pending.set(l.url, simhash);
      if (this.#pending.size > MAX_PENDING) evictOldest(this.#pending);
    }
    return copies;
  }

  /**
   * A page fetched at `url` (2xx, whole): if `url` came as an anchored link, whether its text is
   * the text of the page it was on is evidence for its shape, or a ban. Returns true when this
   * fetch taught the shape.
   */
  observe(url: string, simhash: bigint | undefined): boolean {
    if (typeof url !== 'string') throw new InvalidArgumentError(`AnchorCopies.observe: expected a URL string, received ${typeof url}`);
    const on = this.#pending.get(url);
    if (on === undefined) return false;
    this.#pending.delete(url);
    this.#checks.delete(url);
    if (simhash === undefined || simhash === 0n) return false;
    const shape = anchorShapeOf(url);
    if (this.#banned.has(shape)) return false;
    if (hamming(on, simhash) > this.options.maxDistance) {
      this.#ban(shape);
      return false;
    }
    if (this.#learned.has(shape)) return false;
    let urls = this.#evidence.get(shape);
    if (urls === undefined) {
      urls = new Set();
      this.#evidence.set(shape, urls);
      if (this.#evidence.size > this.options.maxShapes) evictOldest(this.#evidence);
    }
    urls.add(url);
    if (urls.size < this.options.minEvidence) return false;
    this.#evidence.delete(shape);
    this.#learned.set(shape, 0);
    if (this.#learned.size > this.options.maxShapes) evictOldest(this.#learned);
    return true;
  }

  /**
   * A URL that came as an anchored link, of a shape learned since, still waiting for its fetch:
   * a copy of a page fetched already (refused at dispatch; forgotten).
   */
  refuses(url: string): boolean {
    if (this.#learned.size === 0 || !this.#pending.has(url) || this.#checks.has(url) || !this.#learned.has(anchorShapeOf(url))) return false;
    this.#pending.delete(url);
    return true;
  }

  /**
   * Whether `url` is of a learned shape: a resume does not queue again a row of one that was
   * refused (it was an anchored link's, a copy; the links waiting are not checkpointed).
   */
  covers(url: string): boolean {
    return this.#learned.size > 0 && this.#learned.has(anchorShapeOf(url));
  }

  /** The shapes learned, oldest first. */
  learned(): string[] {
    return [...this.#learned.keys()];
  }

  /** The lessons for a checkpoint: shapes learned, then banned ones. */
  export(): AnchorRecord[] {
    return [...[...this.#learned.keys()].map((s): AnchorRecord => [s, true]), ...[...this.#banned].map((s): AnchorRecord => [s, false])];
  }

  /** Takes back `export`'s lessons. Throws `InvalidArgumentError` naming a bad record. */
  import(records: readonly AnchorRecord[]): void {
    if (!Array.isArray(records)) throw new InvalidArgumentError('AnchorCopies.import: expected an array of [shape, learned] records');
    for (const r of records) {
      const problem = anchorRecordProblem(r);
      if (problem !== undefined) throw new InvalidArgumentError(`AnchorCopies.import: ${problem}`);
      if (!r[1]) this.#ban(r[0]);
      else if (!this.#banned.has(r[0])) this.#learned.set(r[0], 0);
    }
  }

  #ban(shape: string): void {
    this.#evidence.delete(shape);
    this.#learned.delete(shape);
    this.#banned.delete(shape);
    this.#banned.add(shape);
    if (this.#banned.size > this.options.maxShapes) evictOldest(this.#banned);
  }
}
