/**
 * Crawler-trap pattern detection (DESIGN §6): the precise defense layered on the blunt
 * per-host budget and depth cap.
 *
 * Four signatures a URL can bear, each a sign that a host mints URLs faster than it serves
 * distinct content:
 *
 *   Calendar  a date more than `calendarHorizonMonths` (12) past the current month, or more
 *             than `calendarPastYears` (30) before it: the infinite "next month" walk.
 *             Dates are read from `/YYYY/MM[/DD]` segments, a segment that is exactly
 *             `YYYY-MM`, `YYYY-MM-DD` anywhere in the path, query values that are such dates,
 *             compact `YYYYMM[DD]` values of date-named parameters (`date`, `month`, `ym`…)
 *             and `year=`/`month=` pairs. Bare numbers in paths are never read as dates:
 *             eight-digit article ids would otherwise look like far-future days; and a
 *             `/YYYY/MM` pair counts toward a flag only within `flagThreshold` + 5 years of
 *             either limit (`SLASHED_DATE_SLACK_YEARS`): `/a/9101/10` is an id. A flagged
 *             host parks any date past the limits.
 *   Faceted   more than `facetLimit` (4) query parameters that are not navigation (paging,
 *             sorting, search text, language): the combinatorial filter explosion. Repeated
 *             keys count once each, so `color=a&color=b&…` stacks too.
 *   Session   a session token (src/url/session.ts: 16+ characters, letters and digits,
 *             at least 3 bits of entropy per character) in a session-like parameter
 *             (`…sess…`, `…sid`), path parameter (`;sid=…`), ASP.NET cookieless segment
 *             (`/(S(…))/`) or the segment after a session-named one (`/session/<token>/`).
 *             Canonicalization already strips the well-known names; this catches the rest.
 *             (A cookieless segment stays in the URL: the server answers the URL without it
 *             with a redirect into a new session, so a crawl keyed without it would loop.)
 *   Repeated  a path segment (not all digits) that occurs 3 or more times in one path:
 *             relative links on a page that answers any path below it (PATH_INFO, a catch-all
 *             route) mint `/docs/guide/api/guide/…` without end, each page a little different
 *             (its breadcrumb), so no soft-404 template forms — a loopback site of 4 pages ran
 *             to 3,000 fetches and 9,000 URLs in 28 s. (Nutch's default URL filter drops a
 *             segment repeated 3 times; Heritrix's PathologicalPath rule, 3 in a row.)
 *
 * Per host, each kind counts the distinct URLs bearing it; past `flagThreshold` (20) the host
 * is flagged for that kind, and from then on `passes` parks that kind's URLs while the host's
 * other URLs are admitted as before. A handful of oddly dated pages on a real site never
 * reach the threshold. A session URL counts only when it is a *copy*: the URL without its
 * token(s) (`sessionSplit`) was met before under another token. A session is a trap when the
 * site mints a new one per visit, so every page links the same pages under a new token; a site
 * that keeps one session for the whole crawl (ASP.NET's cookieless `/(S(token))/`: the first
 * request is redirected into a session and relative links stay in it) mints no copies, and
 * every one of its URLs bears a token — before, its 20th URL flagged the host and the rest of
 * the site was parked (a loopback shop of 60 products: 18 fetched, 43 parked).
 * Counters are bounded: a kind keeps at most `flagThreshold` URL ids and drops them once
 * flagged; the session rule also remembers, per host, the token of the latest
 * `MAX_SESSION_PATHS` (256; `MAX_SESSION_PATHS_TOTAL` over every host) token-stripped URLs until the host is flagged for sessions, so a
 * host costs O(4 · flagThreshold) numbers and at most that many strings.
 *
 * Pure given its inputs: the only clock is the `nowHours` (epoch hours) the caller passes,
 * so a replay of the same observations gives the same flags.
 */
import type { KeyArray } from '../core/keys.js';
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { isSessionLikeName, looksLikeSessionToken } from '../url/session.js';
import { checkHostRef, checkKeyArg } from './args.js';
import type { HostRef } from './soft404.js';

/** The trap signature a URL bears. */
export const PatternKind = {
  None: 0,
  /** A date past the crawl horizon or far in the past: the infinite calendar. */
  Calendar: 1,
  /** Stacked filter parameters: the facet explosion. */
  Faceted: 2,
  /** A session token: a fresh identity per visit for one page. */
  Session: 3,
  /** A path segment repeated: relative links under a catch-all path. */
  Repeated: 4,
} as const;
/** One of the `PatternKind` values: 0 None, 1 Calendar, 2 Faceted, 3 Session, 4 Repeated. */
export type PatternKind = (typeof PatternKind)[keyof typeof PatternKind];

/** Names of the pattern kinds, indexed by value. */
export const PATTERN_KIND_NAMES: readonly string[] = ['None', 'Calendar', 'Faceted', 'Session', 'Repeated'];

/** Options of a `TrapDetector`. */
export interface TrapDetectorOptions {
  /** Months past the current month a dated URL may point. Default 12. */
  readonly calendarHorizonMonths: number;
  /** Years before the current month a dated URL may point. Default 30. */
  readonly calendarPastYears: number;
  /** Non-navigation query parameters a URL may stack. Default 4. */
  readonly facetLimit: number;
  /**
   * Distinct URLs of one kind that flag a host for that kind. Default 20. It also widens the
   * window of `/YYYY/MM` pairs read as dates (this many years and 5 more past either limit).
   */
  readonly flagThreshold: number;
}

const resolveTrapOptions = defineOptions<TrapDetectorOptions>('TrapDetectorOptions', {
  calendarHorizonMonths: numberField({ min: 0, max: 1200, integer: true, default: 12 }),
  calendarPastYears: numberField({ min: 0, max: 1000, integer: true, default: 30 }),
  facetLimit: numberField({ min: 1, max: 1000, integer: true, default: 4 }),
  flagThreshold: numberField({ min: 1, max: 1 << 16, integer: true, default: 20 }),
});

/** What `TrapDetector.observe` reports. */
export interface TrapObservation {
  /** The URL's signature (the first of calendar, session, faceted, repeated it bears), or None. */
  readonly kind: PatternKind;
  /** True exactly once per host: on the observation that first made it a suspect. */
  readonly becameSuspect: boolean;
}

/** Which kinds a host is flagged for. */
export interface TrapFlags {
  /** Flagged for dates past the horizon or too far back (its calendar URLs are parked). */
  readonly calendar: boolean;
  /** Flagged for stacked filter parameters (its over-faceted URLs are parked). */
  readonly faceted: boolean;
  /** Flagged for session tokens (its tokenized URLs are parked). */
  readonly session: boolean;
  /** Flagged for repeated path segments (its URLs with one are parked). */
  readonly repeated: boolean;
}

const CALENDAR = 1;
const FACETED = 2;
const SESSION = 4;
const REPEATED = 8;
/** Occurrences of one path segment that make a URL bear the Repeated signature. */
const REPEAT_LIMIT = 3;

/** Parameters that page, sort, search or localize a listing: not facets. */
const NAVIGATION_PARAMS = new Set([
  'page', 'p', 'pg', 'pagenum', 'page_num', 'paged', 'start', 'offset', 'limit', 'per_page', 'perpage', 'pagesize',
  'page_size', 'count', 'sort', 'sortby', 'sort_by', 'order', 'orderby', 'order_by', 'dir', 'direction', 'q', 'query',
  'search', 's', 'lang', 'hl', 'locale', 'view',
]);
/** Parameters whose compact `YYYYMM[DD]` value is a date. */
const DATE_PARAMS = new Set([
  'date', 'd', 'day', 'month', 'm', 'mon', 'ym', 'yearmonth', 'period', 'cal', 'calendar', 'start', 'end', 'from', 'to', 'week',
]);
const YEAR_PARAMS = new Set(['year', 'yr', 'y']);
const MONTH_PARAMS = new Set(['month', 'mon', 'm', 'mo']);

const PATH_YEAR_MONTH = /\/(\d{4})\/(\d{2})(?=\/|$)/g;
const PATH_YEAR_DASH_MONTH = /\/(\d{4})-(\d{2})(?=\/|$)/g;
const ISO_DAY = /(?:^|\D)(\d{4})-(\d{2})-(\d{2})(?!\d)/g;
const VALUE_DATE = /^(\d{4})[-/.]?(\d{2})(?:[-/.]?(\d{2}))?$/;
const ASP_COOKIELESS = /\/\([A-Z]\(([^()/]*)\)\)/g;

/**
 * The calendar horizon as month indices (year · 12 + month − 1), derived from `nowHours`: `min`
 * and `max` bound a date a URL may name; `readMin` and `readMax` bound the `/YYYY/MM` pairs read
 * as dates (`SLASHED_DATE_SLACK_YEARS`; ±Infinity on a host flagged for calendar).
 */
interface Horizon {
  readonly min: number;
  readonly max: number;
  readonly readMin: number;
  readonly readMax: number;
}

/**
 * Years past either calendar limit, on top of `flagThreshold`, within which a `/YYYY/MM` pair of
 * path segments counts toward a calendar flag. Two numbers between slashes are as often an id and
 * a number: StackExchange's share link `/a/9101/10` (answer 9101, user 10), a forum post
 * `/t/topic/1234/10`, a photo `/album/4521/11`. Read as October 9101, 1234 or 4521, twenty such
 * URLs flagged their host and the rest were parked as calendar pages (a loopback Q&A site: 117
 * share links). A walk that starts inside the limits and steps a year or less per page is flagged
 * within `flagThreshold` years of them (sooner by month or day), after which its host's calendar
 * URLs are parked, so the window loses none of those; a walk by `/YYYY/MM` that starts further out
 * (a sentinel `/cal/9999/12` walked back) or strides more than a year per page is left to the
 * per-host URL budget. Dates spelled as dates (`YYYY-MM-DD`, `YYYY-MM`, date-named query values,
 * `year=`) are read whatever the year: `?date=1970-01-01` walked back is a walk.
 */
const SLASHED_DATE_SLACK_YEARS = 5;

function validDay(d: string | undefined): boolean {
  if (d === undefined) return true;
  const n = +d;
  return n >= 1 && n <= 31;
}

/** Month index of (year, month), or -1 when the month (or day) is not a real one. */
function monthIndex(year: string, month: string, day?: string): number {
  const m = +month;
  if (!(m >= 1 && m <= 12) || !validDay(day)) return -1;
  return +year * 12 + m - 1;
}

/** Whether month index `mi` (−1: no real month) is past the horizon or before its past limit. */
function outside(mi: number, h: Horizon): boolean {
  return mi >= 0 && (mi > h.max || mi < h.min);
}

/** Splits a canonical URL's path and query (without '?'); tolerant of any string. */
function splitUrl(url: string): { path: string; query: string } {
  const scheme = url.indexOf('://');
  const pathStart = scheme < 0 ? 0 : url.indexOf('/', scheme + 3);
  if (pathStart < 0) return { path: '/', query: '' };
  const hash = url.indexOf('#', pathStart);
  const end = hash < 0 ? url.length : hash;
  const q = url.indexOf('?', pathStart);
  if (q < 0 || q > end) return { path: url.slice(pathStart, end), query: '' };
  return { path: url.slice(pathStart, q), query: url.slice(q + 1, end) };
}

function pathCalendar(path: string, h: Horizon): boolean {
  for (const re of [PATH_YEAR_MONTH, PATH_YEAR_DASH_MONTH, ISO_DAY]) {
    re.lastIndex = 0;
    for (let m = re.exec(path); m !== null; m = re.exec(path)) {
      const mi = monthIndex(m[1]!, m[2]!, m[3]);
      // A /YYYY/MM pair is read only within reach of a watched walk (SLASHED_DATE_SLACK_YEARS).
      if (outside(mi, h) && (re !== PATH_YEAR_MONTH || (mi >= h.readMin && mi <= h.readMax))) return true;
      // Step back so a date that starts right after this one's last digit is still found.
      re.lastIndex = m.index + 1;
    }
  }
  return false;
}

/**
 * The session token(s) `canonUrl` carries and the URL without them (each token taken out, its
 * name or segment left), for a URL `mask` found a session signature in: what tells a copy under
 * another token (`TrapDetector.observe`) from a page of one session. The places are
 * `pathSession`'s and `queryMask`'s: an ASP.NET cookieless segment, a session-named path
 * parameter, the segment after a session-named one, a session-named query key.
 */
export function sessionSplit(canonUrl: string): { readonly rest: string; readonly token: string } {
  const { path, query } = splitUrl(canonUrl);
  const scheme = canonUrl.indexOf('://');
  const at = scheme < 0 ? 0 : canonUrl.indexOf('/', scheme + 3);
  const origin = at < 0 ? canonUrl : canonUrl.slice(0, at);
  const tokens: string[] = [];
  let p = path.includes('(')
    ? path.replace(ASP_COOKIELESS, (all: string, t: string) => {
        if (!looksLikeSessionToken(t)) return all;
        tokens.push(t);
        return all.slice(0, all.length - t.length - 2) + '))';
      })
    : path;
  const segs = p.split('/');
  for (let i = 1; i < segs.length; i++) {
    const seg = segs[i]!;
    const semi = seg.indexOf(';');
    if (semi >= 0) {
      const kept = seg
        .slice(semi + 1)
        .split(';')
        .map((param) => {
          const eq = param.indexOf('=');
          if (eq <= 0 || !isSessionLikeName(param.slice(0, eq).toLowerCase()) || !looksLikeSessionToken(param, eq + 1)) return param;
          tokens.push(param.slice(eq + 1));
          return param.slice(0, eq + 1);
        });
      segs[i] = `${seg.slice(0, semi)};${kept.join(';')}`;
    }
    if (i > 1 && isSessionLikeName(segs[i - 1]!.toLowerCase()) && looksLikeSessionToken(seg)) {
      tokens.push(seg);
      segs[i] = '';
    }
  }
  p = segs.join('/');
  const pairs = query === '' ? [] : query.split('&');
  const q = pairs.map((pair) => {
    const eq = pair.indexOf('=');
    if (eq <= 0 || !isSessionLikeName(pair.slice(0, eq).toLowerCase()) || !looksLikeSessionToken(pair, eq + 1)) return pair;
    tokens.push(pair.slice(eq + 1));
    return pair.slice(0, eq + 1);
  });
  return { rest: `${origin}${p}${q.length === 0 ? '' : `?${q.join('&')}`}`, token: tokens.join(' ') };
}

/** Token-stripped URLs whose token a host's session rule remembers (the oldest forgotten first). */
const MAX_SESSION_PATHS = 256;
/**
 * Token-stripped URLs remembered over every host. Past it a host not yet remembering any counts
 * its session URLs as the rule did before copies were asked for (every distinct URL), so memory
 * stays bounded (~200 bytes an entry: ≈ 6.5 MB) and a session-minting trap is still flagged. A
 * review measured 400 MB for 1,000 hosts each keeping one session over 1,024 URLs, unbounded.
 */
const MAX_SESSION_PATHS_TOTAL = 32_768;

function pathSession(path: string, segs: readonly string[]): boolean {
  if (path.includes('(')) {
    ASP_COOKIELESS.lastIndex = 0;
    for (let m = ASP_COOKIELESS.exec(path); m !== null; m = ASP_COOKIELESS.exec(path)) {
      if (looksLikeSessionToken(m[1]!)) return true;
    }
  }
  for (let i = 1; i < segs.length; i++) {
    const seg = segs[i]!;
    const semi = seg.indexOf(';');
    if (semi >= 0) {
      for (const param of seg.slice(semi + 1).split(';')) {
        const eq = param.indexOf('=');
        if (eq > 0 && isSessionLikeName(param.slice(0, eq).toLowerCase()) && looksLikeSessionToken(param, eq + 1)) return true;
      }
    }
    if (i > 1 && isSessionLikeName(segs[i - 1]!.toLowerCase()) && looksLikeSessionToken(seg)) return true;
  }
  return false;
}

/** Paths up to this many segments are scanned pairwise (no allocation); longer ones counted in a map. */
const PAIRWISE_SEGMENTS = 32;

/** Whether a segment that is not all digits occurs `REPEAT_LIMIT` times in the path split at `/`. */
function pathRepeated(segs: readonly string[]): boolean {
  if (segs.length <= REPEAT_LIMIT) return false;
  const counts = segs.length > PAIRWISE_SEGMENTS ? new Map<string, number>() : undefined;
  for (let i = 1; i < segs.length; i++) {
    const seg = segs[i]!;
    if (seg === '' || /^\d+$/.test(seg)) continue;
    let n: number;
    if (counts !== undefined) {
      // A hostile path of a thousand segments costs a thousand steps, not half a million.
      n = (counts.get(seg) ?? 0) + 1;
      counts.set(seg, n);
    } else {
      n = 1;
      for (let j = i + 1; j < segs.length && n < REPEAT_LIMIT; j++) if (segs[j] === seg) n++;
    }
    if (n >= REPEAT_LIMIT) return true;
  }
  return false;
}

/** Bits of the query's violations (calendar, faceted, session). */
function queryMask(query: string, h: Horizon, facetLimit: number): number {
  if (query === '') return 0;
  let mask = 0;
  let facets = 0;
  let year: string | undefined;
  let month: string | undefined;
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const key = (eq < 0 ? pair : pair.slice(0, eq)).toLowerCase();
    const value = eq < 0 ? '' : pair.slice(eq + 1);
    if (!NAVIGATION_PARAMS.has(key)) facets++;
    if (value === '') continue;
    if (isSessionLikeName(key) && looksLikeSessionToken(value)) mask |= SESSION;
    if (YEAR_PARAMS.has(key) && /^\d{4}$/.test(value)) year = value;
    else if (MONTH_PARAMS.has(key) && /^\d{1,2}$/.test(value)) month = value;
    const d = VALUE_DATE.exec(value);
    if (d !== null && (/\D/.test(d[0]) || DATE_PARAMS.has(key))) {
      if (outside(monthIndex(d[1]!, d[2]!, d[3]), h)) mask |= CALENDAR;
    }
  }
  if (year !== undefined) {
    const m = month === undefined ? -1 : +month;
    // A year alone is past the horizon only if its January is, and too old only if its December is.
    const future = +year * 12 + (m >= 1 && m <= 12 ? m - 1 : 0);
    const past = +year * 12 + (m >= 1 && m <= 12 ? m - 1 : 11);
    if (future > h.max || past < h.min) mask |= CALENDAR;
  }
  if (facets > facetLimit) mask |= FACETED;
  return mask;
}

interface TrapHost {
  /** Kinds flagged (CALENDAR | FACETED | SESSION | REPEATED bits). */
  flagged: number;
  /** Distinct URL ids per kind, until that kind is flagged (for sessions: copies under another token only). */
  readonly seen: (Set<number> | undefined)[];
  /** Token-stripped URL → the token(s) it was first met with (`sessionSplit`), until the host is flagged for sessions. */
  sessions: Map<string, string> | undefined;
}

const BIT_OF_SLOT = [CALENDAR, FACETED, SESSION, REPEATED] as const;

function kindOf(mask: number): PatternKind {
  if (mask & CALENDAR) return PatternKind.Calendar;
  if (mask & SESSION) return PatternKind.Session;
  if (mask & FACETED) return PatternKind.Faceted;
  if (mask & REPEATED) return PatternKind.Repeated;
  return PatternKind.None;
}

/** Recognizes calendar, faceted, session-id and repeated-segment traps per host and tightens admission for flagged hosts. */
export class TrapDetector {
  /** The resolved options. */
  readonly options: Readonly<TrapDetectorOptions>;
  private readonly hosts = new Map<HostRef, TrapHost>();
  /** Entries of every host's `sessions` (at most `MAX_SESSION_PATHS_TOTAL`). */
  private sessionEntries = 0;
  /** The `nowHours` the cached horizon is for; NaN (equal to nothing) until the first call. */
  private horizonHours = Number.NaN;
  private horizon: Horizon = { min: 0, max: 0, readMin: 0, readMax: 0 };
  /** `horizon` reading a `/YYYY/MM` pair of any year (set with it; unused before the first call): what a host flagged for calendar parks. */
  private wideHorizon: Horizon = { min: 0, max: 0, readMin: -Infinity, readMax: Infinity };

  /** A detector with no host flagged. Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<TrapDetectorOptions> | null) {
    this.options = resolveTrapOptions(options);
  }

  private horizonAt(nowHours: number, where: string, wide: boolean): Horizon {
    if (nowHours === this.horizonHours) return wide ? this.wideHorizon : this.horizon;
    if (typeof nowHours !== 'number' || !Number.isFinite(nowHours) || nowHours < 0) {
      throw new InvalidArgumentError(`${where}: expected nowHours as non-negative epoch hours, received ${String(nowHours)}`);
    }
    const d = new Date(nowHours * 3_600_000);
    const now = d.getUTCFullYear() * 12 + d.getUTCMonth();
    const min = now - this.options.calendarPastYears * 12;
    const max = now + this.options.calendarHorizonMonths;
    const slack = (this.options.flagThreshold + SLASHED_DATE_SLACK_YEARS) * 12;
    this.horizon = { min, max, readMin: min - slack, readMax: max + slack };
    this.wideHorizon = { min, max, readMin: -Infinity, readMax: Infinity };
    this.horizonHours = nowHours;
    return wide ? this.wideHorizon : this.horizon;
  }

  /**
   * The signatures `canonUrl` bears at `nowHours`. `wide`: a date however far past the limits
   * (what a flagged host parks); else a `/YYYY/MM` pair only within reach of a watched walk (what
   * counts toward a flag, `SLASHED_DATE_SLACK_YEARS`).
   */
  private mask(canonUrl: string, nowHours: number, where: string, wide = false): number {
    if (typeof canonUrl !== 'string') throw new InvalidArgumentError(`${where}: expected a canonical URL string, received ${typeof canonUrl}`);
    const h = this.horizonAt(nowHours, where, wide);
    const { path, query } = splitUrl(canonUrl);
    let mask = queryMask(query, h, this.options.facetLimit);
    if (pathCalendar(path, h)) mask |= CALENDAR;
    // Split once for both path rules: every discovered link comes here.
    const segs = path.split('/');
    if (pathSession(path, segs)) mask |= SESSION;
    if (pathRepeated(segs)) mask |= REPEATED;
    return mask;
  }

  /**
   * The trap signature of one canonical URL at `nowHours` (epoch hours) that counts toward its
   * host's flag, or None. When a URL bears several, calendar is named before session before
   * faceted before repeated; `passes` still checks each rule on its own. A `/YYYY/MM` pair further
   * past the limits than a watched walk could reach is no calendar signature here (an id:
   * `/a/9101/10`), but a host flagged for calendar parks it (`passes`).
   */
  violation(canonUrl: string, nowHours: number): PatternKind {
    return kindOf(this.mask(canonUrl, nowHours, 'TrapDetector.violation'));
  }

  /**
   * Folds one discovery (URL key `i` of `key`, on `hostKey`) into the host's counters and
   * reports its signature and whether the host became a suspect on this observation. The
   * same URL observed again does not count twice.
   */
  observe(hostKey: HostRef, key: KeyArray, canonUrl: string, nowHours: number, i = 0): TrapObservation {
    checkHostRef(hostKey, 'TrapDetector.observe');
    const b = checkKeyArg(key, i, 'TrapDetector.observe');
    const mask = this.mask(canonUrl, nowHours, 'TrapDetector.observe');
    const kind = kindOf(mask);
    if (mask === 0) return { kind, becameSuspect: false };
    let host = this.hosts.get(hostKey);
    if (host === undefined) {
      host = { flagged: 0, seen: [undefined, undefined, undefined, undefined], sessions: undefined };
      this.hosts.set(hostKey, host);
    }
    const wasSuspect = host.flagged !== 0;
    // A URL's id: its PathKey's low 53 bits (a collision can only delay a flag, never cause one).
    const id = key[b + 2]! + (key[b + 3]! & 0x1fffff) * 0x1_0000_0000;
    for (let slot = 0; slot < BIT_OF_SLOT.length; slot++) {
      const bit = BIT_OF_SLOT[slot]!;
      if ((mask & bit) === 0 || (host.flagged & bit) !== 0) continue;
      // A session URL counts only as a copy of one met under another token (the module comment).
      if (bit === SESSION && !this.sessionCopy(host, canonUrl)) continue;
      const seen = (host.seen[slot] ??= new Set());
      seen.add(id);
      if (seen.size >= this.options.flagThreshold) {
        host.flagged |= bit;
        host.seen[slot] = undefined;
        if (bit === SESSION) {
          this.sessionEntries -= host.sessions?.size ?? 0;
          host.sessions = undefined;
        }
      }
    }
    return { kind, becameSuspect: !wasSuspect && host.flagged !== 0 };
  }

  /**
   * Whether session URL `canonUrl` is a copy: the URL without its token was met before under
   * another token. Remembers the first token of each token-stripped URL (the latest
   * `MAX_SESSION_PATHS`; one forgotten is met afresh, which can only delay a flag).
   */
  private sessionCopy(host: TrapHost, canonUrl: string): boolean {
    // Past the bound over every host, a host remembering none counts every session URL.
    if (host.sessions === undefined && this.sessionEntries >= MAX_SESSION_PATHS_TOTAL) return true;
    const { rest, token } = sessionSplit(canonUrl);
    const sessions = (host.sessions ??= new Map());
    const first = sessions.get(rest);
    if (first !== undefined) return first !== token;
    sessions.set(rest, token);
    if (sessions.size > MAX_SESSION_PATHS) sessions.delete(sessions.keys().next().value!);
    else this.sessionEntries++;
    return false;
  }

  /**
   * The admission heuristic behind `admit`'s `passesHeuristics`: a host that is not a
   * suspect passes everything; a flagged host passes a URL unless the URL bears a signature
   * the host is flagged for (its calendar pages are parked, however far out their dates — a walk
   * that jumps past what counts toward a flag is still the walk — its articles still admitted).
   */
  passes(hostKey: HostRef, canonUrl: string, nowHours: number): boolean {
    const host = this.hosts.get(hostKey);
    if (host === undefined || host.flagged === 0) return true;
    return (this.mask(canonUrl, nowHours, 'TrapDetector.passes', true) & host.flagged) === 0;
  }

  /** Which kinds the host is flagged for. */
  flags(hostKey: HostRef): TrapFlags {
    const f = this.hosts.get(hostKey)?.flagged ?? 0;
    return { calendar: (f & CALENDAR) !== 0, faceted: (f & FACETED) !== 0, session: (f & SESSION) !== 0, repeated: (f & REPEATED) !== 0 };
  }

  /** Whether the host is flagged for any kind. */
  suspect(hostKey: HostRef): boolean {
    return (this.hosts.get(hostKey)?.flagged ?? 0) !== 0;
  }

  /** URL ids held for a host across kinds (for memory bounds and tests; the session rule's remembered tokens apart: `sessionPaths`). */
  trackedUrls(hostKey: HostRef): number {
    const h = this.hosts.get(hostKey);
    return h === undefined ? 0 : h.seen.reduce((n, s) => n + (s?.size ?? 0), 0);
  }

  /** Token-stripped URLs whose first token the session rule holds for a host (at most 256; none once flagged for sessions). */
  sessionPaths(hostKey: HostRef): number {
    return this.hosts.get(hostKey)?.sessions?.size ?? 0;
  }
}
