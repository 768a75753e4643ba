/**
 * LoginWalls: paths that answer one login form whatever is asked.
 *
 * A forum shows a visitor who is not logged in a login form at every URL of its posting, report
 * and profile scripts — `posting.php?mode=quote&f=1&p=1003`, `report.php?f=1&p=1003`,
 * `memberlist.php?mode=viewprofile&u=5` — one URL per post or member, each linked from every
 * page. The form echoes the URL asked in a hidden field, so the bytes differ and no soft-404
 * template forms, and the query keys select content for a member, so no key is ignorable
 * (`ParamLearner`). On a phpBB-shaped loopback forum of 95 pages, 1,175 of 2,036 requests were
 * such forms.
 *
 * The signature, per path (origin and path, the query set aside: the *scope*): `minEvidence`
 * distinct URLs answered 2xx with a page that has a password field in its own content
 * (`Outcome.loginForm`: not in a page header, menu, sidebar, dialog or hidden block, so a
 * site-wide login box is no login form) and whose text matches the first such page there (visible
 * text within `maxDistance` simhash bits, and the same main text, `churnFp`). Then the path is
 * walled: the engine refuses its queued URLs at dispatch (`refuse`), but for seeds and for every
 * `checkEvery`th URL, fetched as a check. A page of the path that shows anything else — no
 * password field, another text — bans the path for the run: before any evidence it only marks
 * the path as content (never walled, not kept); after, it bans it (kept), and a wall it ends is
 * lifted (`'lifted'`: the engine queues the path's refused URLs again). The password field in
 * the content is what keeps the rule off ordinary pages: a product script whose first five ids
 * were all "no longer available" shares one text too, but is no login form. Left open: a site
 * whose every page carries a login form in a block the extractor does not read as furniture (a
 * plain `<div class=popup>`) and whose first five pages under one path share one text (five
 * notices in a row) is walled until a check fetch, one in 32, shows content.
 *
 * Owns: per scope, the evidence (the first form's text and the URLs that agreed, at most
 * `minEvidence`), the walls learned (each with its first form and its refusals), the paths
 * banned after evidence, and the paths that showed content first. Never: fetch, refuse or count
 * a URL (the engine does, `CrawlCounts.loginWalled`), or clocks. A checkpoint keeps the walls and
 * bans (`export` / `import`), not the evidence: a wall read back lifts on its first check that
 * is no login form. Memory is bounded: at most `maxScopes` scopes with evidence, as many walls
 * and as many bans, and `MAX_CONTENT_SCOPES` content paths (oldest dropped).
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { evictOldest } from '../lru/index.js';
import { NEAR_DUP_DISTANCE, hamming } from '../core/simhash.js';
import { withoutQuery } from '../url/host.js';

/** Options of a `LoginWalls`. */
export interface LoginWallOptions {
  /** Distinct URLs of a path answering one login form before the path is walled. Default 5. */
  readonly minEvidence: number;
  /** Simhash bits a login form's visible text may differ from the path's first. Default 3. */
  readonly maxDistance: number;
  /** Paths with evidence, walls and bans remembered, each (oldest dropped). Default 4,096. */
  readonly maxScopes: number;
  /** Of a walled path's queued URLs, every this many-th is fetched as a check. Default 32. */
  readonly checkEvery: number;
}

const resolveWallOptions = defineOptions<LoginWallOptions>('LoginWallOptions', {
  minEvidence: numberField({ min: 2, max: 1000, integer: true, default: 5 }),
  maxDistance: numberField({ min: 0, max: 64, integer: true, default: NEAR_DUP_DISTANCE }),
  maxScopes: numberField({ min: 1, max: 1 << 20, integer: true, default: 4096 }),
  checkEvery: numberField({ min: 2, max: 1 << 20, integer: true, default: 32 }),
});

/** Paths remembered as having served content before any login form (not checkpointed). */
const MAX_CONTENT_SCOPES = 16_384;

/** A lesson as a checkpoint keeps it: the path (`scheme://authority/path`) and whether it is walled (true) or banned (false). */
export type WallRecord = readonly [path: string, walled: boolean];

const SCOPE = /^https?:\/\/[^/?#\s]+\/[^?#\s]*$/;

/** Why `r` is not a `WallRecord`, or undefined when it is one. */
export function wallRecordProblem(r: unknown): string | undefined {
  if (!Array.isArray(r) || r.length !== 2) return 'not a [path, walled] record';
  if (typeof r[0] !== 'string' || !SCOPE.test(r[0])) return `path ${JSON.stringify(r[0])} is not an http(s) origin and path without a query`;
  if (typeof r[1] !== 'boolean') return `walled ${JSON.stringify(r[1])} is not true or false`;
  return undefined;
}

/** The scope of a canonical URL: its origin and path, without query or fragment. */
export function wallScopeOf(url: string): string {
  return withoutQuery(url);
}

/** What `LoginWalls.observe` made of a page: its path walled, a wall lifted, or nothing new. */
export type WallChange = 'walled' | 'lifted' | undefined;

/** The page facts `LoginWalls.observe` reads (an `Outcome`'s). */
export interface WallPage {
  /** A password field in the page's own content (`Outcome.loginForm`). */
  readonly loginForm: boolean;
  /** The visible text's simhash (`Outcome.simhash`); none, or 0 (no text): no evidence either way. */
  readonly simhash: bigint | undefined;
  /** The main text's churn fingerprint (`Outcome.churnFp`): must match the path's first form too, when both have one. */
  readonly mainFp?: bigint | undefined;
}

/** The first login form a path answered: what later ones must match. */
interface FirstForm {
  readonly simhash: bigint;
  readonly mainFp: bigint | undefined;
}

/** Learns the paths that answer a login form whatever is asked (see the module comment). */
export class LoginWalls {
  /** The resolved options. */
  readonly options: Readonly<LoginWallOptions>;
  /** scope → the first login form's text and the distinct URLs that agreed with it. */
  readonly #evidence = new Map<string, { readonly first: FirstForm; readonly urls: Set<string> }>();
  /** Walled scope → its first login form (a check fetch with another text lifts the wall) and refusals so far. */
  readonly #walled = new Map<string, { readonly first: FirstForm | undefined; refused: number }>();
  /** Scopes banned after evidence or a wall: kept by the checkpoint. */
  readonly #banned = new Set<string>();
  /** Scopes that served a page other than a login form before any evidence: never walled, not kept. */
  readonly #content = new Set<string>();

  /** Learns nothing until observed. Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<LoginWallOptions> | null) {
    this.options = resolveWallOptions(options);
  }

  /**
   * A 2xx page fetched at `url` (canonical), whole (not cut). Returns 'walled' when this page
   * walled its path, 'lifted' when it ended a wall (its path's refused URLs may be queued again),
   * else undefined.
   */
  observe(url: string, page: WallPage): WallChange {
    if (typeof url !== 'string') throw new InvalidArgumentError(`LoginWalls.observe: expected a URL string, received ${typeof url}`);
    if (typeof page !== 'object' || page === null || typeof page.loginForm !== 'boolean' || (page.simhash !== undefined && typeof page.simhash !== 'bigint') || (page.mainFp !== undefined && typeof page.mainFp !== 'bigint')) {
      throw new InvalidArgumentError('LoginWalls.observe: expected the page as { loginForm: boolean, simhash?: bigint, mainFp?: bigint }');
    }
    const { loginForm, simhash, mainFp } = page;
    if (simhash === undefined || simhash === 0n) return undefined;
    const scope = wallScopeOf(url);
    if (this.#banned.has(scope) || this.#content.has(scope)) return undefined;
    const wall = this.#walled.get(scope);
    const ev = this.#evidence.get(scope);
    const first = wall?.first ?? ev?.first;
    if (!loginForm || (first !== undefined && !this.#sameForm(first, simhash, mainFp))) {
      if (wall === undefined && ev === undefined) {
        this.#content.add(scope);
        if (this.#content.size > MAX_CONTENT_SCOPES) evictOldest(this.#content);
        return undefined;
      }
      this.#ban(scope);
      return wall === undefined ? undefined : 'lifted';
    }
    if (wall !== undefined) return undefined;
    if (ev === undefined) {
      this.#evidence.set(scope, { first: { simhash, mainFp }, urls: new Set([url]) });
      if (this.#evidence.size > this.options.maxScopes) evictOldest(this.#evidence);
      return undefined;
    }
    ev.urls.add(url);
    if (ev.urls.size < this.options.minEvidence) return undefined;
    this.#evidence.delete(scope);
    this.#wall(scope, ev.first);
    return 'walled';
  }

  /** The walled path `url` is under, or undefined when it is under none. */
  walled(url: string): string | undefined {
    if (this.#walled.size === 0) return undefined;
    const scope = wallScopeOf(url);
    return this.#walled.has(scope) ? scope : undefined;
  }

  /**
   * Whether `url`'s queued fetch is refused: true under a wall, except every `checkEvery`th URL
   * of the path, let through as a check (a path that shows content to this visitor now lifts
   * its wall, which nothing else could do once every URL is refused).
   */
  refuse(url: string): boolean {
    if (this.#walled.size === 0) return false;
    const wall = this.#walled.get(wallScopeOf(url));
    if (wall === undefined) return false;
    wall.refused++;
    return wall.refused % this.options.checkEvery !== 0;
  }

  /** The walled paths, oldest first. */
  learned(): string[] {
    return [...this.#walled.keys()];
  }

  /** The lessons for a checkpoint: walled paths, then banned ones. */
  export(): WallRecord[] {
    return [...[...this.#walled.keys()].map((p): WallRecord => [p, true]), ...[...this.#banned].map((p): WallRecord => [p, false])];
  }

  /** Takes back `export`'s lessons. Throws `InvalidArgumentError` naming a bad record. */
  import(records: readonly WallRecord[]): void {
    if (!Array.isArray(records)) throw new InvalidArgumentError('LoginWalls.import: expected an array of [path, walled] records');
    for (const r of records) {
      const problem = wallRecordProblem(r);
      if (problem !== undefined) throw new InvalidArgumentError(`LoginWalls.import: ${problem}`);
      // A wall read back has no first form: its check fetches lift it on a page that is no login form.
      if (r[1]) {
        if (!this.#banned.has(r[0])) this.#wall(r[0], undefined);
      } else {
        this.#ban(r[0]);
      }
    }
  }

  #sameForm(first: FirstForm, simhash: bigint, mainFp: bigint | undefined): boolean {
    if (hamming(first.simhash, simhash) > this.options.maxDistance) return false;
    return first.mainFp === undefined || mainFp === undefined || first.mainFp === mainFp;
  }

  #wall(scope: string, first: FirstForm | undefined): void {
    this.#walled.set(scope, { first, refused: 0 });
    if (this.#walled.size > this.options.maxScopes) evictOldest(this.#walled);
  }

  #ban(scope: string): void {
    this.#evidence.delete(scope);
    this.#walled.delete(scope);
    this.#banned.delete(scope); // re-inserted: the most recent ban is the last evicted
    this.#banned.add(scope);
    if (this.#banned.size > this.options.maxScopes) evictOldest(this.#banned);
  }
}
