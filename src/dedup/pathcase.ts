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
 * content: an equal content fingerprint, or simhashes within the near-duplicate distance (a
 * page that echoes the requested spelling in an attribute, as a form's action, differs in bytes
 * but not in text). From then on the engine takes a link to that origin to the spelling of its
 * path met first — served, or else linked — before it is keyed, so no second spelling becomes a
 * row; a spelling queued before the lesson is refused at dispatch when another spelling of it
 * was served (`duplicateOf`). Only spellings the site itself used are ever fetched: a link is
 * never folded to a form nobody wrote. The query is left as written (applications read values,
 * and often keys, case-sensitively).
 *
 * A contradiction bans the origin (and unlearns it; the checkpoint keeps the ban): two
 * spellings of one path served with different content (`/Readme` and `/README` as two pages),
 * or one served and the other answered 404, 410 or a soft-404 — a case-sensitive server. A link taken to a known
 * spelling that turns out missing refutes the lesson the same way (`refuted`).
 *
 * Owns: per origin met, the evidence and whether it is learned or banned; the spellings served
 * lately (any origin, for evidence and `duplicateOf`) and the spellings met in links of learned
 * origins. Never: URL identity or scope (the engine checks a rewritten link like any other),
 * fetching or clocks. A checkpoint keeps the learned and banned origins (`export` / `import`).
 * Bounded: at most `maxOrigins` origins, `maxSpellings` served spellings and as many linked ones
 * (≈ 200 B each: ≈ 6.5 MB at the defaults).
 *
 * The same learner, with `fold: 'index'`, learns servers that answer a directory's index file
 * under both its names: `/docs/guide/` and `/docs/guide/index.html` (also `index.htm`,
 * `index.php`, `default.aspx`, … — `INDEX_FILE`). Static site generators and hand-written sites
 * link both ways (breadcrumbs to the directory, menus to the file), so every page of a loopback
 * docs site of 31 pages was fetched twice (62 fetches). The two spellings of a path are then
 * the directory and the directory plus an index file name; evidence, bans and rewrites are as
 * above. A server that has no index file there (a 404) or serves another page (a dynamic `/blog/`
 * beside a stale `/blog/index.html`) bans the origin.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, enumField, numberField } from '../options/index.js';
import { NEAR_DUP_DISTANCE, hamming } from '../core/simhash.js';
import { lruSet } from '../lru/index.js';

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
  /** Spellings remembered, served and linked each (oldest dropped). Default 16,384. */
  readonly maxSpellings: number;
}

const resolveOptions = defineOptions<PathCaseOptions>('PathCaseOptions', {
  fold: enumField<PathFold>(['case', 'index'], 'case'),
  minEvidence: numberField({ min: 1, max: 64, integer: true, default: 2 }),
  maxOrigins: numberField({ min: 1, max: 1 << 24, integer: true, default: 65_536 }),
  maxSpellings: numberField({ min: 1, max: 1 << 24, integer: true, default: 16_384 }),
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
}

interface Served {
  readonly url: string;
  readonly contentFp: bigint | undefined;
  readonly simhash: bigint | undefined;
}

/** An origin learned or unlearned by one answer. */
export interface CaseLesson {
  readonly origin: string;
  readonly learned: boolean;
}

/** Whether two fetches of one page under two spellings served the same content. */
function sameContent(a: Served, contentFp: bigint | undefined, simhash: bigint | undefined): boolean {
  if (a.contentFp !== undefined && a.contentFp === contentFp) return true;
  return a.simhash !== undefined && simhash !== undefined && a.simhash !== 0n && hamming(a.simhash, simhash) <= NEAR_DUP_DISTANCE;
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

  constructor(options?: Partial<PathCaseOptions> | null) {
    this.options = resolveOptions(options);
  }

  /**
   * The answer to a fetch of `url` (canonical form): its status (a soft-404 passed as 404) and,
   * for a page served, its content fingerprint and simhash. Returns the lesson it taught, or undefined.
   */
  observe(url: string, status: number, contentFp: bigint | undefined, simhash: bigint | undefined): CaseLesson | undefined {
    if (typeof url !== 'string') throw new InvalidArgumentError(`PathCase.observe url must be a string, got ${typeof url}`);
    const f = foldOf(url, this.options.fold);
    if (f === undefined) return undefined;
    const seen = this.#served.get(f.folded);
    const other = seen !== undefined && seen.url !== url ? seen : undefined;
    if (status === 404 || status === 410) return other === undefined ? undefined : this.#ban(f.origin);
    if (status < 200 || status >= 300) return undefined;
    lruSet(this.#served, f.folded, seen ?? { url, contentFp, simhash }, this.options.maxSpellings);
    if (other === undefined) return undefined;
    if (!sameContent(other, contentFp, simhash)) return this.#ban(f.origin);
    const s = this.#state(f.origin);
    if (s === undefined || s.banned || s.learned) return undefined;
    (s.evidence ??= new Set()).add(f.folded);
    if (s.evidence.size < this.options.minEvidence) return undefined;
    s.evidence = undefined;
    s.learned = true;
    this.#learned.add(f.origin);
    return { origin: f.origin, learned: true };
  }

  /**
   * `url` was served earlier with these fingerprints (a resume reads the latest back from the
   * frontier, oldest first): remembered as `observe` would have, teaching nothing now; a spelling
   * already remembered is kept, and nothing is once `maxSpellings` are.
   */
  noteServed(url: string, contentFp: bigint | undefined, simhash: bigint | undefined): void {
    const f = foldOf(url, this.options.fold);
    if (f === undefined || this.#served.has(f.folded) || this.#served.size >= this.options.maxSpellings) return;
    this.#served.set(f.folded, { url, contentFp, simhash });
  }

  /**
   * `url` (canonical form) spelled as its path was met first on its learned origin, or undefined
   * when it is that spelling (or its origin is not learned). A spelling met for the first time is
   * remembered as the one to take later links to.
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
    return known === url ? undefined : known;
  }

  /**
   * Another spelling of `url` served this run on its learned origin (so refusing `url`, queued
   * before the lesson, loses nothing); undefined otherwise.
   */
  duplicateOf(url: string): string | undefined {
    if (this.#learned.size === 0) return undefined;
    const folded = foldIn(this.#learned, url, this.options.fold);
    const served = folded === undefined ? undefined : this.#served.get(folded)?.url;
    return served !== undefined && served !== url ? served : undefined;
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
        this.#learned.add(r[0]);
      }
    }
  }

  #state(origin: string): OriginState | undefined {
    let s = this.#origins.get(origin);
    if (s === undefined && this.#origins.size < this.options.maxOrigins) {
      s = { learned: false, banned: false, evidence: undefined };
      this.#origins.set(origin, s);
    }
    return s;
  }

  #ban(origin: string): CaseLesson | undefined {
    const s = this.#state(origin);
    if (s === undefined || s.banned) return undefined;
    s.banned = true;
    s.evidence = undefined;
    if (!s.learned) return undefined;
    s.learned = false;
    this.#learned.delete(origin);
    return { origin, learned: false };
  }
}
