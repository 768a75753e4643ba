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
 * A page counts when it was fetched OK with a body and its path holds a date (`2026-12`,
 * `2026-12-07`, `2026/12/07`): its *series* is its origin and path with the date as `{date}`
 * (`/events/{date}/`; months and days are two series); it *repeats* when its body, less its ASCII
 * digits (`PagingEnd`'s signature), equals an earlier page's of the series. A series is named when
 * at least `MIN_REPEATS` of its pages repeated, half of them at least.
 *
 * Owns: per series, the pages counted and up to `MAX_SIGNATURES` signatures (the most recent
 * `MAX_SERIES` series). Never: fetch, or read a page twice.
 */
import type { Page } from '../engine/index.js';
import { digitlessHash } from '../dedup/index.js';
import { lruSet } from '../lru/index.js';

/** Series remembered (least recently observed out first). */
const MAX_SERIES = 1024;
/** Signatures kept per series (a calendar printing weekday and month names has 84 empty-page forms). */
const MAX_SIGNATURES = 256;
/** Repeated pages before a series is named (and half its pages at least). */
const MIN_REPEATS = 20;
/** Series named in the summary. */
const MAX_NAMED = 3;

/** A year 1900–2099, a month, and optionally a day, in one path segment or three (`/2026/12/07`). */
const DATE = /(?<![0-9])(?:19|20)[0-9]{2}([-/])(?:0[1-9]|1[0-2])(?:\1(?:0[1-9]|[12][0-9]|3[01]))?(?![0-9])/;
/** Characters a glob reads as syntax (picomatch): a path holding one gets no `--exclude` hint. */
const GLOB_SYNTAX = /[*?[\]{}()!@+|\\]/;

/** A calendar the crawl walked, as the summary names it. */
export interface CalendarSeries {
  /** Origin and path with the date as `{date}`: `https://example.com/events/{date}/`. */
  readonly series: string;
  /** Pages of the series fetched OK. */
  readonly pages: number;
  /** Of them, pages whose body was an earlier one's but for its digits. */
  readonly repeats: number;
  /** An `--exclude` glob matching the series' dates only, when its path allows one. */
  readonly exclude: string | undefined;
}

interface Tally {
  pages: number;
  repeats: number;
  readonly signatures: Set<number>;
  readonly exclude: string | undefined;
}

/** The page's date series and the glob of its dates, or undefined when its path holds no date. */
export function dateSeriesOf(url: string): { series: string; exclude: string | undefined } | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const m = DATE.exec(u.pathname);
  if (m === null) return undefined;
  const before = u.pathname.slice(0, m.index);
  const after = u.pathname.slice(m.index + m[0].length);
  const plain = !GLOB_SYNTAX.test(u.origin + before + after);
  return {
    series: `${u.origin}${before}{date}${after}`,
    exclude: plain ? `${u.origin}${before}${m[0].replace(/[0-9]/g, '[0-9]')}${after}` : undefined,
  };
}

/** See the module comment. */
export class CalendarRepeats {
  readonly #series = new Map<string, Tally>();

  /** Counts `page` when it is a calendar page (see the module comment). */
  observe(page: Page): void {
    if (!page.ok || page.body === undefined || page.body.length === 0) return;
    const at = dateSeriesOf(page.url);
    if (at === undefined) return;
    const tally = this.#series.get(at.series) ?? { pages: 0, repeats: 0, signatures: new Set<number>(), exclude: at.exclude };
    lruSet(this.#series, at.series, tally, MAX_SERIES);
    tally.pages++;
    const signature = digitlessHash(page.body);
    if (tally.signatures.has(signature)) tally.repeats++;
    else if (tally.signatures.size < MAX_SIGNATURES) tally.signatures.add(signature);
  }

  /** The series walked page after repeated page, most repeats first (at most `MAX_NAMED`). */
  named(): CalendarSeries[] {
    return [...this.#series]
      .filter(([, t]) => t.repeats >= MIN_REPEATS && t.repeats * 2 >= t.pages)
      .sort((a, b) => b[1].repeats - a[1].repeats)
      .slice(0, MAX_NAMED)
      .map(([series, t]) => ({ series, pages: t.pages, repeats: t.repeats, exclude: t.exclude }));
  }
}

/** The summary line naming the calendars, or undefined when there are none. */
export function calendarLine(named: readonly CalendarSeries[], int: (n: number) => string): string | undefined {
  if (named.length === 0) return undefined;
  const each = named.map((c) => `${int(c.repeats)} of ${int(c.pages)} pages at ${c.series} were an earlier one's but for their digits${c.exclude === undefined ? '' : ` (--exclude '${c.exclude}' skips them)`}`);
  return `  calendar  ${each.join('; ')}: a calendar walked date by date (nothing was skipped: a date past a gap may be the only way to an event)`;
}
