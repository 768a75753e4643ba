/**
 * Servers that ignore the letter case of paths, learned from the pages they serve: IIS (and
 * ASP.NET, and routers that match case-insensitively) answers `/Catalog/Product1.aspx`,
 * `/catalog/product1.aspx` and `/CATALOG/PRODUCT1.ASPX` with the same page, and sites written
 * for it spell their links as each template's author did. URL identity is case-sensitive in the
 * path (RFC 3986 §6.2.2.1 folds only the scheme and host), so every spelling is a URL of its own:
 * a loopback shop of 20 pages whose templates used three spellings cost 61 fetches.
 *
 * An origin is taken as case-insensitive once `minEvidence` (2) distinct paths were each served
 * (2xx, not a soft-404) under two spellings that differ only in letter case, with the same
 * content — an equal content fingerprint, or the same text: equal simhashes and equal churn
 * fingerprints of the main text (a page that echoes the requested spelling in an attribute, as
 * ASP.NET's form action, differs in bytes but not in text) — and neither naming another URL as
 * its rel=canonical. A pair near in text but not the same, or one naming another URL canonical,
 * is no evidence either way: MediaWiki serves a redirect (`/wiki/Nasa`) as its target's text plus
 * "(Redirected from Nasa)", naming the target (`/wiki/NASA`) canonical — an alias, not a server
 * that ignores case — and when two such pairs were evidence (simhashes within 3 bits), a loopback
 * wiki was learned case-insensitive and its articles whose titles differ only in case (`/wiki/Pi`
 * and `/wiki/PI`, `/wiki/Cat` and `/wiki/CAT`) were taken for one another: 5 of 14 never fetched.
 * From then on the engine takes a link to that origin to the spelling of its path met first —
 * served, or else linked — before it is keyed, so no second spelling becomes a row; a spelling
 * queued before the lesson is refused at dispatch when another spelling of it was served
 * (`refuses`). Only spellings the site itself used are ever fetched: a link is never folded to a
 * form nobody wrote. The query is left as written (applications read values, and often keys,
 * case-sensitively).
 *
 * The lesson keeps checking itself, as the shape lessons do (`isCheck`, their rule): of the
 * spellings it refuses on an origin — a link's spelling met for the first time that it would take
 * elsewhere, a queued spelling at dispatch — the 1st, 2nd, 4th, 8th and 16th after it was learned
 * or read back, then every `checkEvery`th (32), are let through and fetched as they were written.
 * A check served with other content, or missing, is a contradiction.
 *
 * A contradiction bans the origin (and unlearns it; the checkpoint keeps the ban): two
 * spellings of one path served with different content (simhashes more than 3 bits apart:
 * `/Readme` and `/README` as two pages), or one served and the other answered 404, 410 or a
 * soft-404 — a case-sensitive server. A link taken to a known spelling that turns out missing
 * refutes the lesson the same way (`refuted`). What the lesson held back is then given back: the
 * engine queues again the spellings it refused at dispatch, and the spellings it took links away
 * from (remembered, the latest `maxSpellings`) are owed to the crawl (`takeOwed`) — the engine
 * adds them to the links of the page that unlearned it, or of the next page it reads with links.
 *
 * Owns: per origin met, the evidence, whether it is learned or banned and its refusals since;
 * the spellings served lately (any origin, for evidence and `duplicateOf`), the spellings met in
 * links of learned origins, and the spellings refused or let through as checks. Never: URL
 * identity or scope (the engine checks a rewritten link like any other), fetching or clocks. A
 * checkpoint keeps the learned and banned origins (`export` / `import`), not the spellings: a
 * spelling taken away from a link before a kill is not given back if the lesson falls after the
 * resume. Bounded: at most `maxOrigins` origins, `maxSpellings` served spellings and as many
 * linked, refused and owed ones (≈ 200 B each: ≈ 13 MB at the defaults).
 *
 * The same learner, with `fold: 'index'`, learns servers that answer a directory's index file
 * under both its names: `/docs/guide/` and `/docs/guide/index.html` (also `index.htm`,
 * `index.php`, `default.aspx`, … — `INDEX_FILE`). Static site generators and hand-written sites
 * link both ways (breadcrumbs to the directory, menus to the file), so every page of a loopback
 * docs site of 31 pages was fetched twice (62 fetches). The two spellings of a path are then
 * the directory and the directory plus an index file name; evidence, bans, rewrites and checks
 * are as above, but a spelling naming the other one canonical is evidence (a generator writes
 * `/docs/guide/` as the canonical of the page served under both); only one naming a third URL is
 * not (`namedAlias`). A server that has no index file there (a 404) or serves another page (a
 * dynamic `/blog/` beside a stale `/blog/index.html`) bans the origin.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, enumField, numberField } from '../options/index.js';
import { NEAR_DUP_DISTANCE, hamming } from '../core/simhash.js';
import { lruSet } from '../lru/index.js';
import { isCheck } from './shapes.js';

/**
 * What two spellings of one path differ by: letter case (`'case'`), or a trailing index file
 * name (`'index'`: `/a/` and `/a/index.html`).
 */
export type PathFold = 'case' | 'index';

/** Options of a `PathCase`. */
export interface PathCaseOptions {
  /** What spellings of a path are taken for one page once learned. Default `'case'`. */
  readonly fold: PathFold;
  /** Distinct paths served the same under two spellings before the origin is learned. Default 2. */
  readonly minEvidence: number;
  /** Origins tracked. Default 65,536. */
  readonly maxOrigins: number;
  /** Spellings remembered, served, linked and refused each (oldest dropped). Default 16,384. */
  readonly maxSpellings: number;
  /**
   * A learned origin's refused spellings let through as checks: the 1st, 2nd, 4th, 8th and 16th,
   * then every this many (`isCheck`). Default 32.
   */
  readonly checkEvery: number;
}

const resolveOptions = defineOptions<PathCaseOptions>('PathCaseOptions', {
  fold: enumField<PathFold>(['case', 'index'], 'case'),
  minEvidence: numberField({ min: 1, max: 64, integer: true, default: 2 }),
  maxOrigins: numberField({ min: 1, max: 1 << 24, integer: true, default: 65_536 }),
  maxSpellings: numberField({ min: 1, max: 1 << 24, integer: true, default: 16_384 }),
  checkEvery: numberField({ min: 2, max: 1 << 20, integer: true, default: 32 }),
});

/** An origin as a checkpoint keeps it: `[origin, true]` learned, `[origin, false]` banned. */
export type CaseRecord = readonly [origin: string, learned: boolean];

const ORIGIN = /^https?:\/\/[^/?#\s]+$/;

/** Why `r` is not a `CaseRecord` (undefined: it is one). */
export function caseRecordProblem(r: unknown): string | undefined {
  if (!Array.isArray(r) || r.length !== 2) return 'not an [origin, learned] record';
  if (typeof r[0] !== 'string' || !ORIGIN.test(r[0])) return `origin ${JSON.stringify(r[0])} is not an http(s) origin`;
  if (typeof r[1] !== 'boolean') return `learned ${JSON.stringify(r[1])} is not true or false`;
  return undefined;
}

/** Where a canonical http(s) URL's path starts (the end of its origin), or -1. */
function pathStart(url: string): number {
  const scheme = url.indexOf('://');
  return scheme <= 0 ? -1 : url.indexOf('/', scheme + 3);
}

/**
 * A directory's index file at the end of a path: the names web servers serve for the directory
 * by default (Apache's DirectoryIndex, nginx's index, IIS's default documents, PHP and JSP).
 */
const INDEX_FILE = /\/(?:index|default)\.(?:html?|xhtml|shtml|php|aspx?|jsp)$/i;

/** Whether `path` ends in a directory's index file (`INDEX_FILE`): `/docs/index.html`, `/default.aspx`. */
export function endsInIndexFile(path: string): boolean {
  return INDEX_FILE.test(path);
}

/** `url` with its path (from `slash`) folded by `how` and its query as written. */
function fold(url: string, slash: number, how: PathFold): string {
  const q = url.indexOf('?', slash);
  const end = q < 0 ? url.length : q;
  const path = url.slice(slash, end);
  if (how === 'case') return url.slice(0, slash) + path.toLowerCase() + url.slice(end);
  const m = INDEX_FILE.exec(path);
  return m === null ? url : url.slice(0, slash) + path.slice(0, m.index + 1) + url.slice(end);
}

/** A canonical http(s) URL's origin and its folded form, or undefined. */
function foldOf(url: string, how: PathFold): { origin: string; folded: string } | undefined {
  const slash = pathStart(url);
  return slash < 0 ? undefined : { origin: url.slice(0, slash), folded: fold(url, slash, how) };
}

/** The folded form of `url` when its origin is in `learned`, else undefined (nothing folded). */
function foldIn(learned: ReadonlySet<string>, url: string, how: PathFold): string | undefined {
  const slash = pathStart(url);
  return slash < 0 || !learned.has(url.slice(0, slash)) ? undefined : fold(url, slash, how);
}

interface OriginState {
  learned: boolean;
  banned: boolean;
  /** Folded paths seen served the same under two spellings (until learned or banned). */
  evidence: Set<string> | undefined;
  /** Spellings refused since the lesson was learned or read back (`isCheck` picks the checks among them). */
  refused: number;
}

/** A page served under one spelling: what the other spellings of its path are compared with. */
export interface ServedPage {
  readonly contentFp: bigint | undefined;
  readonly simhash: bigint | undefined;
  /** The churn fingerprint of its main text (`churnFp`); undefined: not known (then only an equal `contentFp` is the same content). */
  readonly churnFp?: bigint | undefined;
  /** Its rel=canonical (canonical form), when it has one. */
  readonly canonical?: string | undefined;
}

interface Served {
  readonly url: string;
  readonly contentFp: bigint | undefined;
  readonly simhash: bigint | undefined;
  readonly churnFp: bigint | undefined;
  /** Its rel=canonical, when it names another URL (an alias of that page). */
  readonly names: string | undefined;
}

/** An origin learned or unlearned by one answer. */
export interface CaseLesson {
  readonly origin: string;
  readonly learned: boolean;
}

/**
 * How two spellings of one path were served: `same` content (equal content fingerprints, or equal
 * simhashes and churn fingerprints: the same text, bytes apart only in markup), `near` (simhashes
 * within the near-duplicate distance, or nothing to tell them apart by), or `other` pages.
 */
function compare(a: Served, b: Served): 'same' | 'near' | 'other' {
  if (a.contentFp !== undefined && a.contentFp === b.contentFp) return 'same';
  if (a.simhash === undefined || b.simhash === undefined || a.simhash === 0n) return 'near';
  if (a.simhash === b.simhash && a.churnFp !== undefined && a.churnFp === b.churnFp) return 'same';
  return hamming(a.simhash, b.simhash) <= NEAR_DUP_DISTANCE ? 'near' : 'other';
}

/** What a lesson did with a spelling another spelling stands for: took it away from a link, refused it at dispatch, or let it through as a check. */
type Refusal = 'link' | 'dispatch' | 'check';

/** A page served at `url` as `served` remembers it. */
function servedAs(url: string, page: ServedPage): Served {
  return { url, contentFp: page.contentFp, simhash: page.simhash, churnFp: page.churnFp, names: page.canonical !== url ? page.canonical : undefined };
}

/**
 * Whether a pair of spellings is an alias the site names rather than evidence of how the server
 * spells paths: for letter case, either names any other URL canonical (a MediaWiki redirect names
 * its target, a page of its own); for an index file, either names a third URL (`/a/index.html`
 * naming `/a/` is what a server that serves both says, as static site generators write it).
 */
function namedAlias(how: PathFold, a: Served, b: Served): boolean {
  if (how === 'case') return a.names !== undefined || b.names !== undefined;
  return (a.names !== undefined && a.names !== b.url) || (b.names !== undefined && b.names !== a.url);
}

/** Learns origins that serve paths in any letter case (see the module comment). */
export class PathCase {
  readonly options: Readonly<PathCaseOptions>;
  readonly #origins = new Map<string, OriginState>();
  /** Origins learned: the set `rewrite` reads first. */
  readonly #learned = new Set<string>();
  /** Per folded URL, the spelling served first (2xx) and its fingerprints; oldest first. */
  readonly #served = new Map<string, Served>();
  /** Per folded URL of a learned origin, the spelling its first link used (not yet served). */
  readonly #linked = new Map<string, string>();
  /**
   * Spellings a learned origin's lesson met, counted once each (oldest first): taken away from a
   * link, refused at dispatch, or let through as a check (`Refusal`).
   */
  readonly #refusals = new Map<string, Refusal>();
  /** Spellings taken away from links by a lesson since unlearned: the crawl's to fetch (`takeOwed`). */
  #owed: string[] = [];

  constructor(options?: Partial<PathCaseOptions> | null) {
    this.options = resolveOptions(options);
  }

  /**
   * The answer to a fetch of `url` (canonical form): its status (a soft-404 passed as 404) and,
   * for a page served, its fingerprints and rel=canonical. Returns the lesson it taught, or
   * undefined; a lesson unlearned leaves the spellings it took away from links owed (`takeOwed`).
   */
  observe(url: string, status: number, page?: ServedPage): CaseLesson | undefined {
    if (typeof url !== 'string') throw new InvalidArgumentError(`PathCase.observe url must be a string, got ${typeof url}`);
    const f = foldOf(url, this.options.fold);
    if (f === undefined) return undefined;
    const seen = this.#served.get(f.folded);
    const other = seen !== undefined && seen.url !== url ? seen : undefined;
    if (status === 404 || status === 410) return other === undefined ? undefined : this.#ban(f.origin);
    if (status < 200 || status >= 300) return undefined;
    const here = servedAs(url, page ?? { contentFp: undefined, simhash: undefined });
    lruSet(this.#served, f.folded, seen ?? here, this.options.maxSpellings);
    if (other === undefined) return undefined;
    const verdict = compare(other, here);
    if (verdict === 'other') return this.#ban(f.origin);
    // No evidence either way: a pair near in text only where either spelling names a canonical
    // (MediaWiki's redirect: the target's text plus "Redirected from"), or, folding index files,
    // an alias the site names. A same pair counts for letter case whatever its canonical (IIS
    // sites name one on every spelling), and a near pair naming none (a breadcrumb echoing the
    // path asked): a review saw both unlearned, 23 requests → 61; the checks guard a wrong lesson.
    if (verdict === 'near' ? other.names !== undefined || here.names !== undefined : this.options.fold !== 'case' && namedAlias(this.options.fold, other, here)) return undefined;
    const s = this.#state(f.origin);
    if (s === undefined || s.banned || s.learned) return undefined;
    (s.evidence ??= new Set()).add(f.folded);
    if (s.evidence.size < this.options.minEvidence) return undefined;
    s.evidence = undefined;
    s.learned = true;
    s.refused = 0;
    this.#learned.add(f.origin);
    return { origin: f.origin, learned: true };
  }

  /**
   * `url` was served earlier with these fingerprints (a resume reads the latest back from the
   * frontier, oldest first; its rel=canonical is not kept, so it is taken as naming none):
   * remembered as `observe` would have, teaching nothing now; a spelling already remembered is
   * kept, and nothing is once `maxSpellings` are.
   */
  noteServed(url: string, page: ServedPage): void {
    const f = foldOf(url, this.options.fold);
    if (f === undefined || this.#served.has(f.folded) || this.#served.size >= this.options.maxSpellings) return;
    this.#served.set(f.folded, servedAs(url, page));
  }

  /**
   * `url` (canonical form) spelled as its path was met first on its learned origin, or undefined
   * when it is that spelling, its origin is not learned, or it is a check (a spelling met for the
   * first time that `isCheck` lets through: kept as written, and fetched). A spelling met for the
   * first time is remembered as the one to take later links to.
   */
  rewrite(url: string): string | undefined {
    // Every link of every page comes here: nothing is split until some origin is learned.
    if (this.#learned.size === 0) return undefined;
    const folded = foldIn(this.#learned, url, this.options.fold);
    if (folded === undefined) return undefined;
    const known = this.#served.get(folded)?.url ?? this.#linked.get(folded);
    if (known === undefined) {
      lruSet(this.#linked, folded, url, this.options.maxSpellings);
      return undefined;
    }
    if (known === url) return undefined;
    return this.#refuse(url, 'link') ? known : undefined;
  }

  /**
   * Another spelling of `url` served this run on its learned origin (so refusing `url`, queued
   * before the lesson, loses nothing); undefined otherwise. Counts nothing: `refuses` is the
   * dispatch's question.
   */
  duplicateOf(url: string): string | undefined {
    if (this.#learned.size === 0) return undefined;
    const folded = foldIn(this.#learned, url, this.options.fold);
    const served = folded === undefined ? undefined : this.#served.get(folded)?.url;
    return served !== undefined && served !== url ? served : undefined;
  }

  /**
   * Whether `url`'s queued fetch is refused: another spelling of it was served this run on its
   * learned origin (`duplicateOf`), and it is no check — one let through at a link, or a refusal
   * `isCheck` picks now.
   */
  refuses(url: string): boolean {
    return this.duplicateOf(url) !== undefined && this.#refuse(url, 'dispatch');
  }

  /**
   * The spellings owed to the crawl since a lesson was unlearned: those it took away from links,
   * which no row holds (the engine adds them to the links of the page it reads next). Each is
   * handed out once.
   */
  takeOwed(): string[] {
    if (this.#owed.length === 0) return [];
    const owed = this.#owed;
    this.#owed = [];
    return owed;
  }

  /**
   * A link taken from `original` to the spelling `rewritten` led to a page that is not there
   * (404, 410, soft-404): the origin does not ignore case, so it is banned. Returns the
   * unlearned origin, or undefined when `rewritten` was not this learner's doing.
   */
  refuted(original: string, rewritten: string): CaseLesson | undefined {
    const a = foldOf(original, this.options.fold);
    const b = foldOf(rewritten, this.options.fold);
    if (a === undefined || b === undefined || a.folded !== b.folded || original === rewritten || !this.#learned.has(a.origin)) return undefined;
    return this.#ban(a.origin);
  }

  /** The origins learned (in the order they were met). */
  learned(): string[] {
    return [...this.#learned];
  }

  /** What a checkpoint keeps: each origin learned or banned (not the evidence or spellings). */
  export(): CaseRecord[] {
    const out: CaseRecord[] = [];
    for (const [origin, s] of this.#origins) if (s.learned || s.banned) out.push([origin, s.learned]);
    return out;
  }

  /**
   * Takes a checkpoint's origins back (`export`); one both learned and banned stays banned.
   * @throws InvalidArgumentError for a record that is not a `CaseRecord`.
   */
  import(records: readonly CaseRecord[]): void {
    for (const r of records) {
      const problem = caseRecordProblem(r);
      if (problem !== undefined) throw new InvalidArgumentError(`PathCase.import: ${problem}`);
      const s = this.#state(r[0]);
      if (s === undefined) return;
      if (!r[1]) this.#ban(r[0]);
      else if (!s.banned) {
        s.learned = true;
        s.evidence = undefined;
        // Read back: its first refusals are checks again.
        s.refused = 0;
        this.#learned.add(r[0]);
      }
    }
  }

  #state(origin: string): OriginState | undefined {
    let s = this.#origins.get(origin);
    if (s === undefined && this.#origins.size < this.options.maxOrigins) {
      s = { learned: false, banned: false, evidence: undefined, refused: 0 };
      this.#origins.set(origin, s);
    }
    return s;
  }

  /**
   * Whether spelling `url` of a learned origin, which another spelling stands for, is refused
   * (`at` a link or at dispatch): counted the first time it is met, refused unless `isCheck` picks
   * it; a spelling met again keeps its first answer.
   */
  // The refusal count and its checks as ShapeLessons.refuses's: keep in sync.
  #refuse(url: string, at: 'link' | 'dispatch'): boolean {
    const before = this.#refusals.get(url);
    if (before !== undefined) return before !== 'check';
    const slash = pathStart(url);
    const s = slash < 0 ? undefined : this.#origins.get(url.slice(0, slash));
    if (s === undefined) return true;
    s.refused++;
    const check = isCheck(s.refused, this.options.checkEvery);
    lruSet(this.#refusals, url, check ? 'check' : at, this.options.maxSpellings);
    return !check;
  }

  #ban(origin: string): CaseLesson | undefined {
    const s = this.#state(origin);
    if (s === undefined || s.banned) return undefined;
    s.banned = true;
    s.evidence = undefined;
    if (!s.learned) return undefined;
    s.learned = false;
    this.#learned.delete(origin);
    // What it took away from links is owed; what it refused at dispatch has rows (the engine queues them again).
    const prefix = `${origin}/`;
    for (const [url, done] of this.#refusals) {
      if (!url.startsWith(prefix)) continue;
      if (done === 'link') this.#owed.push(url);
      this.#refusals.delete(url);
    }
    if (this.#owed.length > this.options.maxSpellings) this.#owed.splice(0, this.#owed.length - this.options.maxSpellings);
    return { origin, learned: false };
  }
}
