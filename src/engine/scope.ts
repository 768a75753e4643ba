/**
 * The crawl's scope: which canonical URLs a crawl may fetch at all, decided before a URL
 * enters the frontier (so an out-of-scope link costs no request, no DNS query and no
 * robots.txt) and again at dispatch (so narrowing the settings on resume holds back URLs
 * already queued).
 *
 * A URL is in scope when all three hold:
 *   1. `scope`, relative to the seeds: `host` — the same host name as a seed; `domain` (the
 *      default) — the same registrable domain as a seed (public suffix + 1 through tldts, so
 *      `docs.example.com` is in a crawl seeded at `www.example.com`, while `alice.github.io`
 *      is not in one seeded at `bob.github.io`); `origin` — the same scheme, host and port;
 *      `any` — no restriction.
 *   2. `include`: when given, it matches at least one of these patterns.
 *   3. `exclude`: it matches none of these patterns.
 *
 * Patterns are globs (picomatch) over the whole canonical URL: `*` stays within a path
 * segment, `**` crosses segments, `?` is one character, `{a,b}` alternatives, `[…]` classes —
 * e.g. `http://docs.example.com/3.11/**` or `**\/*.pdf`. Globs rather than WHATWG URLPattern:
 * Node 20 has no URLPattern and its polyfill is a large dependency, whereas picomatch is small,
 * dependency-free, widely used (vite, tinyglobby, chokidar) and its syntax is what wget,
 * rsync and shell users already know for "this part of the site".
 *
 * Never: fetch, resolve or read robots.txt; `check` is pure given the seeds.
 */
import picomatch from 'picomatch';
import { InvalidArgumentError } from '../errors/index.js';
import { hostGroupKey } from '../url/host.js';
import { originKey } from './host-directory.js';

/** How far from its seeds a crawl may go (see the module comment). */
export type CrawlScope = 'host' | 'domain' | 'origin' | 'any';

/** The scopes, for validation and help. */
export const CRAWL_SCOPES: readonly CrawlScope[] = ['host', 'domain', 'origin', 'any'];

/** Why a URL is out of scope. */
export type ScopeReason = 'off-host' | 'off-domain' | 'off-origin' | 'not-included' | 'excluded';

/** The scope's reasons, in the order a summary lists them. */
export const SCOPE_REASONS: readonly ScopeReason[] = ['off-host', 'off-domain', 'off-origin', 'not-included', 'excluded'];

/** Origins whose scope verdict `Scope` remembers before it starts over. */
const CACHE_MAX = 65_536;

const GROUPING = { host: 'host', domain: 'registrable', origin: 'origin' } as const;
const REASON = { host: 'off-host', domain: 'off-domain', origin: 'off-origin' } as const;

/** The key of `url` under `scope` (its host, registrable domain or origin), or undefined. */
function keyOf(url: string, scope: Exclude<CrawlScope, 'any'>): string | undefined {
  try {
    return hostGroupKey(url, GROUPING[scope]);
  } catch {
    return undefined;
  }
}

/** A glob's `scheme://host[:port]` start, the host part free of glob characters. */
const PATTERN_ORIGIN = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#*?[\]{}()!@+|]+)/i;

/**
 * A pattern spelled as the canonical URLs it is matched against: its literal host by its
 * ASCII form in lower case (`https://Bücher.example/**` → `https://xn--bcher-kva.example/**`)
 * and every other non-ASCII character percent-encoded as UTF-8 (`/wiki/Café/**` →
 * `/wiki/Caf%C3%A9/**`), so a pattern copied from a browser's address bar matches the pages
 * it names. Glob syntax is ASCII, so the encoding never touches it. Exported for its test.
 */
export function canonicalPattern(p: string): string {
  let head = '';
  let rest = p;
  const m = PATTERN_ORIGIN.exec(p);
  if (m !== null) {
    try {
      const u = new URL(`${m[1]}${m[2]}/`);
      head = `${u.protocol}//${u.host}`;
      rest = p.slice(m[0].length);
    } catch {
      // Not a URL's start after all: left as written.
    }
  }
  return head + rest.replace(/[^\x00-\x7f]+/gu, (chars) => encodeURIComponent(chars));
}

/** Compiles glob patterns (throws `InvalidArgumentError` naming the option and the pattern). */
function compile(option: string, patterns: readonly string[]): ((url: string) => boolean)[] {
  return patterns.map((p) => {
    if (typeof p !== 'string' || p.trim() === '') throw new InvalidArgumentError(`${option}: expected a non-empty glob pattern, received ${JSON.stringify(p)}`);
    try {
      return picomatch(canonicalPattern(p), { dot: true });
    } catch (err) {
      throw new InvalidArgumentError(`${option}: ${JSON.stringify(p)} is not a valid glob (${err instanceof Error ? err.message : String(err)})`);
    }
  });
}

/** A crawl's scope over its seeds (see the module comment). */
export class Scope {
  #scope: CrawlScope = 'any';
  readonly #keys = new Set<string>();
  #include: ((url: string) => boolean)[] = [];
  #exclude: ((url: string) => boolean)[] = [];
  /**
   * Whether an origin is inside the seeds' keys, by origin: the key of a URL under every
   * grouping a scope uses is a function of its origin alone, and every link of every page is
   * checked (the registrable domain is a public-suffix look-up). Cleared when a seed widens
   * the scope, and when it reaches `CACHE_MAX` origins.
   */
  readonly #inside = new Map<string, boolean>();

  /**
   * @param scope how far from the seeds
   * @param seeds canonical seed URLs (more can be added with `addSeed`)
   * @throws InvalidArgumentError for a pattern that is not a glob
   */
  constructor(scope: CrawlScope, seeds: readonly string[], include: readonly string[] = [], exclude: readonly string[] = []) {
    this.adopt(scope, seeds, include, exclude);
  }

  /**
   * Starts over with another scope and patterns (a cluster node taking the ones recorded with
   * the crawl): the seeds' keys are rebuilt from `seeds` under the new scope.
   * @throws InvalidArgumentError for a pattern that is not a glob
   */
  adopt(scope: CrawlScope, seeds: readonly string[], include: readonly string[], exclude: readonly string[]): void {
    const inc = compile('include', include);
    const exc = compile('exclude', exclude);
    this.#scope = scope;
    this.#include = inc;
    this.#exclude = exc;
    this.#keys.clear();
    this.#inside.clear();
    for (const s of seeds) this.addSeed(s);
  }

  /** Widens the scope by a seed (a canonical URL). */
  addSeed(url: string): void {
    if (this.#scope === 'any') return;
    const key = keyOf(url, this.#scope);
    if (key !== undefined) this.#keys.add(key);
    this.#inside.clear();
  }

  /** Whether `url`'s origin is inside the seeds' keys (cached by origin). */
  #insideKeys(url: string, scope: Exclude<CrawlScope, 'any'>): boolean {
    const origin = originKey(url);
    const known = origin === undefined ? undefined : this.#inside.get(origin);
    if (known !== undefined) return known;
    const key = keyOf(url, scope);
    const inside = key !== undefined && this.#keys.has(key);
    if (origin !== undefined) {
      if (this.#inside.size >= CACHE_MAX) this.#inside.clear();
      this.#inside.set(origin, inside);
    }
    return inside;
  }

  /** Why `url` (canonical) is out of scope, or undefined when it is in scope. */
  check(url: string): ScopeReason | undefined {
    if (this.#scope !== 'any' && !this.#insideKeys(url, this.#scope)) return REASON[this.#scope];
    return this.patternReason(url);
  }

  /** Why the include/exclude patterns refuse `url` (canonical), or undefined when they take it — the seeds aside. */
  patternReason(url: string): 'not-included' | 'excluded' | undefined {
    if (this.#include.length > 0 && !this.#include.some((m) => m(url))) return 'not-included';
    if (this.#exclude.some((m) => m(url))) return 'excluded';
    return undefined;
  }
}
