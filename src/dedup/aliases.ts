/**
 * Origins a site moved away from, learned from its permanent redirects: `http://` to
 * `https://`, `example.com` to `www.example.com` and back. A site whose pages still link the
 * old form costs a redirect per URL: two requests for every page, half the crawl's politeness
 * budget on that host spent on 301s.
 *
 * An origin A is taken as an alias of B once `minEvidence` (3) distinct URLs of A answered a
 * permanent redirect (301 or 308) to the same URL on B — the path and query unchanged, B
 * differing from A only by the scheme (http → https), a `www.` prefix, or both, on the default
 * port. Then the engine takes links into A to B before they are keyed, so no copy on A becomes
 * a row. A contradiction bans A for the run (and unlearns it): a URL of A answering 2xx itself,
 * or a permanent redirect from A to the same path on an origin other than B. Temporary
 * redirects (302, 303, 307) are neither evidence nor contradiction: a site may send them for a
 * login or a campaign.
 *
 * Owns: per origin met, its candidate target, the evidence so far and whether it is learned
 * or banned (an origin that served a page is recorded as banned). Never: URL identity or scope (the engine checks a rewritten link like any other),
 * fetching or clocks. A checkpoint keeps the learned and banned origins (`export` / `import`).
 * Bounded: at most `maxOrigins` origins with evidence, each holding at most `minEvidence` URLs.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';

/** Options of an `OriginAliases`. */
export interface OriginAliasesOptions {
  /** Distinct URLs redirected the same way before the alias is learned. Default 3. */
  readonly minEvidence: number;
  /** Origins holding evidence. Default 65,536. */
  readonly maxOrigins: number;
}

const resolveOptions = defineOptions<OriginAliasesOptions>('OriginAliasesOptions', {
  minEvidence: numberField({ min: 1, max: 64, integer: true, default: 3 }),
  maxOrigins: numberField({ min: 1, max: 1 << 24, integer: true, default: 65_536 }),
});

/** An alias as a checkpoint keeps it: `[from, to]` learned, `[from, null]` banned. */
export type AliasRecord = readonly [from: string, to: string | null];

const ORIGIN = /^https?:\/\/[^/?#\s]+$/;

/** Why `r` is not an `AliasRecord` (undefined: it is one). */
export function aliasRecordProblem(r: unknown): string | undefined {
  if (!Array.isArray(r) || r.length !== 2) return 'not a [from origin, to origin or null] record';
  if (typeof r[0] !== 'string' || !ORIGIN.test(r[0])) return `origin ${JSON.stringify(r[0])} is not an http(s) origin`;
  if (r[1] !== null && (typeof r[1] !== 'string' || aliasOf(r[0], r[1]) === false)) return `${JSON.stringify(r[1])} is not an alias of ${r[0]} (another scheme or www. prefix of it)`;
  return undefined;
}

interface OriginState {
  /** The origin its redirects named (learned once it is in `OriginAliases#moved`). */
  to: string | undefined;
  banned: boolean;
  /** Created with the first redirect (most origins only ever serve their pages). */
  evidence: Set<string> | undefined;
}

/** Where `url`'s path starts (the end of its origin), or -1 for a URL without a path. */
function pathStart(url: string): number {
  const scheme = url.indexOf('://');
  return scheme <= 0 ? -1 : url.indexOf('/', scheme + 3);
}

/** `url`'s origin and the rest (path and query), or undefined for a URL without a path. */
function splitOrigin(url: string): { origin: string; rest: string } | undefined {
  const slash = pathStart(url);
  return slash < 0 ? undefined : { origin: url.slice(0, slash), rest: url.slice(slash) };
}

/**
 * Whether origin `to` is `from` moved: the scheme http → https (or kept), the host with or
 * without a `www.` prefix, and not the same origin. A move to https leaves no explicit port on
 * either side (canonical URLs drop default ports); within one scheme the port is kept.
 */
function aliasOf(from: string, to: string): boolean {
  const f = /^(https?):\/\/([^/:?#\s]+)(:\d+)?$/.exec(from);
  const t = /^(https?):\/\/([^/:?#\s]+)(:\d+)?$/.exec(to);
  if (f === null || t === null || from === to) return false;
  if (f[1] === 'https' && t[1] === 'http') return false;
  if (f[1] !== t[1] ? f[3] !== undefined || t[3] !== undefined : f[3] !== t[3]) return false;
  const fh = f[2]!;
  const th = t[2]!;
  return fh === th || fh === `www.${th}` || th === `www.${fh}`;
}

/** Learns origins a site moved away from (see the module comment). */
export class OriginAliases {
  readonly options: Readonly<OriginAliasesOptions>;
  readonly #origins = new Map<string, OriginState>();
  /** The learned aliases, from → to (in the order learned): the one map `rewrite` reads. */
  readonly #moved = new Map<string, string>();

  constructor(options?: Partial<OriginAliasesOptions> | null) {
    this.options = resolveOptions(options);
  }

  /**
   * The answer to a fetch of `url` (canonical form): its HTTP status and, for a redirect, its
   * target (canonical form). Returns the origin learned (`learned: true`) or unlearned by it,
   * or undefined when neither.
   */
  observe(url: string, status: number, location: string | undefined): { from: string; to: string; learned: boolean } | undefined {
    if (typeof url !== 'string') throw new InvalidArgumentError(`OriginAliases.observe url must be a string, got ${typeof url}`);
    const u = splitOrigin(url);
    if (u === undefined) return undefined;
    if (status >= 200 && status < 300) return this.#ban(u.origin);
    if ((status !== 301 && status !== 308) || location === undefined) return undefined;
    const l = splitOrigin(location);
    if (l === undefined || l.rest !== u.rest || !aliasOf(u.origin, l.origin)) return undefined;
    const o = this.#state(u.origin);
    if (o === undefined || o.banned) return undefined;
    if (o.to !== undefined && o.to !== l.origin) return this.#ban(u.origin);
    o.to = l.origin;
    if (this.#moved.has(u.origin)) return undefined;
    (o.evidence ??= new Set()).add(url);
    if (o.evidence.size < this.options.minEvidence) return undefined;
    this.#moved.set(u.origin, l.origin);
    o.evidence = undefined;
    return { from: u.origin, to: l.origin, learned: true };
  }

  /** `url` (canonical form) on the origin its own moved to, or undefined when its origin is not a learned alias. */
  rewrite(url: string): string | undefined {
    // Every link of every page comes here: nothing is sliced until some origin has moved.
    if (this.#moved.size === 0) return undefined;
    const slash = pathStart(url);
    const to = slash < 0 ? undefined : this.#moved.get(url.slice(0, slash));
    return to === undefined ? undefined : `${to}${url.slice(slash)}`;
  }

  /**
   * A link taken from `original` to `rewritten` by this alias led to a page that is not there
   * (404, 410): the origin did not move whole, so the alias is banned. Returns the unlearned
   * alias, or undefined when `rewritten` was not this alias's doing.
   */
  refuted(original: string, rewritten: string): { from: string; to: string; learned: boolean } | undefined {
    const u = splitOrigin(original);
    const r = splitOrigin(rewritten);
    if (u === undefined || r === undefined || u.origin === r.origin) return undefined;
    return this.#moved.get(u.origin) === r.origin ? this.#ban(u.origin) : undefined;
  }

  /** The aliases learned, in the order learned. */
  learned(): { from: string; to: string }[] {
    return [...this.#moved].map(([from, to]) => ({ from, to }));
  }

  /** What a checkpoint keeps: learned aliases and banned origins (not the evidence). */
  export(): AliasRecord[] {
    const out: AliasRecord[] = [];
    for (const [from, o] of this.#origins) {
      const to = this.#moved.get(from);
      if (o.banned) out.push([from, null]);
      else if (to !== undefined) out.push([from, to]);
    }
    return out;
  }

  /**
   * Takes a checkpoint's aliases back (`export`).
   * @throws InvalidArgumentError for a record that is not `[from, to | null]` with `to` an alias of `from`.
   */
  import(records: readonly AliasRecord[]): void {
    for (const r of records) {
      const problem = aliasRecordProblem(r);
      if (problem !== undefined) throw new InvalidArgumentError(`OriginAliases.import: ${problem}`);
      const o = this.#state(r[0]);
      if (o === undefined) return;
      if (r[1] === null) {
        o.banned = true;
        this.#moved.delete(r[0]);
      } else if (!o.banned) {
        o.to = r[1];
        this.#moved.set(r[0], r[1]);
      }
    }
  }

  #state(origin: string): OriginState | undefined {
    let o = this.#origins.get(origin);
    if (o === undefined && this.#origins.size < this.options.maxOrigins) {
      o = { to: undefined, banned: false, evidence: undefined };
      this.#origins.set(origin, o);
    }
    return o;
  }

  #ban(origin: string): { from: string; to: string; learned: boolean } | undefined {
    // Recorded even for an origin that never redirected: one that serves a page itself is
    // never taken as moved, however many of its URLs redirect later.
    const o = this.#state(origin);
    if (o === undefined || o.banned) return undefined;
    const to = this.#moved.get(origin);
    this.#moved.delete(origin);
    o.banned = true;
    o.evidence = undefined;
    return to === undefined ? undefined : { from: origin, to, learned: false };
  }
}
