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
 * distinct URLs answered 2xx with a page that has a password field (`Outcome.loginForm`) and
 * whose visible text is within `maxDistance` bits (simhash) of the first such page there. Then
 * the path is walled: the engine refuses its queued URLs at dispatch (`walled`). A page of the
 * path that shows anything else — no password field, or another text — bans the path for the
 * run (and unlearns it if it was learned): the script shows this visitor content, or more than
 * one form. The password field is what keeps the rule off content pages: a product script
 * whose first five ids were all "no longer available" shares one text too, but is no login
 * form. (A site with a login box in every page's header and five such notices in a row under
 * one path would be walled; the next page there with its own text cannot unwall the URLs
 * already refused, but a resume queues them again.)
 *
 * Owns: per scope, the evidence (the first page's simhash and the URLs that agreed, at most
 * `minEvidence`), the walls learned and the paths banned. Never: fetch, refuse or count a URL
 * (the engine does, `CrawlCounts.loginWalled`), or clocks. A checkpoint keeps the learned and
 * banned paths (`export` / `import`), not the evidence. Memory is bounded: at most `maxScopes`
 * scopes with evidence, as many learned and as many banned (oldest dropped).
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { evictOldest } from '../lru/index.js';
import { NEAR_DUP_DISTANCE, hamming } from '../core/simhash.js';

/** Options of a `LoginWalls`. */
export interface LoginWallOptions {
  /** Distinct URLs of a path answering one login form before the path is walled. Default 5. */
  readonly minEvidence: number;
  /** Simhash bits a login form's visible text may differ from the path's first. Default 3. */
  readonly maxDistance: number;
  /** Paths with evidence, walls and bans remembered, each (oldest dropped). Default 4,096. */
  readonly maxScopes: number;
}

const resolveWallOptions = defineOptions<LoginWallOptions>('LoginWallOptions', {
  minEvidence: numberField({ min: 2, max: 1000, integer: true, default: 5 }),
  maxDistance: numberField({ min: 0, max: 64, integer: true, default: NEAR_DUP_DISTANCE }),
  maxScopes: numberField({ min: 1, max: 1 << 20, integer: true, default: 4096 }),
});

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
  const end = url.search(/[?#]/);
  return end < 0 ? url : url.slice(0, end);
}

/** Learns the paths that answer a login form whatever is asked (see the module comment). */
export class LoginWalls {
  /** The resolved options. */
  readonly options: Readonly<LoginWallOptions>;
  /** scope → the first login form's simhash and the distinct URLs that agreed with it. */
  readonly #evidence = new Map<string, { readonly first: bigint; readonly urls: Set<string> }>();
  readonly #walled = new Set<string>();
  readonly #banned = new Set<string>();

  /** Learns nothing until observed. Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<LoginWallOptions> | null) {
    this.options = resolveWallOptions(options);
  }

  /**
   * A 2xx page fetched at `url` (canonical), whole (not cut): whether it has a password field,
   * and its visible text's simhash (undefined: no text, no evidence either way). Returns true
   * when this page walled its path.
   */
  observe(url: string, loginForm: boolean, simhash: bigint | undefined): boolean {
    if (typeof url !== 'string') throw new InvalidArgumentError(`LoginWalls.observe: expected a URL string, received ${typeof url}`);
    if (simhash !== undefined && typeof simhash !== 'bigint') throw new InvalidArgumentError(`LoginWalls.observe: expected simhash as a bigint, received ${typeof simhash}`);
    const scope = wallScopeOf(url);
    if (this.#banned.has(scope) || simhash === undefined) return false;
    const ev = this.#evidence.get(scope);
    if (!loginForm || (ev !== undefined && hamming(ev.first, simhash) > this.options.maxDistance)) {
      this.#ban(scope);
      return false;
    }
    if (this.#walled.has(scope)) return false;
    if (ev === undefined) {
      this.#evidence.set(scope, { first: simhash, urls: new Set([url]) });
      if (this.#evidence.size > this.options.maxScopes) evictOldest(this.#evidence);
      return false;
    }
    ev.urls.add(url);
    if (ev.urls.size < this.options.minEvidence) return false;
    this.#evidence.delete(scope);
    this.#wall(scope);
    return true;
  }

  /** The walled path `url` is under, or undefined when it is under none. */
  walled(url: string): string | undefined {
    if (this.#walled.size === 0) return undefined;
    const scope = wallScopeOf(url);
    return this.#walled.has(scope) ? scope : undefined;
  }

  /** The walled paths, oldest first. */
  learned(): string[] {
    return [...this.#walled];
  }

  /** The lessons for a checkpoint: walled paths, then banned ones. */
  export(): WallRecord[] {
    return [...[...this.#walled].map((p): WallRecord => [p, true]), ...[...this.#banned].map((p): WallRecord => [p, false])];
  }

  /** Takes back `export`'s lessons. Throws `InvalidArgumentError` naming a bad record. */
  import(records: readonly WallRecord[]): void {
    if (!Array.isArray(records)) throw new InvalidArgumentError('LoginWalls.import: expected an array of [path, walled] records');
    for (const r of records) {
      const problem = wallRecordProblem(r);
      if (problem !== undefined) throw new InvalidArgumentError(`LoginWalls.import: ${problem}`);
      if (r[1]) {
        if (!this.#banned.has(r[0])) this.#wall(r[0]);
      } else {
        this.#ban(r[0]);
      }
    }
  }

  #wall(scope: string): void {
    this.#walled.add(scope);
    if (this.#walled.size > this.options.maxScopes) evictOldest(this.#walled);
  }

  #ban(scope: string): void {
    this.#evidence.delete(scope);
    this.#walled.delete(scope);
    this.#banned.add(scope);
    if (this.#banned.size > this.options.maxScopes) evictOldest(this.#banned);
  }
}
