/**
 * Query parameters a site ignores, learned from its own pages (DUST: different URLs with
 * similar text). The canonicalizer drops the well-known tracking and session keys (`utm_*`,
 * `gclid`, `jsessionid`…), but every site has its own: `?ref=prev`, `?from=nav`, `?src=feed`.
 * A blog whose "next" links carry `?ref=prev` doubles its crawl — on a loopback blog of 300
 * posts, 294 of 671 fetches were such copies.
 *
 * The learner takes two independent signals before it believes a key is ignorable in a
 * section of a site — its *scope*: the origin and the path's first segment (`/post/` for
 * `/post/3`; `/` for a page at the root) — because a wrong merge loses pages: the page's `<link rel=canonical>` names the
 * same URL without that key (the site says so), *and* the page's text is a near-duplicate
 * (simhash within `maxDistance` bits) of the page fetched at that canonical URL (the content
 * says so). Rel=canonical alone is not enough: sites point `?page=2` at `?page=1`'s URL, and
 * the text then differs. After `minEvidence` distinct URLs agree, the key is learned for the
 * scope; any contradiction bans it there for the rest of the run, and unlearns it if it was
 * learned — a page whose canonical drops the key while its text differs from the canonical
 * page's (by `banDistance` bits or more), or a page that names itself canonical with the key
 * (the site says the key matters). Between the two distances a page is no evidence either way:
 * a copy that lost a few words to the key (a print view without its "print" link) flips up to
 * 5 bits (measured: 0–5 over 40 posts of ~350 words less 3), while pages of their own under a
 * large shared template differ by 4–12 (200 template words and 20 of their own, 30 pairs) and
 * unrelated pages by about 32 — one such copy banned `?print` in two of three sections of a
 * loopback blog when any distance over 3 banned.
 * A later page of a listing is never dropped, though: a paging key (`page`, `offset`…) with a
 * number above 1 stays in a link whatever was learned (`isLaterPagePair`) — listings whose pager
 * links `?page=1` back to page 1, naming the listing canonical, teach `page`, and `?page=2` taken
 * to the listing would lose every later page (a Q&A site's tag listings taught `page` this way).
 * Nor is a number the copies did not show: a learned key keeps, per scope, the number values
 * (`isNumberValue`, ViewKeys' rule) its evidence carried, and a link whose value for it is
 * another number keeps the pair (`keepsNumber`) — a paging key under a name no list holds
 * (`?pagina=1`, `?PageIndex=1`) is learned from first pages as `page` is, and before, every later
 * page of a forum's topics was dropped with it (12 topics of 4 pages: 7 of 36 later pages
 * fetched). Only a key whose evidence showed two or more numbers, none of them twice — ids of
 * copies, WordPress's `?replytocom=<comment>` — drops any number: a number that comes back on
 * copies of different pages (`1` on every topic) pages or counts, as it does for ViewKeys. A key
 * read back from a checkpoint without its numbers (an older build's) keeps every number.
 * The scope is a section, not the origin, because once a key is learned its copies are never
 * fetched, so nothing could contradict it later: `?ref=` learned on `/post/` says nothing of
 * `/product/?ref=123`, where it may name the product.
 *
 * A second kind of evidence, for pages with no rel=canonical: a *return-to* key, whose value is
 * a URL or an absolute path (`/wp-login.php?redirect_to=https%3A%2F%2F…`, `/login?next=/cart`)
 * or whose name says so (`returnto`, `ReturnUrl`, `came_from`: MediaWiki's login and
 * create-account links carry `&returnto=<the page's title>`). Such a link is on every page of
 * a site, a distinct URL per page, and the page it leads to is the same form whatever the value (which sits in a hidden field, so the bytes differ and only
 * the visible text tells): on a loopback WordPress-like blog, 210 of 625 fetches. Two pages
 * that differ only in that key's value, with text within `maxDistance` bits, are evidence
 * for the key (both URLs count, `minEvidence` in all); text further apart bans it. Only such
 * keys count, because a key that selects content (`?id=7`, `?q=shoes`) would show the same
 * text for a few missing items and be learned wrongly; a return-to key that does select content
 * (a viewer's `?file=/docs/a`) shows different text at once and is banned.
 *
 * A third, from the canonical again: a page whose canonical is its URL less leading path
 * segments (same origin, query and trailing slash) — Shopify lists every product under each
 * collection it is in, `/collections/shirts/products/tee` naming `/products/tee`; Magento's
 * `/women/tops/blouse.html` names `/blouse.html` — is evidence, with the text check against the
 * canonical page as above, for a *path rule* of its scope: `/k/anchor` (drop k segments before
 * `anchor`: Shopify's `/2/products`, counted over distinct URLs) or `/k/*` (drop k whatever
 * follows, counted over distinct anchors, so a shop's `/collections/shirts/blue` tag filter
 * is never taken to `/blue`). Path rules are keys starting with `/` in the same records; a page
 * there naming itself canonical bans the rules that would move it. A fetched copy also marks
 * its canonical URL as fetched for `duplicateOf` (not for evidence), so once a rule or key is
 * learned a queued copy of a page fetched only as another copy is refused too.
 *
 * Owns: per scope, the keys learned (with the numbers their copies carried), banned and the
 * evidence so far; the simhashes of pages that could be canonical targets, and of the first
 * page of each return-to family. Never: URL identity (the crawl's pinned `CanonPolicy` decides
 * that; the engine rewrites a link before its key is made, and refuses at dispatch a queued copy
 * whose canonical page was fetched) or clocks. A checkpoint keeps the learned and banned keys
 * (`export` / `import`) and the learned keys' numbers (`exportNumbers` / `importNumbers`, a list
 * of its own that older builds do not read), not the evidence, the remembered pages or the
 * families.
 *
 * Memory is bounded: at most `maxPages` remembered pages, as many canonical URLs fetched through
 * a copy and as many return-to families (oldest dropped), `maxScopes` scopes with evidence and
 * `maxKeysPerScope` keys per scope, each holding at most `minEvidence` URLs.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { evictOldest } from '../lru/index.js';
import { isLaterPagePair } from './paging.js';
import { isNumberValue, pairsOf, valueOf } from './query.js';

/** Options of a `ParamLearner`. */
export interface ParamLearnerOptions {
  /** Distinct URLs whose canonical and text agree before a key is learned. Default 3. */
  readonly minEvidence: number;
  /** Most simhash bits a copy may differ by from its canonical page. Default 3 (DESIGN §6). */
  readonly maxDistance: number;
  /** Fewest simhash bits by which a page contradicts a key (bans it); above `maxDistance`. Default 6. */
  readonly banDistance: number;
  /** Pages remembered as canonical targets (URL → simhash; oldest dropped). Default 16,384. */
  readonly maxPages: number;
  /** Scopes (origin and first path segment) holding evidence. Default 65,536. */
  readonly maxScopes: number;
  /** Keys tracked per scope. Default 32. */
  readonly maxKeysPerScope: number;
}

const resolveOptions = defineOptions<ParamLearnerOptions>('ParamLearnerOptions', {
  minEvidence: numberField({ min: 1, max: 64, integer: true, default: 3 }),
  maxDistance: numberField({ min: 0, max: 64, integer: true, default: 3 }),
  banDistance: numberField({ min: 1, max: 65, integer: true, default: 6 }),
  maxPages: numberField({ min: 1, max: 1 << 24, integer: true, default: 16_384 }),
  maxScopes: numberField({ min: 1, max: 1 << 24, integer: true, default: 65_536 }),
  maxKeysPerScope: numberField({ min: 1, max: 1 << 10, integer: true, default: 32 }),
});

/** What one page taught (`ParamLearner.observe`). */
export interface ParamLesson {
  /** The page's scope: `scheme://host[:port]` and the path's first segment (`/post/`, or `/`). */
  readonly scope: string;
  /** Keys learned ignorable by this page. */
  readonly learned: readonly string[];
  /** Keys learned before and unlearned by this page. */
  readonly unlearned: readonly string[];
}

/** A scope's learned and banned keys as a checkpoint keeps them (`ParamLearner.export`). */
export type ParamRecord = readonly [scope: string, learned: readonly string[], banned: readonly string[]];

/**
 * A learned query key's numbers as a checkpoint keeps them (`ParamLearner.exportNumbers`): the
 * number values its copies carried — only these are dropped from a link — or null, any number
 * (the copies showed distinct ids).
 */
/** The most numbers a learned key keeps as its copies' (a checkpoint refuses more). */
const MAX_KEY_NUMBERS = 64;

export type ParamNumbersRecord = readonly [scope: string, key: string, numbers: readonly string[] | null];

/** Why `r` is not a `ParamNumbersRecord` (undefined: it is one). */
export function paramNumbersRecordProblem(r: unknown): string | undefined {
  if (!Array.isArray(r) || r.length !== 3) return 'not a [scope, key, numbers or null] record';
  const scope = sectionProblem(r[0]);
  if (scope !== undefined) return `scope ${scope}`;
  if (typeof r[1] !== 'string' || r[1].length === 0 || r[1].length > 256 || r[1][0] === '/') return `key ${JSON.stringify(r[1])} is not a query key (1–256 characters)`;
  const n = r[2] as unknown;
  if (n !== null && !(Array.isArray(n) && n.length <= MAX_KEY_NUMBERS && n.every((v) => typeof v === 'string' && v.length <= 256 && isNumberValue(v)))) return 'its numbers are not null or a list of at most 64 number values';
  return undefined;
}

/** A path rule as a key: `/k/anchor` (drop k leading segments before `anchor`) or `/k/*` (before any). */
const PATH_RULE = /^\/([1-9]\d?)\/([^/?#\s]+)$/;
const isKeyList = (v: unknown): v is string[] =>
  Array.isArray(v) && v.length <= 1024 && v.every((k) => typeof k === 'string' && k.length > 0 && k.length <= 256 && (k[0] !== '/' || PATH_RULE.test(k)));

/** Why `section` is not a section as the learners' records name one (undefined: it is one): `scheme://host[:port]/` and at most one path segment. */
export function sectionProblem(section: unknown): string | undefined {
  if (typeof section !== 'string' || !/^https?:\/\/[^/?#\s]+\/(?:[^/?#\s]+\/)?$/.test(section)) return `${JSON.stringify(section)} is not an http(s) origin with a path of at most one segment`;
  return undefined;
}

/** Why `r` is not a `ParamRecord` (undefined: it is one). */
export function paramRecordProblem(r: unknown): string | undefined {
  if (!Array.isArray(r) || r.length !== 3) return 'not a [scope, learned keys, banned keys] record';
  const scope = sectionProblem(r[0]);
  if (scope !== undefined) return `scope ${scope}`;
  if (!isKeyList(r[1]) || !isKeyList(r[2])) return 'its keys are not lists of non-empty strings (at most 256 characters; one starting with / a path rule /k/segment)';
  return undefined;
}

interface ScopeParams {
  readonly learned: Set<string>;
  /**
   * Per learned query key, the number values its copies carried (only these are dropped: `keepsNumber`),
   * or null: any number. A key without an entry (read back without its numbers) keeps every number.
   */
  readonly numbers: Map<string, ReadonlySet<string> | null>;
  readonly banned: Set<string>;
  /** Learned keys that are path rules (`/k/anchor`): `rewrite` looks at the path only when some are. */
  pathRules: number;
  /** Per key, the distinct URLs that agreed so far (at most minEvidence). */
  readonly evidence: Map<string, Set<string>>;
}

/** A canonical http(s) URL split at its path and query: `base` is everything before `?`. */
interface SplitUrl {
  readonly scope: string;
  readonly base: string;
  readonly pairs: readonly string[];
}

/** `url`'s scope (its query at `q`, or -1 for none), or undefined for a URL without a path. */
function scopeOf(url: string, q: number): string | undefined {
  const scheme = url.indexOf('://');
  if (scheme <= 0) return undefined;
  const slash = url.indexOf('/', scheme + 3);
  if (slash < 0) return undefined; // canonical URLs have a path
  const end = q < 0 ? url.length : q;
  // The first segment ends at the next '/' before the query: /post/3 → /post/; /about → /.
  const next = url.indexOf('/', slash + 1);
  return next >= 0 && next < end ? url.slice(0, next + 1) : url.slice(0, slash + 1);
}

function split(url: string): SplitUrl | undefined {
  const q = url.indexOf('?');
  const scope = scopeOf(url, q);
  if (scope === undefined) return undefined;
  if (q < 0) return { scope, base: url, pairs: [] };
  const query = url.slice(q + 1);
  return { scope, base: url.slice(0, q), pairs: query === '' ? [] : query.split('&') };
}

/**
 * `url`'s section, the scope of a lesson on its query keys: `scheme://host[:port]` and the path's
 * first segment (`/post/` for `/post/3`; `/` for a page at the root); undefined for a URL without
 * a path. Shared by `ParamLearner` and `ViewKeys` (a key's meaning is per section).
 */
export function sectionOf(url: string): string | undefined {
  return scopeOf(url, url.indexOf('?'));
}

/** A query pair's key (`a=1` → `a`; `flag` → `flag`). */
export function keyOf(pair: string): string {
  const eq = pair.indexOf('=');
  return eq < 0 ? pair : pair.slice(0, eq);
}

function join(base: string, pairs: readonly string[]): string {
  return pairs.length === 0 ? base : `${base}?${pairs.join('&')}`;
}

/** Keys of one URL looked at as return-to keys (a hostile URL may carry thousands). */
const MAX_RETURN_KEYS = 8;

/**
 * Key names that say "where to go after this page" (`returnto`, `return_url`, `redirect_to`,
 * `ReturnUrl`, `came_from`, `goto`), whatever their value: MediaWiki's
 * `Special:UserLogin&returnto=Main_Page` names a page title, not a URL. (`next` alone is not
 * here: it is also a pagination cursor; with a URL or a path as its value it counts.)
 */
const RETURN_KEY = /^(?:return|redirect|came_?from|go_?to|back_?to|continue_?to)(?:[-_]?(?:to|url|uri|path|page))?$/i;

/**
 * Whether a query pair is a return-to pair: its key is named so (`RETURN_KEY`) or its value is
 * a URL or an absolute path (`redirect_to=https%3A%2F%2F…`, `next=/a`).
 */
function returnTo(pair: string): boolean {
  const eq = pair.indexOf('=');
  if (eq <= 0) return false;
  if (RETURN_KEY.test(pair.slice(0, eq)) && eq + 1 < pair.length) return true;
  let v = pair.slice(eq + 1);
  try {
    v = decodeURIComponent(v.replace(/\+/g, ' '));
  } catch {
    return false;
  }
  return /^(?:https?:\/\/[^/\s]|\/)/i.test(v);
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

/** Removes `k` from a scope's learned keys (counting path rules). */
function unlearn(o: ScopeParams, k: string): void {
  o.numbers.delete(k);
  if (o.learned.delete(k) && k[0] === '/') o.pathRules--;
}

/**
 * The numbers a key learned from the copies at `urls` may drop: null (any) when they carried two
 * or more number values and none twice (ids of copies: `?replytocom=<comment>`), else the set of
 * number values they carried (`1` on every first page: the key pages or counts; none: a worded
 * key, which keeps every number).
 */
function copyNumbers(k: string, urls: Iterable<string>): ReadonlySet<string> | null {
  const seen = new Set<string>();
  let again = false;
  for (const url of urls) {
    const pair = pairsOf(url).find((p) => keyOf(p) === k);
    const v = pair === undefined ? '' : valueOf(pair);
    if (!isNumberValue(v)) continue;
    if (seen.has(v)) again = true;
    seen.add(v);
  }
  return seen.size >= 2 && !again ? null : seen;
}

/** The numbers `o`'s learned key `k` drops, widened by the value `url` (a copy) carries for it, up to 64. */
function widenNumbers(o: ScopeParams, k: string, url: string): void {
  const numbers = o.numbers.get(k);
  if (numbers === null || numbers === undefined || numbers.size >= MAX_KEY_NUMBERS) return;
  const pair = pairsOf(url).find((p) => keyOf(p) === k);
  const v = pair === undefined ? '' : valueOf(pair);
  if (isNumberValue(v) && !numbers.has(v)) o.numbers.set(k, new Set([...numbers, v]));
}

/**
 * Whether query pair `pair` of a learned key stays in a link: its value is a number its copies
 * did not carry (`ScopeParams.numbers`; a key without them keeps every number).
 */
function keepsNumber(o: ScopeParams, pair: string): boolean {
  const v = valueOf(pair);
  if (!isNumberValue(v)) return false;
  const numbers = o.numbers.get(keyOf(pair));
  return numbers !== null && numbers?.has(v) !== true;
}

/** The non-empty segments of a canonical URL's path (`/a/b/` → a, b), and whether it ends with a slash. */
function segmentsOf(url: string): { origin: string; segs: string[]; slash: boolean; query: string } | undefined {
  const scheme = url.indexOf('://');
  if (scheme <= 0) return undefined;
  const at = url.indexOf('/', scheme + 3);
  if (at < 0) return undefined;
  const q = url.indexOf('?', at);
  const path = url.slice(at, q < 0 ? url.length : q);
  return { origin: url.slice(0, at), segs: path.split('/').filter((x) => x !== ''), slash: path.length > 1 && path.endsWith('/'), query: q < 0 ? '' : url.slice(q) };
}

/**
 * The path rule `canonical` makes of `url`: the same origin, query and trailing slash, and the
 * path less its first k segments (k ≥ 1, one segment at least left) — `/collections/shirts/
 * products/tee` naming `/products/tee`, Shopify's pages under a collection; undefined otherwise.
 */
function pathRuleOf(url: string, canonical: string): { k: number; anchor: string } | undefined {
  const u = segmentsOf(url);
  const c = segmentsOf(canonical);
  if (u === undefined || c === undefined || u.origin !== c.origin || u.query !== c.query || u.slash !== c.slash) return undefined;
  const k = u.segs.length - c.segs.length;
  if (k < 1 || k > 99 || c.segs.length === 0) return undefined;
  for (let i = 0; i < c.segs.length; i++) if (u.segs[k + i] !== c.segs[i]) return undefined;
  return { k, anchor: c.segs[0]! };
}

/** `url` moved by path rule `key` (`/k/anchor` or `/k/*`), or undefined when the rule does not apply to it. */
function applyPathRule(key: string, url: string): string | undefined {
  const m = PATH_RULE.exec(key);
  const u = segmentsOf(url);
  if (m === null || u === undefined) return undefined;
  const k = Number(m[1]);
  if (u.segs.length <= k || (m[2] !== '*' && u.segs[k] !== m[2])) return undefined;
  return `${u.origin}/${u.segs.slice(k).join('/')}${u.slash ? '/' : ''}${u.query}`;
}

/**
 * A scope's learned keys as text (the summary's and `meguri stats`' words): query keys as
 * `…/post/… ignores ?ref, ?from`; a path rule as the scope with a `*` per dropped segment after
 * the first and its anchor, then `is` and the origin with the anchor (Shopify's reads
 * `http://shop/collections/` `*` `/products/… is http://shop/products/…`).
 */
export function describeLessons(scope: string, keys: readonly string[]): string[] {
  const query = keys.filter((k) => k[0] !== '/');
  const out = query.length === 0 ? [] : [`${scope}… ignores ${query.map((k) => `?${k}`).join(', ')}`];
  const origin = scope.slice(0, scope.indexOf('/', scope.indexOf('://') + 3));
  for (const k of keys) {
    const m = PATH_RULE.exec(k);
    if (m === null) continue;
    const stars = '*/'.repeat(Number(m[1]) - 1);
    const to = m[2] === '*' ? '' : `${m[2]}/`;
    out.push(`${scope}${stars}${to}… is ${origin}/${to}…`);
  }
  return out;
}

/** Learns, per scope, query keys that do not change a page (see the module comment). */
export class ParamLearner {
  readonly options: Readonly<ParamLearnerOptions>;
  readonly #scopes = new Map<string, ScopeParams>();
  /** URL → simhash of pages that may be canonical targets (insertion order: oldest first). */
  readonly #pages = new Map<string, bigint>();
  /**
   * Canonical URLs whose content was fetched under another URL naming them (a copy fetched
   * before its lesson): `duplicateOf` counts them as fetched, evidence never does (oldest first).
   */
  readonly #covered = new Set<string>();
  /** Some path rule was learned in this run (until then `rewrite` skips links without a query). */
  #pathRuleLearned = false;
  /**
   * A return-to family (a URL less one return-to pair, and that pair's key) → the first page
   * fetched in it: its URL and simhash (insertion order: oldest first).
   */
  readonly #families = new Map<string, { readonly url: string; readonly simhash: bigint }>();

  constructor(options?: Partial<ParamLearnerOptions> | null) {
    this.options = resolveOptions(options);
    const { maxDistance, banDistance } = this.options;
    if (banDistance <= maxDistance) throw new InvalidArgumentError(`ParamLearnerOptions.banDistance must be above maxDistance (${maxDistance}), got ${banDistance}`);
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
      return canonical === url ? this.#ban(u.scope, [...u.pairs.map(keyOf), ...this.#pathRulesFor(u.scope, url)]) : this.#returnKeys(u, url, simhash);
    }
    const c = split(canonical);
    if (c === undefined) return undefined;
    this.#covered.delete(canonical);
    this.#covered.add(canonical);
    if (this.#covered.size > this.options.maxPages) evictOldest(this.#covered);
    if (c.base !== u.base) return this.#pathEvidence(u.scope, url, canonical, simhash);
    if (u.pairs.length === 0) return undefined;
    const kept = new Set(c.pairs.map(keyOf));
    const dropped = [...new Set(u.pairs.map(keyOf).filter((k) => !kept.has(k)))];
    // Only a canonical that is exactly this URL less some keys (values unchanged) is evidence.
    if (dropped.length === 0 || join(u.base, u.pairs.filter((p) => kept.has(keyOf(p)))) !== canonical) return undefined;
    const target = this.#pages.get(canonical);
    if (target === undefined) return undefined;
    const d = popcount64(target ^ simhash);
    if (d >= this.options.banDistance) return this.#ban(u.scope, dropped);
    return d <= this.options.maxDistance ? this.#agree(u.scope, url, dropped) : undefined;
  }

  /** `url` (canonical form) without the keys learned for its scope, or undefined when it has none of them. */
  rewrite(url: string): string | undefined {
    // Every link of every page comes here: its query is split only in a scope that learned a
    // key, and a link without a query is looked at only once some path rule was learned.
    if (this.#scopes.size === 0) return undefined;
    const q = url.indexOf('?');
    if (q < 0 && !this.#pathRuleLearned) return undefined;
    const scope = scopeOf(url, q);
    const o = scope === undefined ? undefined : this.#scopes.get(scope);
    if (o === undefined || o.learned.size === 0) return undefined;
    let out: string | undefined;
    if (q >= 0) {
      const all = url.slice(q + 1).split('&');
      // A later page of a listing keeps its number whatever was learned (`isLaterPagePair`), and
      // so does any number the key's copies did not carry (`keepsNumber`).
      const pairs = all.filter((p) => !o.learned.has(keyOf(p)) || isLaterPagePair(p) || keepsNumber(o, p));
      if (pairs.length !== all.length) out = join(url.slice(0, q), pairs);
    }
    if (o.pathRules > 0) {
      for (const key of o.learned) {
        const moved = key[0] === '/' ? applyPathRule(key, out ?? url) : undefined;
        if (moved !== undefined) return moved;
      }
    }
    return out;
  }

  /**
   * A link taken from `original` to `rewritten` without learned keys led to a page that is not
   * there (404, 410): the keys matter in that section after all, so they are banned. Returns
   * the keys unlearned, or undefined when none.
   */
  refuted(original: string, rewritten: string): ParamLesson | undefined {
    const u = split(original);
    const r = split(rewritten);
    if (u === undefined || r === undefined) return undefined;
    const o0 = this.#scopes.get(u.scope);
    if (o0 !== undefined && o0.pathRules > 0) {
      // A path rule moved the link (the rewritten URL is in another section, or the path changed).
      const rules = [...o0.learned].filter((k) => k[0] === '/' && applyPathRule(k, original) !== undefined);
      if (rules.length > 0 && u.base !== r.base) return this.#ban(u.scope, rules);
    }
    if (u.scope !== r.scope) return undefined;
    const kept = new Set(r.pairs.map(keyOf));
    const o = this.#scopes.get(u.scope);
    const dropped = [...new Set(u.pairs.map(keyOf))].filter((k) => !kept.has(k) && o?.learned.has(k) === true);
    return this.#ban(u.scope, dropped);
  }

  /**
   * The page `url` is a copy of, when its learned keys dropped (or path rule) name a page fetched
   * in this run, itself or through another copy naming it canonical (so refusing `url` loses
   * nothing); undefined otherwise.
   */
  duplicateOf(url: string): string | undefined {
    const r = this.rewrite(url);
    return r !== undefined && (this.#pages.has(r) || this.#covered.has(r)) ? r : undefined;
  }

  /** The keys learned so far, per scope (scopes in the order they first held evidence). */
  learned(): { scope: string; keys: string[] }[] {
    const out: { scope: string; keys: string[] }[] = [];
    for (const [scope, o] of this.#scopes) if (o.learned.size > 0) out.push({ scope, keys: [...o.learned].sort() });
    return out;
  }

  /**
   * What a checkpoint keeps: per scope with a learned or banned key, both lists (the evidence
   * so far and the remembered pages are not kept: a resume gathers them again).
   */
  export(): ParamRecord[] {
    const out: ParamRecord[] = [];
    for (const [scope, o] of this.#scopes) if (o.learned.size > 0 || o.banned.size > 0) out.push([scope, [...o.learned], [...o.banned]]);
    return out;
  }

  /**
   * What a checkpoint keeps beside `export`: each learned query key's numbers (`ParamNumbersRecord`;
   * path rules have none).
   */
  exportNumbers(): ParamNumbersRecord[] {
    const out: ParamNumbersRecord[] = [];
    for (const [scope, o] of this.#scopes) for (const [k, n] of o.numbers) out.push([scope, k, n === null ? null : [...n]]);
    return out;
  }

  /**
   * Takes a checkpoint's numbers back (`exportNumbers`), after `import`: a record of a key not
   * learned here is skipped. A learned key given none keeps every number value in links.
   * @throws InvalidArgumentError for a record that is not a `ParamNumbersRecord`.
   */
  importNumbers(records: readonly ParamNumbersRecord[]): void {
    for (const r of records) {
      const problem = paramNumbersRecordProblem(r);
      if (problem !== undefined) throw new InvalidArgumentError(`ParamLearner.importNumbers: ${problem}`);
      const o = this.#scopes.get(r[0]);
      if (o === undefined || !o.learned.has(r[1])) continue;
      o.numbers.set(r[1], r[2] === null ? null : new Set(r[2]));
    }
  }

  /**
   * Takes a checkpoint's keys back (`export`); a key both learned and banned stays banned.
   * Their numbers come back with `importNumbers` (until then, each keeps every number value).
   * @throws InvalidArgumentError for a record that is not `[scope, learned[], banned[]]`.
   */
  import(records: readonly ParamRecord[]): void {
    for (const r of records) {
      const problem = paramRecordProblem(r);
      if (problem !== undefined) throw new InvalidArgumentError(`ParamLearner.import: ${problem}`);
      const o = this.#scope(r[0]);
      if (o === undefined) return;
      for (const k of r[2].slice(0, this.options.maxKeysPerScope)) if (o.banned.size < this.options.maxKeysPerScope) o.banned.add(k);
      for (const k of r[1].slice(0, this.options.maxKeysPerScope)) if (!o.banned.has(k)) this.#learn(o, k);
    }
  }

  /**
   * The path evidence of a page whose canonical is its URL less leading path segments (see the
   * module comment): the rule `/k/anchor` counts distinct URLs, the rule `/k/*` distinct anchors
   * (so Shopify's `/collections/c/products/p` learns `/2/products`, never "drop two segments
   * whatever follows", which would take `/collections/shirts/blue`, a tag filter, to `/blue`).
   */
  #pathEvidence(scope: string, url: string, canonical: string, simhash: bigint): ParamLesson | undefined {
    const rule = pathRuleOf(url, canonical);
    if (rule === undefined) return undefined;
    const target = this.#pages.get(canonical);
    if (target === undefined) return undefined;
    const specific = `/${rule.k}/${rule.anchor}`;
    const wild = `/${rule.k}/*`;
    const d = popcount64(target ^ simhash);
    if (d >= this.options.banDistance) return this.#ban(scope, [specific, wild]);
    if (d > this.options.maxDistance) return undefined;
    const a = this.#agree(scope, url, [specific]);
    const b = this.#agree(scope, rule.anchor, [wild]);
    if (a === undefined && b === undefined) return undefined;
    return { scope, learned: [...(a?.learned ?? []), ...(b?.learned ?? [])], unlearned: [] };
  }

  /** The path rules (learned or gathering evidence) in `scope` that would move `url`: a page naming itself canonical there bans them. */
  #pathRulesFor(scope: string, url: string): string[] {
    const o = this.#scopes.get(scope);
    if (o === undefined) return [];
    const keys = [...o.learned, ...o.evidence.keys()];
    return keys.filter((k) => k[0] === '/' && applyPathRule(k, url) !== undefined);
  }

  /** The return-to evidence of a page without rel=canonical (see the module comment). */
  #returnKeys(u: SplitUrl, url: string, simhash: bigint): ParamLesson | undefined {
    const learned: string[] = [];
    const unlearned: string[] = [];
    const n = Math.min(u.pairs.length, MAX_RETURN_KEYS);
    for (let i = 0; i < n; i++) {
      const pair = u.pairs[i]!;
      if (!returnTo(pair)) continue;
      const key = keyOf(pair);
      const family = `${key} ${join(u.base, u.pairs.filter((_, j) => j !== i))}`;
      const first = this.#families.get(family);
      if (first === undefined) {
        this.#families.set(family, { url, simhash });
        if (this.#families.size > this.options.maxPages) evictOldest(this.#families);
        continue;
      }
      if (first.url === url) continue;
      const d = popcount64(first.simhash ^ simhash);
      const lessons =
        d >= this.options.banDistance ? [this.#ban(u.scope, [key])] : d <= this.options.maxDistance ? [this.#agree(u.scope, first.url, [key]), this.#agree(u.scope, url, [key])] : [];
      for (const l of lessons) {
        if (l === undefined) continue;
        learned.push(...l.learned);
        unlearned.push(...l.unlearned);
      }
    }
    return learned.length === 0 && unlearned.length === 0 ? undefined : { scope: u.scope, learned, unlearned };
  }

  /** Adds `k` to a scope's learned keys (counting path rules), a query key with the numbers of its copies at `urls` (none given: it keeps every number). */
  #learn(o: ScopeParams, k: string, urls?: Iterable<string>): void {
    if (o.learned.has(k)) return;
    o.learned.add(k);
    if (k[0] !== '/') {
      if (urls !== undefined) o.numbers.set(k, copyNumbers(k, urls));
      return;
    }
    o.pathRules++;
    this.#pathRuleLearned = true;
  }

  #remember(url: string, simhash: bigint): void {
    this.#pages.delete(url);
    this.#pages.set(url, simhash);
    if (this.#pages.size > this.options.maxPages) evictOldest(this.#pages);
  }

  #scope(scope: string): ScopeParams | undefined {
    let o = this.#scopes.get(scope);
    if (o === undefined && this.#scopes.size < this.options.maxScopes) {
      o = { learned: new Set(), numbers: new Map(), banned: new Set(), pathRules: 0, evidence: new Map() };
      this.#scopes.set(scope, o);
    }
    return o;
  }

  #agree(scope: string, url: string, keys: readonly string[]): ParamLesson | undefined {
    const o = this.#scope(scope);
    if (o === undefined) return undefined;
    const learned: string[] = [];
    for (const k of keys) {
      if (o.banned.has(k)) continue;
      if (o.learned.has(k)) {
        // A copy under a number the key still keeps: the number is a copy's too, and drops from
        // now on (up to 64). Frozen at its evidence's numbers, a colour filter whose first copies
        // all said ?color=7 fetched 105 copies main drops (a review: 52 requests → 157).
        widenNumbers(o, k, url);
        continue;
      }
      let urls = o.evidence.get(k);
      if (urls === undefined) {
        if (o.evidence.size >= this.options.maxKeysPerScope) continue;
        urls = new Set();
        o.evidence.set(k, urls);
      }
      urls.add(url);
      if (urls.size < this.options.minEvidence) continue;
      o.evidence.delete(k);
      this.#learn(o, k, urls);
      learned.push(k);
    }
    return learned.length === 0 ? undefined : { scope, learned, unlearned: [] };
  }

  #ban(scope: string, keys: readonly string[]): ParamLesson | undefined {
    if (keys.length === 0) return undefined;
    const o = this.#scope(scope);
    if (o === undefined) return undefined;
    const unlearned: string[] = [];
    for (const k of new Set(keys)) {
      o.evidence.delete(k);
      if (o.learned.has(k)) {
        unlearn(o, k);
        unlearned.push(k);
      }
      // A key not remembered as banned (the set is full) can only gather evidence again.
      if (o.banned.size < this.options.maxKeysPerScope) o.banned.add(k);
    }
    return unlearned.length === 0 ? undefined : { scope, learned: [], unlearned };
  }
}
