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
 * crawl reaches anyway. A page whose canonical is exactly its URL less some keys (values
 * unchanged) counts against them all when it brought links the crawl did not know (`novel`,
 * counted by the engine over its followed links to other paths of its origin, whatever keys they
 * carry: `/docs/x?lang=fr` from `/docs/?lang=fr` is news; links to its own path, the filters
 * themselves, are not counted; a link to another page of its own listing paged in the path,
 * `/shop/page/2/?filter_color=red`, counts as that page as taken once learned: `newsTargetOf`),
 * and is *quiet* evidence otherwise — for the one key it drops that
 * is not learned yet, and only then (with two dropped, it may be quiet for the other's sake:
 * `?page=2&orderby=date` after `?page=2&orderby=price`). A key is learned for its scope (the
 * section, origin and first path segment as `ParamLearner`'s; a page at the root is its own) once
 * `minEvidence` distinct URLs were quiet, at least twice as many as brought news, and a worded
 * value (not a number) came back on two of them, while no number value did so far (a number value
 * is never dropped from a link, whatever was learned; facets with number values — shoe sizes,
 * ratings, years — are not learned): facets and sort
 * orders reuse a few worded values (`red`, `price`) across many URLs, while a key that selects
 * content — an article's `?id=` under a site-wide canonical gone wrong, the pages of an article or
 * a list named canonical to the first (a known mistake) — has a value per page, or numbers that
 * come back (`page=2` on every article). Left to the checks: a worded id (a slug, a UUID) that
 * comes back in one section, under a canonical naming the page without it.
 *
 * Once learned, links drop the section's view keys before they are keyed (`takeLink`): they lead
 * to the page the site names canonical, known or fetched once; one link in `checkEvery`, picked by
 * its hash, is kept whole and fetched as a check (not from a view's own page). Rows queued before the lesson that carry such a key are
 * refused at dispatch (`refuses`; never a seed nor a check), and only while the URL without them
 * has a row. A check (or any page of the key) that brings new
 * links bans the key for the run (`'lifted'`: the engine queues the refused rows again; links
 * already rewritten stay so), as does a page naming itself canonical with the key (the site says
 * it matters) or a rewritten link, remembered by the engine for another learner's rewrite too,
 * that finds no page (`refuted`).
 *
 * Owns: per section, the keys learned and banned and the evidence so far. Never: fetch, count a
 * link's novelty (the engine asks the frontier), URL identity, or clocks. A checkpoint keeps the
 * keys learned and banned (`export` / `import`), not the evidence.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { keyOf, sectionOf } from './params.js';
import { isNumberValue, pairsOf, picksAsCheck, valueOf } from './query.js';
import { withoutQuery } from '../url/host.js';

/** Options of a `ViewKeys`. */
export interface ViewKeysOptions {
  /** Distinct quiet URLs (no new link) whose canonical drops a key before it is learned. Default 3. */
  readonly minEvidence: number;
  /** Sections with evidence, learned or banned keys (oldest dropped). Default 4,096. */
  readonly maxSections: number;
  /** Keys tracked per section. Default 16. */
  readonly maxKeysPerSection: number;
  /** One URL in this many (by its hash) of a learned key's links and queued rows is fetched as a check. Default 32. */
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

const isKeyList = (v: unknown): v is string[] => Array.isArray(v) && v.length <= 256 && v.every((k) => typeof k === 'string' && isViewKey(k));

/** Why `r` is not a `ViewRecord` (undefined: it is one). */
export function viewRecordProblem(r: unknown): string | undefined {
  if (!Array.isArray(r) || r.length !== 3) return 'not a [section, learned keys, banned keys] record';
  if (typeof r[0] !== 'string' || !/^https?:\/\/[^/?#\s]+\/[^?#\s]*$/.test(r[0]) || viewScopeOf(r[0]) !== r[0]) return `section ${JSON.stringify(r[0])} is not an http(s) origin with a path of one segment, or a page at the root`;
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
  /** Some worded value (not digits alone: `red`, `price`) came back on two quiet URLs. */
  repeated: boolean;
  /** Some number value (`2`, `1,2`) came back on two quiet URLs: the key pages or counts, never learned. */
  numbered: boolean;
}

interface Section {
  readonly learned: Set<string>;
  readonly banned: Set<string>;
  readonly evidence: Map<string, KeyEvidence>;
  /** More keys were banned here than `maxKeysPerSection` holds: nothing more is learned (a ban is never dropped). */
  closed: boolean;
}

/**
 * The scope of `url`'s view lessons: its section (origin and first path segment, `/shop/`), or
 * for a page at the root its own path (`/index.php`, `/article`): every script at the root shares
 * the section `origin/`, and a lesson of one (`?orderby` of a listing) says nothing of another
 * (`/viewtopic.php?t=`).
 */
export function viewScopeOf(url: string): string | undefined {
  const section = sectionOf(url);
  if (section === undefined) return undefined;
  const path = withoutQuery(url);
  // The section is the origin's root (`http://a.test/`) only for a page at the root.
  const atRoot = section.indexOf('/', section.indexOf('://') + 3) === section.length - 1;
  return atRoot && path.length > section.length ? path : section;
}

/** Whether `k` can be a lesson's key as a checkpoint keeps it (`viewRecordProblem`'s rule). */
function isViewKey(k: string): boolean {
  return k.length > 0 && k.length <= 256 && !/[&=?#\s]/.test(k);
}

/**
 * A page number in the path, WordPress's shape (`/shop/page/2/`, `/category/news/page/3`): a
 * listing's later pages. Only these words before the number: a bare number in a path is too
 * often the item itself (`/docs/2`), and so is one after a short word (`/catalog/p/123`, a
 * product), which must stay news.
 */
const PATH_PAGE = /\/(?:page|seite|pagina|strona)\/\d{1,6}\/?$/i;

/** A path's listing: the path less a trailing page number and slash (`…/shop/page/2/` and `…/shop/` → `…/shop`). */
function listingOf(path: string): string {
  const m = PATH_PAGE.exec(path);
  if (m !== null) return path.slice(0, m.index);
  return path.endsWith('/') ? path.slice(0, -1) : path;
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
   * section. The engine counts the page's new links only then. Undefined otherwise (no
   * canonical, the page's own, another path or query).
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
    const section = viewScopeOf(url);
    if (section === undefined) return undefined;
    const s = this.#sections.get(section);
    if (s !== undefined && [...dropped].every((k) => s.banned.has(k))) return undefined;
    return dropped;
  }

  /**
   * A page fetched whole at `url` (canonical form) with its `<link rel=canonical>` (canonical form,
   * or undefined) and `novel`, how many of its links to other paths of its origin the crawl did
   * not know before it. Returns what it changed, or undefined.
   */
  observe(url: string, canonical: string | undefined, novel: number): ViewChange | undefined {
    if (typeof url !== 'string') throw new InvalidArgumentError(`ViewKeys.observe url must be a string, got ${typeof url}`);
    if (!Number.isInteger(novel) || novel < 0) throw new InvalidArgumentError(`ViewKeys.observe novel must be a non-negative integer, got ${String(novel)}`);
    const section = viewScopeOf(url);
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
    if (novel > 0) {
      // News: against every key dropped; a learned one was wrong here, banned for the run (a
      // lesson lifted and learned again would refuse the rows it had just given back).
      const wrong = [...dropped].filter((k) => s.learned.has(k));
      for (const k of dropped) {
        const ev = s.banned.has(k) || s.learned.has(k) ? undefined : this.#evidenceOf(s, k);
        if (ev !== undefined && ev.novel.size < MAX_SAMPLES) ev.novel.add(url);
      }
      const lifted = wrong.length > 0 ? this.#ban(section, wrong) : undefined;
      const keys = [...(lifted?.keys ?? []), ...(banned?.keys ?? [])];
      return keys.length > 0 ? { change: 'lifted', section, keys } : undefined;
    }
    if (banned !== undefined) return banned;
    // A quiet page is evidence only for the one key it drops that is not learned yet: with two
    // (`?page=2&orderby=date`), the page may be quiet for the other's sake (page 2 fetched
    // already under `?page=2&orderby=price`), which says nothing of `page`.
    const open = [...dropped].filter((k) => !s.learned.has(k) && !s.banned.has(k));
    if (open.length !== 1) return undefined;
    const k = open[0]!;
    const ev = this.#evidenceOf(s, k);
    if (ev === undefined || ev.quiet.has(url) || ev.quiet.size >= MAX_SAMPLES) return undefined;
    ev.quiet.add(url);
    const pair = pairsOf(url).find((p) => keyOf(p) === k)!;
    const v = valueOf(pair);
    const seen = ev.values.get(v);
    if (seen !== undefined) {
      ev.values.set(v, seen + 1);
      if (isNumberValue(v)) ev.numbered = true;
      else ev.repeated = true;
    } else if (ev.values.size < MAX_SAMPLES) ev.values.set(v, 1);
    if (!ev.repeated || ev.numbered || ev.quiet.size < this.options.minEvidence || ev.quiet.size < 2 * ev.novel.size || s.closed) return undefined;
    s.evidence.delete(k);
    this.#learn(s, k);
    return { change: 'learned', section, keys: [k] };
  }

  /**
   * The URL a link found on the view at `page` is judged by when the engine counts its news (the
   * links the crawl did not know): a link to another page of the view's own listing paged in the
   * path (`/shop/page/2/?filter_color=red` on `/shop/?filter_color=red`) as it would be taken
   * once the keys the view drops were learned — less those not banned in its scope, number
   * values kept (`rewrite`'s rule): it is that page's view, news only if that page is (a filtered
   * listing of more than one page linked its own next page, new to the crawl, and looked like
   * news on every filter); any other link as it is. All URLs in canonical form.
   */
  newsTargetOf(link: string, page: string, dropped: ReadonlySet<string>): string {
    const linkPath = withoutQuery(link);
    if (linkPath.length === link.length || listingOf(linkPath) !== listingOf(withoutQuery(page))) return link;
    const banned = this.#sections.get(viewScopeOf(page) ?? '')?.banned;
    const all = pairsOf(link);
    const pairs = all.filter((p) => {
      const k = keyOf(p);
      return !dropped.has(k) || banned?.has(k) === true || isNumberValue(valueOf(p));
    });
    if (pairs.length === all.length) return link;
    return pairs.length === 0 ? linkPath : `${linkPath}?${pairs.join('&')}`;
  }

  /** `url` (canonical form) less the view keys learned for its section, or undefined when it carries none. */
  rewrite(url: string): string | undefined {
    if (this.#learnedSections === 0) return undefined;
    const q = url.indexOf('?');
    if (q < 0) return undefined;
    const s = this.#sections.get(viewScopeOf(url) ?? '');
    if (s === undefined || s.learned.size === 0) return undefined;
    const all = pairsOf(url);
    // A number value is kept whatever was learned: it pages or selects (`page=2`), and a key
    // learned on worded values first (`page=all`) must not take it away.
    const pairs = all.filter((p) => !s.learned.has(keyOf(p)) || isNumberValue(valueOf(p)));
    if (pairs.length === all.length) return undefined;
    return pairs.length === 0 ? url.slice(0, q) : `${url.slice(0, q)}?${pairs.join('&')}`;
  }

  /**
   * A link found on the page at `from`, as the engine keys it: `rewrite(url)`, except a check — a
   * URL one in `checkEvery` picks by its hash (`isCheck`), the same in every process and after a
   * resume — which is kept whole and fetched (`refuses` lets it through): a lesson learned from a
   * few early pages keeps being tested by links found later. A view's own links are never kept
   * (a check's page would link more checks, without end, on a listing of 32 filters or more).
   */
  takeLink(url: string, from: string): string | undefined {
    const to = this.rewrite(url);
    if (to === undefined || !this.isCheck(url)) return to;
    return this.rewrite(from) === undefined ? undefined : to;
  }

  /** Whether `url` is one of the one in `checkEvery` URLs let through as checks (by an FNV-1a hash of it). */
  isCheck(url: string): boolean {
    return picksAsCheck(url, this.options.checkEvery);
  }

  /**
   * Whether a queued URL is refused at dispatch: it carries a view key learned for its section
   * since it was queued, and the URL without it is `known` (has a row). Never a seed (`depth` 0)
   * nor a check (`isCheck`: one in `checkEvery`, by the URL's hash).
   */
  refuses(url: string, depth: number, known?: (url: string) => boolean): boolean {
    if (depth === 0) return false;
    const to = this.rewrite(url);
    // The page without the keys must be on its way: a row of its own (a menu that links a
    // listing only with `?orderby=menu_order` would otherwise never be reached).
    if (to === undefined || (known !== undefined && !known(to))) return false;
    return !this.isCheck(url);
  }

  /**
   * A link taken from `original` to `rewritten` without learned view keys led to a page that is
   * not there (404, 410, a soft-404): the keys select more than a view in that section, so they
   * are banned. Returns the keys lifted, or undefined when none.
   */
  refuted(original: string, rewritten: string): ViewChange | undefined {
    const section = viewScopeOf(original);
    const s = section === undefined ? undefined : this.#sections.get(section);
    if (s === undefined || s.learned.size === 0) return undefined;
    const kept = new Set(pairsOf(rewritten).map(keyOf));
    const gone = pairsOf(original).map(keyOf).filter((k) => !kept.has(k) && s.learned.has(k));
    return gone.length > 0 ? this.#ban(section!, gone) : undefined;
  }

  /** Whether `url` carries one of `keys` (in `section`, when given: the rows a lifted lesson had refused). */
  static carries(url: string, keys: readonly string[], section?: string): boolean {
    if (section !== undefined && viewScopeOf(url) !== section) return false;
    return pairsOf(url).some((p) => keys.includes(keyOf(p)));
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
      for (const k of r[2]) {
        this.#unlearn(s, k);
        this.#addBan(s, k);
      }
      for (const k of r[1].slice(0, this.options.maxKeysPerSection)) if (!s.banned.has(k)) this.#learn(s, k);
    }
  }

  #section(section: string): Section {
    let s = this.#sections.get(section);
    if (s !== undefined) return s;
    s = { learned: new Set(), banned: new Set(), evidence: new Map(), closed: false };
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
    if (!isViewKey(k)) return undefined;
    let ev = s.evidence.get(k);
    if (ev !== undefined) return ev;
    if (s.evidence.size >= this.options.maxKeysPerSection) return undefined;
    ev = { quiet: new Set(), novel: new Set(), values: new Map(), repeated: false, numbered: false };
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
      // A key no lesson can hold (none is learned or evidenced under it) needs no ban either.
      if (!isViewKey(k)) continue;
      if (s.learned.has(k)) lifted.push(k);
      this.#unlearn(s, k);
      s.evidence.delete(k);
      this.#addBan(s, k);
    }
    return lifted.length > 0 ? { change: 'lifted', section, keys: lifted } : undefined;
  }

  /** Records a ban; one past the section's bound closes it to learning instead (a ban is never dropped). */
  #addBan(s: Section, k: string): void {
    if (s.banned.size < this.options.maxKeysPerSection || s.banned.has(k)) s.banned.add(k);
    else s.closed = true;
  }
}
