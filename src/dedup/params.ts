/**
 * Query parameters a site ignores, learned from its own pages (DUST: different URLs with
 * similar text). The canonicalizer drops the well-known tracking and session keys (`utm_*`,
 * `gclid`, `jsessionid`…), but every site has its own: `?ref=prev`, `?from=nav`, `?src=feed`.
 * A blog whose "next" links carry `?ref=prev` doubles its crawl — on a loopback blog of 300
 * posts, 294 of 671 fetches were such copies.
 *
 * The learner takes two independent signals before it believes a key is ignorable on an
 * origin, because a wrong merge loses pages: the page's `<link rel=canonical>` names the
 * same URL without that key (the site says so), *and* the page's text is a near-duplicate
 * (simhash within `maxDistance` bits) of the page fetched at that canonical URL (the content
 * says so). Rel=canonical alone is not enough: sites point `?page=2` at `?page=1`'s URL, and
 * the text then differs. After `minEvidence` distinct URLs agree, the key is learned for the
 * origin; any contradiction bans it there for the rest of the run, and unlearns it if it was
 * learned — a page whose canonical drops the key while its text differs from the canonical
 * page's, or a page that names itself canonical with the key (the site says the key matters).
 *
 * Owns: per origin, the keys learned, banned and the evidence so far; the simhashes of pages
 * that could be canonical targets. Never: URL identity (the crawl's pinned `CanonPolicy`
 * decides that; the engine rewrites a link before its key is made, and refuses at dispatch a
 * queued copy whose canonical page was fetched), clocks, or persistence (a resumed crawl
 * learns again: a few copies are fetched until `minEvidence` pages agree).
 *
 * Memory is bounded: at most `maxPages` remembered pages (oldest dropped), `maxOrigins`
 * origins with evidence and `maxKeysPerOrigin` keys per origin, each holding at most
 * `minEvidence` URLs.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';

/** Options of a `ParamLearner`. */
export interface ParamLearnerOptions {
  /** Distinct URLs whose canonical and text agree before a key is learned. Default 3. */
  readonly minEvidence: number;
  /** Most simhash bits a copy may differ by from its canonical page. Default 3 (DESIGN §6). */
  readonly maxDistance: number;
  /** Pages remembered as canonical targets (URL → simhash; oldest dropped). Default 16,384. */
  readonly maxPages: number;
  /** Origins holding evidence. Default 65,536. */
  readonly maxOrigins: number;
  /** Keys tracked per origin. Default 32. */
  readonly maxKeysPerOrigin: number;
}

const resolveOptions = defineOptions<ParamLearnerOptions>('ParamLearnerOptions', {
  minEvidence: numberField({ min: 1, max: 64, integer: true, default: 3 }),
  maxDistance: numberField({ min: 0, max: 64, integer: true, default: 3 }),
  maxPages: numberField({ min: 1, max: 1 << 24, integer: true, default: 16_384 }),
  maxOrigins: numberField({ min: 1, max: 1 << 24, integer: true, default: 65_536 }),
  maxKeysPerOrigin: numberField({ min: 1, max: 1 << 10, integer: true, default: 32 }),
});

/** What one page taught (`ParamLearner.observe`). */
export interface ParamLesson {
  /** The page's origin (`scheme://host[:port]`). */
  readonly origin: string;
  /** Keys learned ignorable by this page. */
  readonly learned: readonly string[];
  /** Keys learned before and unlearned by this page. */
  readonly unlearned: readonly string[];
}

interface OriginParams {
  readonly learned: Set<string>;
  readonly banned: Set<string>;
  /** Per key, the distinct URLs that agreed so far (at most minEvidence). */
  readonly evidence: Map<string, Set<string>>;
}

/** A canonical http(s) URL split at its path and query: `base` is everything before `?`. */
interface SplitUrl {
  readonly origin: string;
  readonly base: string;
  readonly pairs: readonly string[];
}

function split(url: string): SplitUrl | undefined {
  const scheme = url.indexOf('://');
  if (scheme <= 0) return undefined;
  const slash = url.indexOf('/', scheme + 3);
  const origin = slash < 0 ? url : url.slice(0, slash);
  const q = url.indexOf('?');
  if (q < 0) return { origin, base: url, pairs: [] };
  const query = url.slice(q + 1);
  return { origin, base: url.slice(0, q), pairs: query === '' ? [] : query.split('&') };
}

function keyOf(pair: string): string {
  const eq = pair.indexOf('=');
  return eq < 0 ? pair : pair.slice(0, eq);
}

function join(base: string, pairs: readonly string[]): string {
  return pairs.length === 0 ? base : `${base}?${pairs.join('&')}`;
}

function popcount64(x: bigint): number {
  let n = 0;
  let v = BigInt.asUintN(64, x);
  while (v !== 0n) {
    v &= v - 1n;
    n++;
  }
  return n;
}

/** Learns, per origin, query keys that do not change a page (see the module comment). */
export class ParamLearner {
  readonly options: Readonly<ParamLearnerOptions>;
  readonly #origins = new Map<string, OriginParams>();
  /** URL → simhash of pages that may be canonical targets (insertion order: oldest first). */
  readonly #pages = new Map<string, bigint>();

  constructor(options?: Partial<ParamLearnerOptions> | null) {
    this.options = resolveOptions(options);
  }

  /**
   * A page fetched at `url` (canonical form) with its `<link rel=canonical>` (canonical form,
   * or undefined) and its text's 64-bit simhash (undefined: nothing is learned from it).
   * Returns the keys it learned or unlearned, or undefined when none.
   */
  observe(url: string, canonical: string | undefined, simhash: bigint | undefined): ParamLesson | undefined {
    if (typeof url !== 'string') throw new InvalidArgumentError(`ParamLearner.observe url must be a string, got ${typeof url}`);
    if (simhash === undefined) return undefined;
    if (typeof simhash !== 'bigint') throw new InvalidArgumentError(`ParamLearner.observe simhash must be a bigint, got ${typeof simhash}`);
    const u = split(url);
    if (u === undefined) return undefined;
    if (canonical === undefined || canonical === url) {
      this.#remember(url, simhash);
      // A page naming itself canonical with its keys: the site says they matter.
      return canonical === url ? this.#ban(u.origin, u.pairs.map(keyOf)) : undefined;
    }
    const c = split(canonical);
    if (c === undefined || c.base !== u.base || u.pairs.length === 0) return undefined;
    const kept = new Set(c.pairs.map(keyOf));
    const dropped = [...new Set(u.pairs.map(keyOf).filter((k) => !kept.has(k)))];
    // Only a canonical that is exactly this URL less some keys (values unchanged) is evidence.
    if (dropped.length === 0 || join(u.base, u.pairs.filter((p) => kept.has(keyOf(p)))) !== canonical) return undefined;
    const target = this.#pages.get(canonical);
    if (target === undefined) return undefined;
    if (popcount64(target ^ simhash) > this.options.maxDistance) return this.#ban(u.origin, dropped);
    return this.#agree(u.origin, url, dropped);
  }

  /** `url` (canonical form) without the keys learned for its origin, or undefined when it has none of them. */
  rewrite(url: string): string | undefined {
    if (this.#origins.size === 0) return undefined;
    const q = url.indexOf('?');
    if (q < 0) return undefined;
    const u = split(url);
    const o = u === undefined ? undefined : this.#origins.get(u.origin);
    if (o === undefined || o.learned.size === 0) return undefined;
    const pairs = u!.pairs.filter((p) => !o.learned.has(keyOf(p)));
    return pairs.length === u!.pairs.length ? undefined : join(u!.base, pairs);
  }

  /**
   * The page `url` is a copy of, when its learned keys dropped name a page fetched in this run
   * (so refusing `url` loses nothing); undefined otherwise.
   */
  duplicateOf(url: string): string | undefined {
    const r = this.rewrite(url);
    return r !== undefined && this.#pages.has(r) ? r : undefined;
  }

  /** The keys learned so far, per origin (origins in the order they first held evidence). */
  learned(): { origin: string; keys: string[] }[] {
    const out: { origin: string; keys: string[] }[] = [];
    for (const [origin, o] of this.#origins) if (o.learned.size > 0) out.push({ origin, keys: [...o.learned].sort() });
    return out;
  }

  #remember(url: string, simhash: bigint): void {
    this.#pages.delete(url);
    this.#pages.set(url, simhash);
    if (this.#pages.size > this.options.maxPages) this.#pages.delete(this.#pages.keys().next().value!);
  }

  #origin(origin: string): OriginParams | undefined {
    let o = this.#origins.get(origin);
    if (o === undefined && this.#origins.size < this.options.maxOrigins) {
      o = { learned: new Set(), banned: new Set(), evidence: new Map() };
      this.#origins.set(origin, o);
    }
    return o;
  }

  #agree(origin: string, url: string, keys: readonly string[]): ParamLesson | undefined {
    const o = this.#origin(origin);
    if (o === undefined) return undefined;
    const learned: string[] = [];
    for (const k of keys) {
      if (o.banned.has(k) || o.learned.has(k)) continue;
      let urls = o.evidence.get(k);
      if (urls === undefined) {
        if (o.evidence.size >= this.options.maxKeysPerOrigin) continue;
        urls = new Set();
        o.evidence.set(k, urls);
      }
      urls.add(url);
      if (urls.size < this.options.minEvidence) continue;
      o.evidence.delete(k);
      o.learned.add(k);
      learned.push(k);
    }
    return learned.length === 0 ? undefined : { origin, learned, unlearned: [] };
  }

  #ban(origin: string, keys: readonly string[]): ParamLesson | undefined {
    if (keys.length === 0) return undefined;
    const o = this.#origin(origin);
    if (o === undefined) return undefined;
    const unlearned: string[] = [];
    for (const k of new Set(keys)) {
      o.evidence.delete(k);
      if (o.learned.delete(k)) unlearned.push(k);
      // A key not remembered as banned (the set is full) can only gather evidence again.
      if (o.banned.size < this.options.maxKeysPerOrigin) o.banned.add(k);
    }
    return unlearned.length === 0 ? undefined : { origin, learned: [], unlearned };
  }
}
