/**
 * A section's trailing slash, learned from its permanent redirects: a site that serves
 * `/blog/post/` and answers `/blog/post` with a 301 to it (Apache's DirectorySlash, Django's
 * APPEND_SLASH, static hosts' pretty URLs) — or the reverse, `/post/` to `/post` (Rails, Next.js)
 * — costs a redirect for every link written the other way: two requests for such a page.
 *
 * A section — the origin and the path's first segment when more follows it, as
 * `ParamLearner`'s scope (`/blog/` for `/blog/post` and `/blog/post/`; `/` for `/about` and
 * `/about/`) — learns *add* once `minEvidence` (3) distinct URLs answered a
 * permanent redirect (301, 308) to themselves with a slash added to the path (query unchanged),
 * and *strip* likewise for a slash removed. Then the engine takes links into the section the
 * redirects' way before they are keyed: *add* appends a slash to a path whose last segment has
 * no dot (`/blog/post`, not `/blog/logo.png`: a file is served where it is); *strip* removes it
 * from any path but the origin's root. A contradiction bans the direction for the section (and
 * unlearns it): for *add*, a page served (2xx) at a dotless path without the slash; for
 * *strip*, a page served at a slashed path (`/blog/`, the root of `/blog/x`'s listing, counts:
 * it is in the root section); for both, a redirect the other way. Temporary redirects count for nothing.
 *
 * Owns: per section met, the evidence per direction, the direction learned and the ones banned;
 * the URLs served lately (`duplicateOf`: a URL queued before its section's rule was learned is
 * refused at dispatch when the page it would redirect to was fetched).
 * Never: URL identity or scope (the engine checks a rewritten link like any other), fetching or
 * clocks. A checkpoint keeps the learned and banned directions (`export` / `import`). Bounded:
 * at most `maxSections` sections, each holding at most `minEvidence` URLs per direction.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { evictOldest } from '../lru/index.js';

/** Options of a `SlashRules`. */
export interface SlashRulesOptions {
  /** Distinct URLs redirected the same way before the section's rule is learned. Default 3. */
  readonly minEvidence: number;
  /** Sections tracked. Default 65,536. */
  readonly maxSections: number;
  /** URLs remembered as served this run, for `duplicateOf` (oldest dropped). Default 16,384. */
  readonly maxServed: number;
}

const resolveOptions = defineOptions<SlashRulesOptions>('SlashRulesOptions', {
  minEvidence: numberField({ min: 1, max: 64, integer: true, default: 3 }),
  maxSections: numberField({ min: 1, max: 1 << 24, integer: true, default: 65_536 }),
  maxServed: numberField({ min: 1, max: 1 << 24, integer: true, default: 16_384 }),
});

/** Which way a section's redirects move the trailing slash. */
export type SlashRule = 'add' | 'strip';

/** A section's rule as a checkpoint keeps it: `[section, learned or null, banned directions]`. */
export type SlashRecord = readonly [section: string, learned: SlashRule | null, banned: readonly SlashRule[]];

const SECTION = /^https?:\/\/[^/?#\s]+\/(?:[^/?#\s]+\/)?$/;
const isRule = (v: unknown): v is SlashRule => v === 'add' || v === 'strip';

/** Why `r` is not a `SlashRecord` (undefined: it is one). */
export function slashRecordProblem(r: unknown): string | undefined {
  if (!Array.isArray(r) || r.length !== 3) return 'not a [section, rule or null, banned rules] record';
  if (typeof r[0] !== 'string' || !SECTION.test(r[0])) return `section ${JSON.stringify(r[0])} is not an http(s) origin with a path of at most one segment`;
  if (r[1] !== null && !isRule(r[1])) return `rule ${JSON.stringify(r[1])} is not "add", "strip" or null`;
  if (!Array.isArray(r[2]) || r[2].length > 2 || !r[2].every(isRule)) return 'its banned rules are not a list of "add" / "strip"';
  return undefined;
}

/** A canonical http(s) URL's parts: its section, its path (from the origin's `/`) and the rest (`?…`). */
interface Parts {
  readonly section: string;
  readonly origin: string;
  readonly path: string;
  readonly query: string;
}

function partsOf(url: string): Parts | undefined {
  const scheme = url.indexOf('://');
  if (scheme <= 0) return undefined;
  const slash = url.indexOf('/', scheme + 3);
  if (slash < 0) return undefined;
  const q = url.indexOf('?', slash);
  const end = q < 0 ? url.length : q;
  // The section is read from the path without its own trailing slash, so `/a` and `/a/` are in
  // one section (the root) and `/blog/x` and `/blog/x/` in `/blog/`: a rule's two forms of a
  // URL always share a section.
  const bare = url[end - 1] === '/' && end - 1 > slash ? end - 1 : end;
  const next = url.indexOf('/', slash + 1);
  const section = next >= 0 && next < bare ? url.slice(0, next + 1) : url.slice(0, slash + 1);
  return { section, origin: url.slice(0, slash), path: url.slice(slash, end), query: url.slice(end) };
}

/** Whether the rule would move `p`'s slash: for add, a path whose last segment has no dot; for strip, a slashed path other than the origin's root. */
function applies(rule: SlashRule, p: Parts): boolean {
  if (rule === 'add') {
    if (p.path.endsWith('/')) return false;
    return !p.path.slice(p.path.lastIndexOf('/') + 1).includes('.');
  }
  return p.path.length > 1 && p.path.endsWith('/');
}

function moved(rule: SlashRule, p: Parts): string {
  return `${p.origin}${rule === 'add' ? `${p.path}/` : p.path.slice(0, -1)}${p.query}`;
}

interface SectionState {
  learned: SlashRule | undefined;
  readonly banned: Set<SlashRule>;
  /** Per direction, the distinct URLs redirected that way so far (until learned or banned). */
  readonly evidence: Map<SlashRule, Set<string>>;
}

/** A rule learned or unlearned by one answer. */
export interface SlashLesson {
  readonly section: string;
  readonly rule: SlashRule;
  readonly learned: boolean;
}

/** Learns sections' trailing-slash redirects (see the module comment). */
export class SlashRules {
  readonly options: Readonly<SlashRulesOptions>;
  readonly #sections = new Map<string, SectionState>();
  /** Sections with a learned rule: the one map `rewrite` reads. */
  readonly #rules = new Map<string, SlashRule>();
  /** URLs served (2xx) this run, oldest first: what `duplicateOf` asks. */
  readonly #served = new Set<string>();

  constructor(options?: Partial<SlashRulesOptions> | null) {
    this.options = resolveOptions(options);
  }

  /**
   * The answer to a fetch of `url` (canonical form): its status and, for a redirect, its target
   * (canonical form). Returns the rule it learned or unlearned, or undefined.
   */
  observe(url: string, status: number, location: string | undefined): SlashLesson | undefined {
    if (typeof url !== 'string') throw new InvalidArgumentError(`SlashRules.observe url must be a string, got ${typeof url}`);
    const p = partsOf(url);
    if (p === undefined) return undefined;
    if (status >= 200 && status < 300) {
      this.#served.delete(url);
      this.#served.add(url);
      if (this.#served.size > this.options.maxServed) evictOldest(this.#served);
      // A page served where a rule would have moved it: the section does not redirect it
      // (recorded before any redirect too, so a later run of them cannot outvote it).
      for (const rule of ['add', 'strip'] as const) if (applies(rule, p)) return this.#ban(p.section, rule);
      return undefined;
    }
    if ((status !== 301 && status !== 308) || location === undefined) return undefined;
    const rule: SlashRule | undefined = applies('add', p) && location === moved('add', p) ? 'add' : applies('strip', p) && location === moved('strip', p) ? 'strip' : undefined;
    if (rule === undefined) return undefined;
    const s = this.#state(p.section);
    if (s === undefined || s.banned.has(rule) || s.learned === rule) return undefined;
    const other: SlashRule = rule === 'add' ? 'strip' : 'add';
    const unlearned = s.learned === other ? this.#ban(p.section, other) : undefined;
    let urls = s.evidence.get(rule);
    if (urls === undefined) s.evidence.set(rule, (urls = new Set()));
    urls.add(url);
    if (urls.size < this.options.minEvidence) return unlearned;
    s.evidence.delete(rule);
    s.learned = rule;
    this.#rules.set(p.section, rule);
    return { section: p.section, rule, learned: true };
  }

  /** `url` (canonical form) with its slash moved by its section's rule, or undefined when none applies. */
  rewrite(url: string): string | undefined {
    // Every link of every page comes here: nothing is split until some section learned a rule.
    if (this.#rules.size === 0) return undefined;
    const p = partsOf(url);
    const rule = p === undefined ? undefined : this.#rules.get(p.section);
    return rule === undefined || !applies(rule, p!) ? undefined : moved(rule, p!);
  }

  /**
   * The page `url` would redirect to by its section's rule, when that page was served this run
   * (so refusing `url`, queued before the rule was learned, saves a redirect and loses nothing);
   * undefined otherwise.
   */
  duplicateOf(url: string): string | undefined {
    const r = this.rewrite(url);
    return r !== undefined && this.#served.has(r) ? r : undefined;
  }

  /**
   * A link taken from `original` to `rewritten` by a rule led to a page that is not there (404,
   * 410): the section does not redirect that way, so the rule is banned. Returns the unlearned
   * rule, or undefined when `rewritten` was not a rule's doing.
   */
  refuted(original: string, rewritten: string): SlashLesson | undefined {
    const p = partsOf(original);
    const rule = p === undefined ? undefined : this.#rules.get(p.section);
    return rule !== undefined && applies(rule, p!) && moved(rule, p!) === rewritten ? this.#ban(p!.section, rule) : undefined;
  }

  /** The rules learned, per section (in the order the sections were met). */
  learned(): { section: string; rule: SlashRule }[] {
    return [...this.#rules].map(([section, rule]) => ({ section, rule }));
  }

  /** What a checkpoint keeps: per section with a learned or banned rule, both (not the evidence). */
  export(): SlashRecord[] {
    const out: SlashRecord[] = [];
    for (const [section, s] of this.#sections) if (s.learned !== undefined || s.banned.size > 0) out.push([section, s.learned ?? null, [...s.banned]]);
    return out;
  }

  /**
   * Takes a checkpoint's rules back (`export`); a rule both learned and banned stays banned.
   * @throws InvalidArgumentError for a record that is not a `SlashRecord`.
   */
  import(records: readonly SlashRecord[]): void {
    for (const r of records) {
      const problem = slashRecordProblem(r);
      if (problem !== undefined) throw new InvalidArgumentError(`SlashRules.import: ${problem}`);
      const s = this.#state(r[0]);
      if (s === undefined) return;
      for (const b of r[2]) s.banned.add(b);
      if (r[1] !== null && !s.banned.has(r[1])) {
        s.learned = r[1];
        this.#rules.set(r[0], r[1]);
      }
    }
  }

  #state(section: string): SectionState | undefined {
    let s = this.#sections.get(section);
    if (s === undefined && this.#sections.size < this.options.maxSections) {
      s = { learned: undefined, banned: new Set(), evidence: new Map() };
      this.#sections.set(section, s);
    }
    return s;
  }

  #ban(section: string, rule: SlashRule): SlashLesson | undefined {
    const s = this.#state(section);
    if (s === undefined || s.banned.has(rule)) return undefined;
    s.banned.add(rule);
    s.evidence.delete(rule);
    if (s.learned !== rule) return undefined;
    s.learned = undefined;
    this.#rules.delete(section);
    return { section, rule, learned: false };
  }
}
