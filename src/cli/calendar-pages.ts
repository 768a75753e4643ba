/**
 * Calendar pages that show nothing but their date, said at the end of a crawl. An events calendar
 * links each month and day to the next and the previous one: a loopback club site of 12 events
 * cost 1,354 requests, 1,295 of them day pages reading "No events scheduled" — bounded only by the
 * calendar horizon (12 months ahead) and the depth cap behind. The summary names such a calendar
 * and an `--exclude` that skips its dates, so the user can decide.
 *
 * Never changes what is crawled: an empty month does not end a calendar the way an empty page ends
 * a listing (`PagingEnd`), and an event past a gap, linked only through the calendar, would be
 * lost by a rule that stopped there.
 *
 * A page counts when it was fetched OK with its whole body (not a sitemap) and its path holds a
 * date (`2026-12`, `2026-12-07`, `2026/12/07`), or else a query value is one, whole: its *series*
 * is its URL with the date as its shape (`/events/{YYYY-MM-DD}/`, `/calendar/day?date={YYYY-MM-DD}`,
 * every date value of the query so: `?from={YYYY-MM-DD}&to={YYYY-MM-DD}`; months and days are two
 * series, in one folder too); it *repeats* when its body, less its ASCII digits (`PagingEnd`'s
 * signature), equals an earlier page's of the series. A series is named when at least
 * `MIN_REPEATS` of its pages repeated, half of them at least. The `--exclude` hint is the series'
 * URL with each digit of its dates as `[0-9]` and the query's `?` as `[?]` (a glob's `?` is any
 * character), given only when nothing else in the URL is glob syntax or a quote. Query dates were
 * not read at first: a loopback club site's day view `/calendar/day?date=…` made 1,325 of its
 * 1,385 requests while the summary named only its 46 month pages (the days' glob now named first:
 * 76 requests with it, its 10 events fetched).
 *
 * Owns: per series, the pages counted and up to `MAX_SIGNATURES` signatures, in two maps: series
 * with fewer than `MIN_REPEATS` repeats (at most `MAX_SERIES`, the least recently observed out
 * first) and those past it (at most `MAX_CALENDARS`, likewise), so a dated blog's posts, a series
 * each, never push a calendar out. Never: fetch, or read a page twice.
 */
import type { Page } from '../engine/index.js';
// PagingEnd's signature, from its module: not part of the package's surface.
import { digitlessHash } from '../dedup/paging.js';
import { evictOldest } from '../lru/index.js';

/** Series with fewer than `MIN_REPEATS` repeats remembered (least recently observed out first). */
const MAX_SERIES = 1024;
/** Series past `MIN_REPEATS` remembered (least recently observed out first). */
const MAX_CALENDARS = 64;
/** Signatures kept per series (a calendar printing weekday and month names has 84 empty-page forms). */
const MAX_SIGNATURES = 256;
/** Repeated pages before a series is named (and half its pages at least). */
const MIN_REPEATS = 20;
/** Series named in the summary. */
const MAX_NAMED = 3;

/** A year 1900–2099, a month, and optionally a day, in one path segment or three (`/2026/12/07`). */
const DATE = /(?<![0-9])(?:19|20)[0-9]{2}([-/])(?:0[1-9]|1[0-2])(?:\1(?:0[1-9]|[12][0-9]|3[01]))?(?![0-9])/;
/** A query value that is such a date, whole. */
const DATE_VALUE = new RegExp(`^(?:${DATE.source})$`);
/** Characters a glob reads as syntax (picomatch), and the shell's quote: a URL holding one gets no `--exclude` hint. */
const NO_HINT = /[*?[\]{}()!@+|\\']/;

/** A calendar the crawl walked, as the summary names it. */
export interface CalendarSeries {
  /** The URL with its date as its shape: `https://example.com/events/{YYYY-MM-DD}/`. */
  readonly series: string;
  /** Pages of the series fetched OK, with their whole body. */
  readonly pages: number;
  /** Of them, pages whose body was an earlier one's but for its digits. */
  readonly repeats: number;
  /** An `--exclude` glob matching the series' dates only, when its URL allows one. */
  readonly exclude: string | undefined;
}

interface Tally {
  pages: number;
  repeats: number;
  readonly signatures: Set<number>;
  readonly exclude: string | undefined;
}

/** The page's date series and the glob of its dates (see the module comment), or undefined when neither its path nor a query value holds a date. */
export function dateSeriesOf(url: string): { series: string; exclude: string | undefined } | undefined {
  // Most pages hold no date anywhere: no URL object for them (this runs for every page fetched).
  if (!DATE.test(url)) return undefined;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const m = DATE.exec(u.pathname);
  if (m === null) return querySeriesOf(u);
  const before = `${u.origin}${u.pathname.slice(0, m.index)}`;
  const after = u.pathname.slice(m.index + m[0].length);
  return {
    series: `${before}{${shapeOf(m)}}${after}${u.search}`,
    exclude: NO_HINT.test(before + after + u.search.slice(1)) ? undefined : `${before}${digitGlob(m[0])}${after}${queryGlob(u.search.slice(1))}`,
  };
}

/** A query (without its `?`) as glob text: `[?]` and the query (a glob's `?` is any character), or nothing for none. */
function queryGlob(query: string): string {
  return query === '' ? '' : `[?]${query}`;
}

/** `YYYY-MM-DD`, `YYYY/MM` …: the shape of a date matched by `DATE` (its separator is group 1). */
function shapeOf(m: RegExpExecArray): string {
  return ['YYYY', 'MM', 'DD'].slice(0, m[0].split(m[1]!).length).join(m[1]);
}

/** `text` with each ASCII digit as the glob class `[0-9]`. */
function digitGlob(text: string): string {
  return text.replace(/[0-9]/g, '[0-9]');
}

/** `dateSeriesOf` for a URL whose path holds no date: its query values that are dates, or undefined when none is. */
function querySeriesOf(u: URL): { series: string; exclude: string | undefined } | undefined {
  const pairs = u.search.slice(1).split('&');
  const series: string[] = [];
  const glob: string[] = [];
  let dated = false;
  for (const pair of pairs) {
    const eq = pair.indexOf('=') + 1;
    const m = eq === 0 ? null : DATE_VALUE.exec(pair.slice(eq));
    series.push(m === null ? pair : `${pair.slice(0, eq)}{${shapeOf(m)}}`);
    glob.push(m === null ? pair : `${pair.slice(0, eq)}${digitGlob(m[0])}`);
    if (m !== null) dated = true;
  }
  if (!dated) return undefined;
  const path = `${u.origin}${u.pathname}`;
  return {
    series: `${path}?${series.join('&')}`,
    exclude: NO_HINT.test(path + pairs.join('&')) ? undefined : `${path}${queryGlob(glob.join('&'))}`,
  };
}

/** See the module comment. */
export class CalendarRepeats {
  /** Series below `MIN_REPEATS` repeats, least recently observed first. */
  readonly #cold = new Map<string, Tally>();
  /** Series past it, least recently observed first. */
  readonly #hot = new Map<string, Tally>();

  /** Counts `page` when it is a calendar page (see the module comment). */
  observe(page: Page): void {
    if (!page.ok || page.body === undefined || page.body.length === 0 || page.truncated || page.sitemap) return;
    const at = dateSeriesOf(page.url);
    if (at === undefined) return;
    const tally = this.#hot.get(at.series) ?? this.#cold.get(at.series) ?? { pages: 0, repeats: 0, signatures: new Set<number>(), exclude: at.exclude };
    tally.pages++;
    const signature = digitlessHash(page.body);
    if (tally.signatures.has(signature)) tally.repeats++;
    else if (tally.signatures.size < MAX_SIGNATURES) tally.signatures.add(signature);
    this.#cold.delete(at.series);
    this.#hot.delete(at.series);
    const into = tally.repeats >= MIN_REPEATS ? this.#hot : this.#cold;
    into.set(at.series, tally);
    if (into.size > (into === this.#hot ? MAX_CALENDARS : MAX_SERIES)) evictOldest(into);
  }

  /** The series walked page after repeated page, most repeats first (at most `MAX_NAMED`). */
  named(): CalendarSeries[] {
    return [...this.#hot]
      .filter(([, t]) => t.repeats * 2 >= t.pages)
      .sort((a, b) => b[1].repeats - a[1].repeats)
      .slice(0, MAX_NAMED)
      .map(([series, t]) => ({ series, pages: t.pages, repeats: t.repeats, exclude: t.exclude }));
  }
}

/** The summary line naming the calendars, or undefined when there are none. */
export function calendarLine(named: readonly CalendarSeries[], int: (n: number) => string): string | undefined {
  if (named.length === 0) return undefined;
  const each = named.map((c) => `${int(c.repeats)} of ${int(c.pages)} pages at ${c.series} were an earlier one's but for their digits${c.exclude === undefined ? '' : ` (--exclude '${c.exclude}' skips its pages, ${int(c.pages)} fetched)`}`);
  return `  calendar  ${each.join('; ')}: a calendar walked date by date, none of its pages skipped for it (a date past a gap may be the only way to an event)`;
}
