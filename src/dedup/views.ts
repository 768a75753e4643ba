/**
 * ViewKeys: query keys that select a *view* of a page — a filter, a sort order — which the site
 * itself names a version of the page without them.
 *
 * A shop's category page links each filter and each sort order, and every filtered page links
 * the next filter on top: `/shop/?filter_color=red&filter_size=m&orderby=price`. A shop of 60
 * products on a loopback WooCommerce-shaped site was 15,000 requests into such combinations
 * after three minutes, 38,000 more queued, against about 85 pages of its own. Each view names the
 * unfiltered listing as its `<link rel=canonical>` (the site says "this is a version of that
 * page"), yet its text differs (other products listed), so `ParamLearner` — which wants the
 * canonical page's text, because a wrong merge loses pages — bans the key instead.
 *
 * Here the second signal is not the text but what the page *brings*: a view lists items the
 * crawl reaches anyway. A page is evidence for the keys its canonical drops (the canonical is
 * exactly its URL less those keys, values unchanged) when it brought no link the crawl did not
 * know (`novel`, counted by the engine over its followed links to other paths of its origin,
 * links carrying one of those keys aside: they are views too). A page that did bring new links
 * counts against them. A key is learned for its section (origin and first path segment, as
 * `ParamLearner`'s scope) once `minEvidence` distinct URLs were quiet, at least twice as many as
 * brought news, and one of its values came back on two of them: facets and sort orders reuse a
 * few values (`red`, `price`) across many URLs, while a key that selects content — an article's
 * `?id=` under a site-wide canonical gone wrong — has a value per page and is never learned.
 * Pagination named canonical to its first page (a known mistake of some sites) brings new items
 * on every page, so it is not learned either, unless every item is known already (a sitemap),
 * when skipping it loses nothing known.
 *
 * Once learned, links drop the section's view keys before they are keyed (`rewrite`): they lead
 * to the page the site names canonical, known or fetched once. Rows queued before the lesson
 * that carry such a key are refused at dispatch (`refuses`; never a seed), every `checkEvery`th
 * let through as a check. A check (or any page of the key) that brings new links lifts the lesson
 * (`'lifted'`: the engine queues the refused rows again; links already rewritten stay so), and a
 * page naming itself canonical with the key bans it for the run (the site says it matters).
 *
 * Owns: per section, the keys learned and banned and the evidence so far. Never: fetch, count a
 * link's novelty (the engine asks the frontier), URL identity, or clocks. A checkpoint keeps the
 * keys learned and banned (`export` / `import`), not the evidence.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { keyOf, sectionOf, sectionProblem } from './params.js';

/** Options of a `ViewKeys`. */
export interface ViewKeysOptions {
  /** Distinct quiet URLs (no new link) whose canonical drops a key before it is learned. Default 3. */
  readonly minEvidence: number;
  /** Sections with evidence, learned or banned keys (oldest dropped). Default 4,096. */
  readonly maxSections: number;
  /** Keys tracked per section. Default 16. */
  readonly maxKeysPerSection: number;
  /** Of the queued rows a learned key refuses, every this many-th is fetched as a check. Default 32. */
  readonly checkEvery: number;
}

const resolveViewOptions = defineOptions<ViewKeysOptions>('ViewKeysOptions', {
  minEvidence: numberField({ min: 1, max: 64, integer: true, default: 3 }),
  maxSections: numberField({ min: 1, max: 1 << 20, integer: true, default: 4096 }),
  maxKeysPerSection: numberField({ min: 1, max: 256, integer: true, default: 16 }),
  checkEvery: numberField({ min: 2, max: 1 << 20, integer: true, default: 32 }),
});

/** Distinct URLs (and values) remembered per key and side: past this, counts stop growing. */
const MAX_SAMPLES = 64;

/** A section's learned and banned view keys as a checkpoint keeps them (`ViewKeys.export`). */
export type ViewRecord = readonly [section: string, learned: readonly string[], banned: readonly string[]];

/** What a page changed (`ViewKeys.observe`): keys learned, or learned keys lifted or banned (their refused rows may be queued again). */
export interface ViewChange {
  readonly change: 'learned' | 'lifted';
  readonly section: string;
  readonly keys: readonly string[];
}

const isKeyList = (v: unknown): v is string[] => Array.isArray(v) && v.length <= 256 && v.every((k) => typeof k === 'string' && k.length > 0 && k.length <= 256 && !/[&=?#\s]/.test(k));

/** Why `r` is not a `ViewRecord` (undefined: it is one). */
export function viewRecordProblem(r: unknown): string | undefined {
  if (!Array.isArray(r) || r.length !== 3) return 'not a [section, learned keys, banned keys] record';
  const section = sectionProblem(r[0]);
  if (section !== undefined) return `section ${section}`;
  if (!isKeyList(r[1]) || !isKeyList(r[2])) return 'its keys are not lists of query key names (1–256 characters, no & = ? # or space)';
  return undefined;
}

interface KeyEvidence {
  /** Distinct URLs of the key that brought no new link (at most MAX_SAMPLES). */
  readonly quiet: Set<string>;
  /** Distinct URLs of the key that brought new links (at most MAX_SAMPLES). */
  readonly novel: Set<string>;
  /** The key's value on each quiet URL → how many (at most MAX_SAMPLES values). */
  readonly values: Map<string, number>;
  /** Some value came back on two quiet URLs. */
  repeated: boolean;
}

interface Section {
  readonly learned: Set<string>;
  readonly banned: Set<string>;
  readonly evidence: Map<string, KeyEvidence>;
  /** Rows refused for this section's keys since the last check let through. */
  refusals: number;
}

/** A URL's query pairs (none without a query). */
function pairsOf(url: string): string[] {
  const q = url.indexOf('?');
  return q < 0 || q === url.length - 1 ? [] : url.slice(q + 1).split('&');
}

/** Learns, per section, query keys that select a view of the page the site names canonical (see the module comment). */
export class ViewKeys {
  readonly options: Readonly<ViewKeysOptions>;
  readonly #sections = new Map<string, Section>();
  /** Sections with a learned key: `rewrite` and `refuses` look at a URL's query only when some are. */
  #learnedSections = 0;

  constructor(options?: Partial<ViewKeysOptions> | null) {
    this.options = resolveViewOptions(options);
  }

  /**
   * The keys a page's canonical drops, when the page may be evidence on them: `canonical` is
   * exactly `url` less those keys (values unchanged) and some of them are not banned in its
   * section. The engine counts the page's new links only then, leaving out links that carry one
   * of these keys. Undefined otherwise (no canonical, the page's own, another path or query).
   */
  viewKeysOf(url: string, canonical: string | undefined): ReadonlySet<string> | undefined {
    if (canonical === undefined || canonical === url) return undefined;
    const q = url.indexOf('?');
    if (q < 0) return undefined;
    const base = url.slice(0, q);
    const cq = canonical.indexOf('?');
    if ((cq < 0 ? canonical : canonical.slice(0, cq)) !== base) return undefined;
    const kept = new Set(pairsOf(canonical));
    const pairs = pairsOf(url);
    const dropped = new Set<string>();
    const keptPairs: string[] = [];
    for (const p of pairs) {
      if (kept.has(p)) keptPairs.push(p);
      else dropped.add(keyOf(p));
    }
    // Only a canonical that is exactly this URL less some keys is the site's word on them.
    if (dropped.size === 0 || keptPairs.length === pairs.length) return undefined;
    for (const p of keptPairs) if (dropped.has(keyOf(p))) return undefined;
    if ((keptPairs.length === 0 ? base : `${base}?${keptPairs.join('&')}`) !== canonical) return undefined;
    const section = sectionOf(url);
    if (section === undefined) return undefined;
    const s = this.#sections.get(section);
    if (s !== undefined && [...dropped].every((k) => s.banned.has(k))) return undefined;
    return dropped;
  }

  /**
   * A page fetched whole at `url` (canonical form) with its `<link rel=canonical>` (canonical form,
   * or undefined) and `novel`, how many of its links to other paths of its origin the crawl did
   * not know before it (links carrying a key of `viewKeysOf` aside). Returns what it changed, or
   * undefined.
   */
  observe(url: string, canonical: string | undefined, novel: number): ViewChange | undefined {
    if (typeof url !== 'string') throw new InvalidArgumentError(`ViewKeys.observe url must be a string, got ${typeof url}`);
    if (!Number.isInteger(novel) || novel < 0) throw new InvalidArgumentError(`ViewKeys.observe novel must be a non-negative integer, got ${String(novel)}`);
    const section = sectionOf(url);
    if (section === undefined) return undefined;
    // The site names this URL, keys and all, its page: those keys matter here.
    if (canonical === url) {
      const keys = pairsOf(url).map(keyOf);
      return keys.length > 0 ? this.#ban(section, keys) : undefined;
    }
    const dropped = this.viewKeysOf(url, canonical);
    if (dropped === undefined) return undefined;
    const s = this.#section(section);
    // The canonical keeps a key of this page: that key is part of the page's name.
    const kept = pairsOf(canonical!).map(keyOf);
    const banned = kept.length > 0 ? this.#ban(section, kept) : undefined;
    const learned: string[] = [];
    const lifted: string[] = [];
    const values = new Map(pairsOf(url).map((p) => [keyOf(p), p.slice(p.indexOf('=') + 1)] as const).reverse());
    for (const k of dropped) {
      if (s.banned.has(k)) continue;
      const ev = this.#evidenceOf(s, k);
      if (ev === undefined) continue;
      if (novel > 0) {
        if (ev.novel.size < MAX_SAMPLES) ev.novel.add(url);
        if (s.learned.has(k)) {
          this.#unlearn(s, k);
          lifted.push(k);
        }
        continue;
      }
      if (ev.quiet.has(url)) continue;
      if (ev.quiet.size < MAX_SAMPLES) ev.quiet.add(url);
      const v = values.get(k) ?? '';
      const seen = ev.values.get(v);
      if (seen !== undefined) {
        ev.values.set(v, seen + 1);
        ev.repeated = true;
      } else if (ev.values.size < MAX_SAMPLES) ev.values.set(v, 1);
      if (!s.learned.has(k) && ev.repeated && ev.quiet.size >= this.options.minEvidence && ev.quiet.size >= 2 * ev.novel.size) {
        this.#learn(s, k);
        learned.push(k);
      }
    }
    if (lifted.length > 0 || banned !== undefined) return { change: 'lifted', section, keys: [...lifted, ...(banned?.keys ?? [])] };
    return learned.length > 0 ? { change: 'learned', section, keys: learned } : undefined;
  }

  /** `url` (canonical form) less the view keys learned for its section, or undefined when it carries none. */
  rewrite(url: string): string | undefined {
    if (this.#learnedSections === 0) return undefined;
    const q = url.indexOf('?');
    if (q < 0) return undefined;
    const s = this.#sections.get(sectionOf(url) ?? '');
    if (s === undefined || s.learned.size === 0) return undefined;
    const all = pairsOf(url);
    const pairs = all.filter((p) => !s.learned.has(keyOf(p)));
    if (pairs.length === all.length) return undefined;
    return pairs.length === 0 ? url.slice(0, q) : `${url.slice(0, q)}?${pairs.join('&')}`;
  }

  /**
   * Whether a queued URL is refused at dispatch: it carries a view key learned for its section
   * since it was queued. Never a seed (`depth` 0); every `checkEvery`th is let through as a check.
   */
  refuses(url: string, depth: number): boolean {
    if (depth === 0 || this.rewrite(url) === undefined) return false;
    const s = this.#sections.get(sectionOf(url)!)!;
    if (++s.refusals >= this.options.checkEvery) {
      s.refusals = 0;
      return false;
    }
    return true;
  }

  /**
   * A link taken from `original` to `rewritten` without learned view keys led to a page that is
   * not there (404, 410, a soft-404): the keys select more than a view in that section, so they
   * are banned. Returns the keys lifted, or undefined when none.
   */
  refuted(original: string, rewritten: string): ViewChange | undefined {
    const section = sectionOf(original);
    const s = section === undefined ? undefined : this.#sections.get(section);
    if (s === undefined || s.learned.size === 0) return undefined;
    const kept = new Set(pairsOf(rewritten).map(keyOf));
    const gone = pairsOf(original).map(keyOf).filter((k) => !kept.has(k) && s.learned.has(k));
    return gone.length > 0 ? this.#ban(section!, gone) : undefined;
  }

  /** Whether `url` carries one of `keys` (in `section`, when given: the rows a lifted lesson had refused). */
  static carries(url: string, keys: ReadonlySet<string> | readonly string[], section?: string): boolean {
    if (section !== undefined && sectionOf(url) !== section) return false;
    const has = Array.isArray(keys) ? (k: string) => keys.includes(k) : (k: string) => (keys as ReadonlySet<string>).has(k);
    return pairsOf(url).some((p) => has(keyOf(p)));
  }

  /** The keys learned, per section (sections in the order they first held evidence). */
  learned(): { section: string; keys: string[] }[] {
    const out: { section: string; keys: string[] }[] = [];
    for (const [section, s] of this.#sections) if (s.learned.size > 0) out.push({ section, keys: [...s.learned].sort() });
    return out;
  }

  /** What a checkpoint keeps: per section with a learned or banned key, both lists. */
  export(): ViewRecord[] {
    const out: ViewRecord[] = [];
    for (const [section, s] of this.#sections) if (s.learned.size > 0 || s.banned.size > 0) out.push([section, [...s.learned], [...s.banned]]);
    return out;
  }

  /** Takes back `export`'s keys; a key both learned and banned stays banned. Throws `InvalidArgumentError` naming a bad record. */
  import(records: readonly ViewRecord[]): void {
    if (!Array.isArray(records)) throw new InvalidArgumentError('ViewKeys.import: expected an array of [section, learned, banned] records');
    for (const r of records) {
      const problem = viewRecordProblem(r);
      if (problem !== undefined) throw new InvalidArgumentError(`ViewKeys.import: ${problem}`);
      const s = this.#section(r[0]);
      for (const k of r[2].slice(0, this.options.maxKeysPerSection)) {
        this.#unlearn(s, k);
        s.banned.add(k);
      }
      for (const k of r[1].slice(0, this.options.maxKeysPerSection)) if (!s.banned.has(k)) this.#learn(s, k);
    }
  }

  #section(section: string): Section {
    let s = this.#sections.get(section);
    if (s !== undefined) return s;
    s = { learned: new Set(), banned: new Set(), evidence: new Map(), refusals: 0 };
    this.#sections.set(section, s);
    if (this.#sections.size > this.options.maxSections) {
      // Forget a section without a lesson first, then one with bans only, then the oldest —
      // never the one just made (a crawl of many sections still learns in new ones).
      let victim: string | undefined;
      let bansOnly: string | undefined;
      for (const [name, o] of this.#sections) {
        if (name === section || o.learned.size > 0) continue;
        if (o.banned.size === 0) {
          victim = name;
          break;
        }
        bansOnly ??= name;
      }
      victim ??= bansOnly;
      const gone = victim ?? this.#sections.keys().next().value!;
      if (this.#sections.get(gone)!.learned.size > 0) this.#learnedSections--;
      this.#sections.delete(gone);
    }
    return s;
  }

  #evidenceOf(s: Section, k: string): KeyEvidence | undefined {
    let ev = s.evidence.get(k);
    if (ev !== undefined) return ev;
    if (s.evidence.size >= this.options.maxKeysPerSection) return undefined;
    ev = { quiet: new Set(), novel: new Set(), values: new Map(), repeated: false };
    s.evidence.set(k, ev);
    return ev;
  }

  #learn(s: Section, k: string): void {
    if (s.learned.has(k)) return;
    if (s.learned.size === 0) this.#learnedSections++;
    s.learned.add(k);
  }

  #unlearn(s: Section, k: string): void {
    if (!s.learned.delete(k)) return;
    if (s.learned.size === 0) this.#learnedSections--;
  }

  #ban(section: string, keys: readonly string[]): ViewChange | undefined {
    const s = this.#section(section);
    const lifted: string[] = [];
    for (const k of new Set(keys)) {
      if (s.learned.has(k)) lifted.push(k);
      this.#unlearn(s, k);
      s.evidence.delete(k);
      if (s.banned.size < this.options.maxKeysPerSection || s.banned.has(k)) s.banned.add(k);
    }
    return lifted.length > 0 ? { change: 'lifted', section, keys: lifted } : undefined;
  }
}
