/**
 * KnownCopies: query pairs whose pages the site itself names copies of pages the crawl knows.
 *
 * A forum links, beside each topic, the next and the previous topic of its forum:
 * `viewtopic.php?t=5&view=next`. phpBB answers it with topic 6 itself, rendered under the URL asked
 * and naming `viewtopic.php?t=6` its rel=canonical; other software redirects there. Either way the
 * topic is one the crawl reaches from its forum's listing, so each such link is a request for a
 * page the crawl has: on a phpBB-shaped loopback forum of 150 topics, 300 of 954 requests (about 34
 * now). No other lesson sees it: the canonical is not the URL less a key (`ParamLearner`,
 * `ViewKeys`), and the text is another topic's.
 *
 * The signature, per path (origin and path, the query set aside: the *scope*, as `LoginWalls`') and
 * query pair (`view=next`; only a worded value — not empty, not a number — since an id's value
 * differs from page to page and would never gather evidence anyway): a page fetched under the pair
 * is *quiet* when the site names another URL as the page — a rel=canonical in the crawl's scope
 * that is neither the URL itself nor the URL less some of its pairs (those are `ParamLearner`'s and
 * `ViewKeys`'), or a redirect's target — and the crawl holds that URL live (`Frontier.liveCount`:
 * fetched or to be fetched; not gone, parked, disallowed or refused), or the redirect leaves the
 * crawl's scope; it brings *news* when the page names itself canonical or names a URL the crawl
 * does not hold (the engine tells which); a page naming nothing (a notice "no newer topics", an
 * error, a cut body, a canonical outside the scope — a site under another name, which says nothing
 * of this crawl's pages) is no evidence. A pair is learned for its scope once `minEvidence` (10)
 * distinct URLs were quiet, naming distinct URLs for ¾ of them at least (a site-wide canonical
 * names one, a category canonical a few: the pair would then hide pages of their own; ten, so that
 * five items of five categories in a row do not pass), and no news stands: news that named a URL
 * the crawl holds by now at a depth no greater than the news page's (a topic past the listing page
 * fetched so far, reached from the listing) was only early and is dropped then (`observe`'s
 * `depthOf`, the engine's `#heldDepth`); held deeper, it was reached through the news page itself
 * (its own title link) and stands; a page naming itself stands for the run. Then the engine refuses
 * the scope's queued URLs carrying it at dispatch (`refuses`; never a seed, and one URL in
 * `checkEvery`, picked by an FNV-1a hash of the URL — the same in every process and after a resume
 * — is fetched as a check). A page of the pair that brings news (a check, a seed) bans the pair for
 * the run ('lifted': the engine queues the refused URLs again), so a wrong lesson costs a delay,
 * not a page.
 *
 * A check can ban a right lesson early: a learned pair's news is not waited on as evidence is (a
 * check naming a topic past the listing pages fetched so far bans the pair; its refused URLs are
 * fetched again), a cost in requests, never in pages.
 *
 * Owns: per scope, the evidence (per pair, up to `MAX_SAMPLES` distinct quiet and news URLs with
 * the URL each named; `MAX_EVIDENCE_PAIRS` pairs; pairs whose news found no slot, blocked for the
 * run), the pairs learned and banned. Never: fetch, or look a URL up itself (the engine answers
 * whether the named URL is held, and gives `depthOf`), or clocks. A checkpoint keeps the pairs
 * learned and banned (`export` / `import`), not the evidence. Memory is bounded: at most
 * `maxScopes` scopes (those without a lesson evicted first, oldest first), `MAX_EVIDENCE_PAIRS`
 * pairs with evidence and `MAX_PAIRS` lessons per scope.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { withoutQuery } from '../url/host.js';
import { isNumberValue, pairsOf, picksAsCheck } from './query.js';

/** Options of a `KnownCopies`. */
export interface KnownCopiesOptions {
  /** Distinct quiet URLs of a pair before it is learned (naming distinct URLs for ¾ of them at least). Default 10. */
  readonly minEvidence: number;
  /** Scopes (paths) remembered with evidence or lessons. Default 4,096. */
  readonly maxScopes: number;
  /** One URL in this many of a learned pair is fetched as a check. Default 32. */
  readonly checkEvery: number;
}

const resolveCopiesOptions = defineOptions<KnownCopiesOptions>('KnownCopiesOptions', {
  minEvidence: numberField({ min: 2, max: 64, integer: true, default: 10 }),
  maxScopes: numberField({ min: 1, max: 1 << 20, integer: true, default: 4096 }),
  checkEvery: numberField({ min: 2, max: 1 << 20, integer: true, default: 32 }),
});

/** Distinct URLs kept per pair and verdict (`minEvidence` is at most this). */
const MAX_SAMPLES = 64;
/** Pairs with evidence per scope. */
const MAX_EVIDENCE_PAIRS = 16;
/** Lessons per scope: pairs learned, and pairs banned. */
const MAX_PAIRS = 64;

/** A lesson as a checkpoint keeps it: the path (`scheme://authority/path`), its pairs learned and its pairs banned. */
export type CopyRecord = readonly [scope: string, learned: readonly string[], banned: readonly string[]];

/** What `observe` changed: pairs learned for a scope, or learned pairs banned by news (their refused URLs may be queued again). */
export interface CopyChange {
  readonly change: 'learned' | 'lifted';
  readonly scope: string;
  readonly pairs: readonly string[];
}

const SCOPE = /^https?:\/\/[^/?#\s]+\/[^?#\s]*$/;

/** Whether `p` can be a lesson's pair: `key=value`, a worded value, no `&`, `#`, `?` or space. */
function isWordedPair(p: string): boolean {
  const eq = p.indexOf('=');
  if (eq <= 0 || eq === p.length - 1 || p.length > 512 || /[&?#\s]/.test(p)) return false;
  return !isNumberValue(p.slice(eq + 1));
}

function isPairList(v: unknown): v is readonly string[] {
  return Array.isArray(v) && v.length <= MAX_PAIRS && v.every((p) => typeof p === 'string' && isWordedPair(p));
}

/** Why `r` is not a `CopyRecord`, or undefined when it is one. */
export function copyRecordProblem(r: unknown): string | undefined {
  if (!Array.isArray(r) || r.length !== 3) return 'not a [path, learned pairs, banned pairs] record';
  if (typeof r[0] !== 'string' || !SCOPE.test(r[0])) return `path ${JSON.stringify(r[0])} is not an http(s) origin and path without a query`;
  if (!isPairList(r[1]) || !isPairList(r[2])) return `its pairs are not lists of at most ${MAX_PAIRS} key=value pairs with a worded value`;
  return undefined;
}

/** The distinct worded pairs of a canonical URL's query (`view=next`; not `t=5`, not a bare `flag`). */
function wordedPairsOf(url: string): string[] {
  return [...new Set(pairsOf(url).filter(isWordedPair))];
}

/** A page that brought news: the URL it named (undefined: itself, news for the run) and its own link depth. */
interface News {
  readonly named: string | undefined;
  readonly depth: number;
}

interface PairEvidence {
  /** Quiet URL → the URL it named. */
  readonly quiet: Map<string, string>;
  /** URL that brought news → what it named. */
  readonly news: Map<string, News>;
  /** More news came than `news` keeps: the pair is not learned this run. */
  overflow: boolean;
}

interface Scope {
  readonly evidence: Map<string, PairEvidence>;
  readonly learned: Set<string>;
  readonly banned: Set<string>;
  /** Pairs whose news found no evidence slot: never learned this run (their news is not kept). */
  readonly blocked: Set<string>;
  /** More pairs were blocked than `blocked` holds: nothing is learned here this run. */
  crowded: boolean;
}

/** Learns, per path, query pairs whose pages name a URL the crawl knows as the page (see the module comment). */
export class KnownCopies {
  /** The resolved options. */
  readonly options: Readonly<KnownCopiesOptions>;
  readonly #scopes = new Map<string, Scope>();
  /** Scopes with a learned pair: `refuses` and `covers` read a URL's query only when some are. */
  #learnedScopes = 0;

  /** Learns nothing until observed. Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<KnownCopiesOptions> | null) {
    this.options = resolveCopiesOptions(options);
  }

  /** Whether a page at `url` could be evidence: its query carries a worded pair (the engine asks before looking anything up). */
  static hasWordedPair(url: string): boolean {
    return wordedPairsOf(url).length > 0;
  }

  /**
   * A page fetched at `url` (canonical form, at link depth `depth`) named `named` (canonical
   * form) as itself, by its rel=canonical or a redirect: `known` when the crawl holds that URL
   * live (or the redirect leaves the scope) — quiet — and not when it does not or `named` is
   * `url` — news. `depthOf` gives, when a pair is about to be learned, the depth at which the crawl
   * holds a URL an earlier page named (undefined: not held): its news was only early when that is
   * no deeper than the page. Returns what it changed, or undefined.
   */
  observe(url: string, named: string, known: boolean, depth: number, depthOf: (url: string) => number | undefined): CopyChange | undefined {
    if (typeof url !== 'string' || typeof named !== 'string') throw new InvalidArgumentError(`KnownCopies.observe: expected URL strings, received ${typeof url} and ${typeof named}`);
    if (typeof known !== 'boolean' || typeof depthOf !== 'function' || !Number.isInteger(depth) || depth < 0) {
      throw new InvalidArgumentError('KnownCopies.observe: expected known as a boolean, depth as a non-negative integer and depthOf as a function');
    }
    const pairs = wordedPairsOf(url);
    if (pairs.length === 0) return undefined;
    const scopeKey = withoutQuery(url);
    if (!SCOPE.test(scopeKey)) return undefined;
    const s = this.#scope(scopeKey);
    if (!known || named === url) {
      const wrong = pairs.filter((p) => s.learned.has(p));
      for (const p of pairs) {
        if (s.banned.has(p) || s.learned.has(p) || s.blocked.has(p)) continue;
        const ev = this.#evidenceOf(s, p);
        if (ev === undefined) {
          if (s.blocked.size < MAX_PAIRS) s.blocked.add(p);
          else s.crowded = true;
          continue;
        }
        // A URL fetched again (a resume, a shorter path) is judged by its latest answer.
        ev.quiet.delete(url);
        if (ev.news.size < MAX_SAMPLES || ev.news.has(url)) ev.news.set(url, { named: named === url ? undefined : named, depth });
        else ev.overflow = true;
      }
      if (wrong.length === 0) return undefined;
      for (const p of wrong) this.#ban(s, p);
      return { change: 'lifted', scope: scopeKey, pairs: wrong };
    }
    const learnt: string[] = [];
    for (const p of pairs) {
      if (s.banned.has(p) || s.learned.has(p) || s.blocked.has(p) || s.crowded) continue;
      const ev = this.#evidenceOf(s, p);
      // A URL that brought news keeps it: naming a known page later proves nothing of the first answer.
      if (ev === undefined || ev.news.has(url)) continue;
      if (ev.quiet.size < MAX_SAMPLES || ev.quiet.has(url)) ev.quiet.set(url, named);
      if (!this.#ripe(ev, depthOf) || s.learned.size >= MAX_PAIRS) continue;
      s.evidence.delete(p);
      this.#learn(s, p);
      learnt.push(p);
    }
    return learnt.length > 0 ? { change: 'learned', scope: scopeKey, pairs: learnt } : undefined;
  }

  /**
   * Whether a pair's evidence teaches it: `minEvidence` quiet URLs naming distinct URLs for ¾ of
   * them at least, and no news standing (news whose named URL the crawl holds
   * by now, no deeper than the news page, is dropped as early).
   */
  #ripe(ev: PairEvidence, depthOf: (url: string) => number | undefined): boolean {
    const quiet = ev.quiet.size;
    if (quiet < this.options.minEvidence || ev.overflow) return false;
    if (4 * new Set(ev.quiet.values()).size < 3 * quiet) return false;
    for (const [u, news] of ev.news) {
      const held = news.named === undefined ? undefined : depthOf(news.named);
      if (held === undefined || held > news.depth) return false;
      ev.news.delete(u);
    }
    return true;
  }

  /** The learned pair of its scope `url` (canonical form) carries, or undefined. */
  covers(url: string): string | undefined {
    if (this.#learnedScopes === 0) return undefined;
    const q = url.indexOf('?');
    if (q < 0) return undefined;
    const s = this.#scopes.get(url.slice(0, q));
    if (s === undefined || s.learned.size === 0) return undefined;
    return wordedPairsOf(url).find((p) => s.learned.has(p));
  }

  /**
   * Whether a queued URL is refused at dispatch: it carries a pair learned for its path. Never a
   * seed (`depth` 0) nor a check (one URL in `checkEvery`, by its hash: `isCheck`).
   */
  refuses(url: string, depth: number): boolean {
    return depth > 0 && this.covers(url) !== undefined && !this.isCheck(url);
  }

  /** Whether `url` is one of the one in `checkEvery` URLs let through as checks (by an FNV-1a hash of it). */
  isCheck(url: string): boolean {
    return picksAsCheck(url, this.options.checkEvery);
  }

  /** Whether `url` carries one of `pairs` at `scope` (the engine's re-queue rule after a lift). */
  static carries(url: string, scope: string, pairs: readonly string[]): boolean {
    const q = url.indexOf('?');
    if (q < 0 || url.slice(0, q) !== scope) return false;
    const own = wordedPairsOf(url);
    return pairs.some((p) => own.includes(p));
  }

  /** The pairs learned, per path, oldest path first. */
  learned(): { scope: string; pairs: string[] }[] {
    const out: { scope: string; pairs: string[] }[] = [];
    for (const [scope, s] of this.#scopes) if (s.learned.size > 0) out.push({ scope, pairs: [...s.learned] });
    return out;
  }

  /** The lessons for a checkpoint: per path with any, its pairs learned and banned. */
  export(): CopyRecord[] {
    const out: CopyRecord[] = [];
    for (const [scope, s] of this.#scopes) if (s.learned.size > 0 || s.banned.size > 0) out.push([scope, [...s.learned], [...s.banned]]);
    return out;
  }

  /** Takes back `export`'s lessons. Throws `InvalidArgumentError` naming a bad record. */
  import(records: readonly CopyRecord[]): void {
    if (!Array.isArray(records)) throw new InvalidArgumentError('KnownCopies.import: expected an array of [path, learned, banned] records');
    for (const r of records) {
      const problem = copyRecordProblem(r);
      if (problem !== undefined) throw new InvalidArgumentError(`KnownCopies.import: ${problem}`);
    }
    for (const [scope, learned, banned] of records) {
      const s = this.#scope(scope);
      for (const p of banned) this.#ban(s, p);
      for (const p of learned) if (!s.banned.has(p) && !s.learned.has(p) && s.learned.size < MAX_PAIRS) this.#learn(s, p);
    }
  }

  #scope(key: string): Scope {
    let s = this.#scopes.get(key);
    if (s !== undefined) return s;
    // Room first: the scope being added is never the one evicted.
    if (this.#scopes.size >= this.options.maxScopes) this.#evictOne();
    s = { evidence: new Map(), learned: new Set(), banned: new Set(), blocked: new Set(), crowded: false };
    this.#scopes.set(key, s);
    return s;
  }

  /** Drops the oldest scope without a lesson, or else the oldest scope (a lesson lost is fetched again: the safe side). */
  #evictOne(): void {
    let victim: string | undefined;
    for (const [key, s] of this.#scopes) {
      if (s.learned.size === 0 && s.banned.size === 0) {
        victim = key;
        break;
      }
    }
    victim ??= this.#scopes.keys().next().value as string;
    const s = this.#scopes.get(victim)!;
    if (s.learned.size > 0) this.#learnedScopes--;
    this.#scopes.delete(victim);
  }

  #evidenceOf(s: Scope, p: string): PairEvidence | undefined {
    let ev = s.evidence.get(p);
    if (ev !== undefined) return ev;
    if (s.evidence.size >= MAX_EVIDENCE_PAIRS) {
      // Full of pairs that come and go (`hilit=word`, a token): the oldest without news and still
      // short of evidence makes room; none, and the new pair waits (blocked, if it brought news).
      let victim: string | undefined;
      for (const [q, e] of s.evidence) {
        if (e.quiet.size < this.options.minEvidence && e.news.size === 0 && !e.overflow) {
          victim = q;
          break;
        }
      }
      if (victim === undefined) return undefined;
      s.evidence.delete(victim);
    }
    ev = { quiet: new Map(), news: new Map(), overflow: false };
    s.evidence.set(p, ev);
    return ev;
  }

  #learn(s: Scope, p: string): void {
    if (s.learned.size === 0) this.#learnedScopes++;
    s.learned.add(p);
  }

  #ban(s: Scope, p: string): void {
    s.evidence.delete(p);
    if (s.learned.delete(p) && s.learned.size === 0) this.#learnedScopes--;
    if (s.banned.has(p)) return;
    // A ban is kept over new evidence: past the bound, the oldest ban goes (its pair may be learned again, refused, and banned again by its checks).
    if (s.banned.size >= MAX_PAIRS) s.banned.delete(s.banned.values().next().value as string);
    s.banned.add(p);
  }
}

