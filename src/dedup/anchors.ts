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
 * and the item its query selects (a query value with a digit in the fragment, or the fragment in
 * it), and whose URL is not the page's (`Link.anchored`). A lesson is keyed by the linking pages'
 * path and the links' *shape* — origin, path and the sorted names of the query keys
 * (`http://f/viewtopic.php http://f/viewtopic.php?p`) — so the same links on a search page need
 * their own evidence. The first anchored links met are remembered with the text of the page they
 * were on (`noteLinks`); when one is fetched (`observe`), its page either matches (visible text
 * within `maxDistance` simhash bits, the same main text) — evidence — or does not, which bans the
 * lesson for the run. After `minEvidence` distinct URLs found on two pages or more agree, the
 * lesson is learned: from then on such a link is a copy of the page it is on and is dropped, and
 * one already queued from such a link is refused at dispatch (`refuses`; never a seed).
 * Only anchored links of a learned lesson are touched: a link of the same shape without the
 * fragment (a feed's link to a post, another page's "last post" link) is fetched as ever. Every
 * `checkEvery`th anchored link of a learned lesson is kept and fetched as a check; one whose page
 * is not its linking page's bans the lesson (`'lifted'`: the engine queues the refused URLs of
 * its shape again; the links dropped at intake stay dropped for the run).
 *
 * Owns: the anchored links waiting for their fetch (`MAX_PENDING`, oldest dropped) with their
 * page's texts, per lesson the evidence, the lessons learned and banned. Never: fetch, drop or
 * count a URL (the engine does, `CrawlCounts.anchorCopies`), or clocks. A checkpoint keeps the
 * shapes learned and banned (`export` / `import`), not the evidence or the waiting links.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { evictOldest } from '../lru/index.js';
import { NEAR_DUP_DISTANCE, hamming } from '../core/simhash.js';
import type { Link } from '../model/index.js';
import { withoutQuery } from '../url/host.js';

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

/**
 * A lesson as a checkpoint keeps it: the lesson's key — the linking pages' path, a space, the
 * links' shape (`http://f/viewtopic.php http://f/viewtopic.php?p`) — and whether it is learned
 * (true) or banned (false).
 */
export type AnchorRecord = readonly [key: string, learned: boolean];

const KEY = /^https?:\/\/[^/?#\s]+\/[^?#\s]* https?:\/\/[^/?#\s]+\/[^?#\s]*\?[^?#\s]*$/;

/** Why `r` is not an `AnchorRecord`, or undefined when it is one. */
export function anchorRecordProblem(r: unknown): string | undefined {
  if (!Array.isArray(r) || r.length !== 2) return 'not a [key, learned] record';
  if (typeof r[0] !== 'string' || !KEY.test(r[0])) return `key ${JSON.stringify(r[0])} is not a linking page's path, a space and a link shape (origin, path, "?" and its key names)`;
  if (typeof r[1] !== 'boolean') return `learned ${JSON.stringify(r[1])} is not true or false`;
  return undefined;
}

/** The shape of a canonical URL: origin and path, then `?` and its query's key names, sorted and distinct, comma-separated. */
export function anchorShapeOf(url: string): string {
  // A canonical URL has no fragment; one given anyway is no part of the shape.
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


/** What `AnchorCopies` reads of a page: its visible text's simhash and its main text's churn fingerprint (`Outcome.simhash`, `churnFp`). */
export interface AnchorPage {
  readonly simhash: bigint | undefined;
  readonly mainFp?: bigint | undefined;
}

/** An anchored link waiting for its fetch: the lesson it is evidence for and the page it was on. */
interface Waiting {
  readonly key: string;
  readonly page: string;
  readonly simhash: bigint;
  readonly mainFp: bigint | undefined;
  /** Kept as a check of a learned lesson: never refused. */
  readonly check: boolean;
}

/** What `AnchorCopies.observe` made of a fetch: a lesson learned, a learned one banned (its refused URLs may be queued again), or nothing new. */
export type AnchorChange = 'learned' | 'lifted' | undefined;

/** Learns the URL shapes whose anchored links are copies of the page they sit on (see the module comment). */
export class AnchorCopies {
  /** The resolved options. */
  readonly options: Readonly<AnchorCopiesOptions>;
  readonly #pending = new Map<string, Waiting>();
  /** Key → the distinct URLs that were copies of their page, and the distinct pages they were on. */
  readonly #evidence = new Map<string, { readonly urls: Set<string>; readonly pages: Set<string> }>();
  /** Learned key → its anchored links met since (every `checkEvery`th is kept as a check). */
  readonly #learned = new Map<string, number>();
  /** Link shape → how many learned keys it ends (`covers`). */
  readonly #shapes = new Map<string, number>();
  readonly #banned = new Set<string>();

  /** Learns nothing until told. Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<AnchorCopiesOptions> | null) {
    this.options = resolveAnchorOptions(options);
  }

  /**
   * A fetched page's followable links (the page at `pageUrl` whole, 2xx): returns the anchored
   * ones of a learned lesson — copies of this page, for the engine to drop — or undefined when
   * there are none; the other anchored ones are remembered for their fetch. Links also marked
   * a refresh target, a requisite or a feed, nofollow ones and shapes without a query (one URL
   * a path: nothing to learn) are left alone.
   */
  noteLinks(pageUrl: string, page: AnchorPage, links: readonly Link[]): Set<string> | undefined {
    if (typeof pageUrl !== 'string') throw new InvalidArgumentError(`AnchorCopies.noteLinks: expected the page URL as a string, received ${typeof pageUrl}`);
    if (!Array.isArray(links)) throw new InvalidArgumentError('AnchorCopies.noteLinks: expected an array of links');
    const { simhash, mainFp } = page;
    if (simhash === undefined || simhash === 0n) return undefined;
    let copies: Set<string> | undefined;
    let from: string | undefined;
    for (const l of links) {
      if (l.anchored !== true || l.nofollow === true || l.refresh === true || l.requisite === true || l.feed === true) continue;
      const shape = anchorShapeOf(l.url);
      if (shape.endsWith('?')) continue;
      from ??= withoutQuery(pageUrl);
      const key = `${from} ${shape}`;
      if (this.#banned.has(key)) continue;
      const met = this.#learned.get(key);
      let check = false;
      if (met !== undefined) {
        this.#learned.set(key, met + 1);
        check = (met + 1) % this.options.checkEvery === 0;
        if (!check) {
          (copies ??= new Set()).add(l.url);
          continue;
        }
      }
      // A check replaces the link's earlier entry (another view of the page noted it): it must be
      // fetched, not refused. (`set` on a key present keeps its place: `evictOldest` holds.)
      if (this.#pending.has(l.url) && !check) continue;
      this.#pending.set(l.url, { key, page: pageUrl, simhash, mainFp, check });
      if (this.#pending.size > MAX_PENDING) evictOldest(this.#pending);
    }
    return copies;
  }

  /**
   * A page fetched at `url` (2xx, whole): if `url` came as an anchored link, whether its text is
   * the text of the page it was on is evidence for its lesson, or bans it. Returns 'learned' when
   * this fetch taught the lesson, 'lifted' when it banned a learned one.
   */
  observe(url: string, page: AnchorPage): AnchorChange {
    if (typeof url !== 'string') throw new InvalidArgumentError(`AnchorCopies.observe: expected a URL string, received ${typeof url}`);
    const w = this.#pending.get(url);
    if (w === undefined) return undefined;
    this.#pending.delete(url);
    const { simhash, mainFp } = page;
    if (simhash === undefined || simhash === 0n || this.#banned.has(w.key)) return undefined;
    const copy = hamming(w.simhash, simhash) <= this.options.maxDistance && (w.mainFp === undefined || mainFp === undefined || w.mainFp === mainFp);
    const learned = this.#learned.has(w.key);
    if (!copy) {
      this.#ban(w.key);
      return learned ? 'lifted' : undefined;
    }
    if (learned) return undefined;
    let ev = this.#evidence.get(w.key);
    if (ev === undefined) {
      ev = { urls: new Set(), pages: new Set() };
      this.#evidence.set(w.key, ev);
      if (this.#evidence.size > this.options.maxShapes) evictOldest(this.#evidence);
    }
    ev.urls.add(url);
    ev.pages.add(w.page);
    if (ev.urls.size < this.options.minEvidence || ev.pages.size < Math.min(2, this.options.minEvidence)) return undefined;
    this.#evidence.delete(w.key);
    this.#learn(w.key);
    return 'learned';
  }

  /**
   * Whether a queued URL is refused at dispatch: it came as an anchored link of a lesson learned
   * since and still waits for its fetch (a copy of a page fetched already; forgotten then).
   * Never a check, never a seed (`depth` 0).
   */
  refuses(url: string, depth: number): boolean {
    if (this.#learned.size === 0 || depth === 0) return false;
    const w = this.#pending.get(url);
    if (w === undefined || w.check || !this.#learned.has(w.key)) return false;
    this.#pending.delete(url);
    return true;
  }

  /**
   * Whether `url` has the shape of a learned lesson's links: a resume does not queue again a row
   * of one that was refused (most likely an anchored link's copy; the links waiting are not
   * checkpointed).
   */
  covers(url: string): boolean {
    return this.#shapes.size > 0 && this.#shapes.has(anchorShapeOf(url));
  }

  /** The lessons learned (linking pages' path, a space, the links' shape), oldest first. */
  learned(): string[] {
    return [...this.#learned.keys()];
  }

  /** The lessons for a checkpoint: learned, then banned. */
  export(): AnchorRecord[] {
    return [...[...this.#learned.keys()].map((k): AnchorRecord => [k, true]), ...[...this.#banned].map((k): AnchorRecord => [k, false])];
  }

  /** Takes back `export`'s lessons. Throws `InvalidArgumentError` naming a bad record. */
  import(records: readonly AnchorRecord[]): void {
    if (!Array.isArray(records)) throw new InvalidArgumentError('AnchorCopies.import: expected an array of [key, learned] records');
    for (const r of records) {
      const problem = anchorRecordProblem(r);
      if (problem !== undefined) throw new InvalidArgumentError(`AnchorCopies.import: ${problem}`);
      if (!r[1]) this.#ban(r[0]);
      else if (!this.#banned.has(r[0]) && !this.#learned.has(r[0])) this.#learn(r[0]);
    }
  }

  #learn(key: string): void {
    this.#learned.set(key, 0);
    const shape = key.slice(key.indexOf(' ') + 1);
    this.#shapes.set(shape, (this.#shapes.get(shape) ?? 0) + 1);
    if (this.#learned.size > this.options.maxShapes) {
      const oldest = evictOldest(this.#learned);
      if (oldest !== undefined) this.#unshape(oldest);
    }
  }

  #unshape(key: string): void {
    const shape = key.slice(key.indexOf(' ') + 1);
    const n = (this.#shapes.get(shape) ?? 1) - 1;
    if (n > 0) this.#shapes.set(shape, n);
    else this.#shapes.delete(shape);
  }

  #ban(key: string): void {
    this.#evidence.delete(key);
    if (this.#learned.delete(key)) this.#unshape(key);
    this.#banned.delete(key);
    this.#banned.add(key);
    if (this.#banned.size > this.options.maxShapes) evictOldest(this.#banned);
  }
}
