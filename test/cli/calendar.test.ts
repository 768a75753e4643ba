// An events calendar links each month and each day to the next and the previous one: a loopback
// club site of 12 events cost 1,354 requests, 1,295 of them day pages reading "No events
// scheduled". Nothing is skipped (an event past a gap may be linked from the calendar alone); the
// end summary names the calendar and an --exclude matching only its dates (`CalendarRepeats`),
// the day's date in the path or in the query (`/calendar/day?date=…`: the summary named only the
// calendar's 46 months while its days made 1,325 of 1,385 requests).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CalendarRepeats, calendarLine, dateSeriesOf } from '../../src/cli/calendar-pages.js';
import { int } from '../../src/cli/io.js';
import { type Page, Scope } from '../../src/engine/index.js';
import { AGENT, inProcess, loopbackSite } from './helpers.js';

const page = (url: string, body: string, ok = true): Page => ({ url, ok, body: new TextEncoder().encode(body) }) as unknown as Page;

describe('dateSeriesOf', () => {
  it('takes a date in the path (a month, a day, in one segment or three) as the series placeholder, with a glob of its dates', () => {
    expect(dateSeriesOf('https://club.example/events/2026-12-07/')).toEqual({ series: 'https://club.example/events/{YYYY-MM-DD}/', exclude: 'https://club.example/events/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]/' });
    expect(dateSeriesOf('https://club.example/events/month/2026-12/')?.series).toBe('https://club.example/events/month/{YYYY-MM}/');
    expect(dateSeriesOf('https://blog.example/2026/12/07/a-post')).toEqual({ series: 'https://blog.example/{YYYY/MM/DD}/a-post', exclude: 'https://blog.example/[0-9][0-9][0-9][0-9]/[0-9][0-9]/[0-9][0-9]/a-post' });
  });

  it('keeps months and days in one folder apart, each with the glob of its own shape', () => {
    expect(dateSeriesOf('https://club.example/events/2026-12/')).toEqual({ series: 'https://club.example/events/{YYYY-MM}/', exclude: 'https://club.example/events/[0-9][0-9][0-9][0-9]-[0-9][0-9]/' });
    expect(dateSeriesOf('https://club.example/2026/12/')?.series).toBe('https://club.example/{YYYY/MM}/');
    expect(dateSeriesOf('https://club.example/2026/12/07/')?.series).toBe('https://club.example/{YYYY/MM/DD}/');
  });

  it('is undefined for numbers that are no date, in the path or the query', () => {
    for (const u of ['https://x.example/photo/20261207', 'https://x.example/v/2026-13/', 'https://x.example/item/123-45', 'https://x.example/cal?date=20261207', 'https://x.example/cal?id=12026-12-07', 'https://x.example/cal?q=2026-12-07+x', 'https://x.example/p/1202612-07', 'not a url']) {
      expect(dateSeriesOf(u), u).toBeUndefined();
    }
  });

  it('takes query values that are dates, whole, when the path holds none: each as its shape, the query\'s ? as [?] in the glob', () => {
    expect(dateSeriesOf('https://club.example/calendar/day?date=2026-12-07')).toEqual({ series: 'https://club.example/calendar/day?date={YYYY-MM-DD}', exclude: 'https://club.example/calendar/day[?]date=[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' });
    expect(dateSeriesOf('https://club.example/list?from=2026-12&to=2027-01&cat=2')).toEqual({ series: 'https://club.example/list?from={YYYY-MM}&to={YYYY-MM}&cat=2', exclude: 'https://club.example/list[?]from=[0-9][0-9][0-9][0-9]-[0-9][0-9]&to=[0-9][0-9][0-9][0-9]-[0-9][0-9]&cat=2' });
    // The path's date first: the query is then part of the series as it is.
    expect(dateSeriesOf('https://club.example/2026/12/?date=2026-12-07')?.series).toBe('https://club.example/{YYYY/MM}/?date=2026-12-07');
  });

  it('gives a glob that --exclude reads as these dates alone: the series\' pages out, the page without a date and other queries in', () => {
    const hint = (u: string): Scope => new Scope('any', [u], [], [dateSeriesOf(u)!.exclude!]);
    const day = hint('https://club.example/calendar/day?date=2026-12-07');
    expect(day.check('https://club.example/calendar/day?date=2031-01-30')).toBe('excluded');
    for (const u of ['https://club.example/calendar/day', 'https://club.example/calendar/dayXdate=2026-12-07', 'https://club.example/calendar/day?date=2026-12-07&cat=1', 'https://club.example/calendar/day?date=2026-12']) expect(day.check(u), u).toBeUndefined();
    const path = hint('https://club.example/events/2026-12-07/?cat=1');
    expect(path.check('https://club.example/events/2027-01-30/?cat=1')).toBe('excluded');
    expect(path.check('https://club.example/events/2027-01-30/?cat=2')).toBeUndefined();
  });

  it('gives no glob where the URL holds glob syntax or a quote (it would match other pages, or none, or break the quoting)', () => {
    expect(dateSeriesOf('https://x.example/events(all)/2026-12/')).toEqual({ series: 'https://x.example/events(all)/{YYYY-MM}/', exclude: undefined });
    expect(dateSeriesOf('https://x.example/events/2026-12-07/?cat=a+b')).toEqual({ series: 'https://x.example/events/{YYYY-MM-DD}/?cat=a+b', exclude: undefined });
    expect(dateSeriesOf('https://x.example/cal?date=2026-12-07&q=a*')).toEqual({ series: 'https://x.example/cal?date={YYYY-MM-DD}&q=a*', exclude: undefined });
    expect(dateSeriesOf("https://x.example/o'neil/2026-12/")?.exclude).toBeUndefined();
  });
});

describe('CalendarRepeats', () => {
  it('names a series once 20 of its pages, half of them at least, were an earlier one\'s but for their digits', () => {
    const c = new CalendarRepeats();
    for (let d = 1; d <= 20; d++) c.observe(page(`https://x.example/cal/2026-11-${String(d).padStart(2, '0')}/`, `<h1>2026-11-${d}</h1> nothing on this day`));
    expect(c.named()).toEqual([]); // 19 repeats
    c.observe(page('https://x.example/cal/2026-11-21/', '<h1>2026-11-21</h1> nothing on this day'));
    expect(c.named()).toEqual([{ series: 'https://x.example/cal/{YYYY-MM-DD}/', pages: 21, repeats: 20, exclude: 'https://x.example/cal/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]/' }]);
  });

  it('names a series whose repeats are half its pages exactly, not less; cut and sitemap bodies are not read', () => {
    const c = new CalendarRepeats();
    const dated = (d: number): string => `https://x.example/half/2026-11-${String((d % 28) + 1).padStart(2, '0')}/`;
    // 34 pages in words of their own, then 35 alike: 34 repeats of 69.
    for (let d = 0; d < 69; d++) c.observe(page(dated(d), d < 34 ? `<p>${'ab'.repeat(d + 1)}</p>` : 'empty'));
    for (let d = 0; d < 40; d++) c.observe({ ...page(dated(d), 'empty'), truncated: true } as Page);
    for (let d = 0; d < 40; d++) c.observe({ ...page(dated(d), 'empty'), sitemap: true } as Page);
    expect(c.named()).toEqual([]);
    c.observe(page(dated(70), 'empty')); // 35 of 70
    expect(c.named().map((n) => [n.pages, n.repeats])).toEqual([[70, 35]]);
  });

  it('keeps a calendar past more series than it remembers (a dated blog\'s posts, a series each)', () => {
    const c = new CalendarRepeats();
    for (let d = 0; d < 30; d++) c.observe(page(`https://x.example/cal/2026-11-${String((d % 28) + 1).padStart(2, '0')}/`, 'nothing'));
    for (let n = 0; n < 3000; n++) c.observe(page(`https://x.example/2026/11/03/post-${n}`, `<p>post ${n}</p>`));
    expect(c.named().map((n) => n.series)).toEqual(['https://x.example/cal/{YYYY-MM-DD}/']);
    // Past 64 calendars, the least recently observed goes: a new one is kept.
    for (let k = 0; k < 70; k++) for (let d = 0; d < 21; d++) c.observe(page(`https://x.example/c${k}/2026-11-${String((d % 28) + 1).padStart(2, '0')}/`, 'nothing'));
    // 71 calendars, 64 kept: the first one and c0–c5 went; c6 on, 20 repeats each, in the order seen.
    const series = (k: number): string => `https://x.example/c${k}/{YYYY-MM-DD}/`;
    expect(c.named().map((n) => n.series)).toEqual([series(6), series(7), series(8)]);
    c.observe(page('https://x.example/c69/2026-11-05/', 'nothing'));
    expect(c.named()[0]!.series).toBe(series(69));
  });

  it('does not name a dated series whose pages differ in words (a blog\'s posts), nor count failed pages', () => {
    const c = new CalendarRepeats();
    const words = 'amber birch cedar dune ember fjord grove heron iris juniper kestrel lagoon meadow nettle orchid prairie quartz raven sorrel thistle umber violet willow yarrow zephyr'.split(' ');
    for (let d = 1; d <= 25; d++) c.observe(page(`https://blog.example/2026/11/${String(d).padStart(2, '0')}/post`, `<h1>${words[d - 1]}</h1>`));
    for (let d = 1; d <= 28; d++) c.observe(page(`https://x.example/cal/2026-12-${String(d).padStart(2, '0')}/`, 'gone', false));
    // Repeats below half the pages: 29 of 70 (40 pages in words of their own, 30 alike).
    for (let d = 1; d <= 70; d++) c.observe(page(`https://x.example/mix/2027-01-${String((d % 28) + 1).padStart(2, '0')}/`, d <= 40 ? `<p>${words[d % 25]} ${words[Math.floor(d / 25)]}</p>` : 'empty'));
    expect(c.named()).toEqual([]);
  });

  it('names the three with most repeats, most first; the line says nothing was skipped', () => {
    const c = new CalendarRepeats();
    for (const [name, n] of [['a', 30], ['b', 50], ['c', 40], ['d', 25]] as const) {
      for (let d = 0; d < n; d++) c.observe(page(`https://x.example/${name}/2026-${String((d % 12) + 1).padStart(2, '0')}/`, `<p>${d}</p>`));
    }
    expect(c.named().map((s) => [s.series, s.repeats])).toEqual([
      ['https://x.example/b/{YYYY-MM}/', 49],
      ['https://x.example/c/{YYYY-MM}/', 39],
      ['https://x.example/a/{YYYY-MM}/', 29],
    ]);
    expect(calendarLine(c.named(), int)).toMatch(/^ {2}calendar {2}49 of 50 pages at https:\/\/x\.example\/b\/\{YYYY-MM\}\/ were an earlier one's but for their digits \(--exclude 'https:\/\/x\.example\/b\/\[0-9\]\[0-9\]\[0-9\]\[0-9\]-\[0-9\]\[0-9\]\/' skips its pages, 50 fetched\); .*: a calendar walked date by date, none of its pages skipped for it \(a date past a gap may be the only way to an event\)$/);
    expect(calendarLine([], int)).toBeUndefined();
  });
});

const EVENTS = Array.from({ length: 6 }, (_, i) => ({ id: i, day: new Date(Date.UTC(2026, 10, 3 + i * 9)).toISOString().slice(0, 10) }));
const addMonths = (ym: string, k: number): string => new Date(Date.UTC(Number(ym.slice(0, 4)), Number(ym.slice(5, 7)) - 1 + k, 1)).toISOString().slice(0, 7);
const addDays = (ymd: string, k: number): string => new Date(Date.parse(ymd) + k * 86_400_000).toISOString().slice(0, 10);
const flags = ['--agent', AGENT, '--allow-private', '--min-delay', '2ms', '--start-delay', '2ms', '--interval', '1h', '--max-depth', '5'];

/** How a calendar writes its month (`YYYY-MM`) and day (`YYYY-MM-DD`) URLs, and reads them back (the captures joined by `-`). */
interface CalendarUrls {
  readonly month: (ym: string) => string;
  readonly day: (ymd: string) => string;
  readonly monthRe: RegExp;
  readonly dayRe: RegExp;
}

/**
 * A club site whose calendar links each month and day to the next and the previous one, from
 * December 2026; the events are linked from their month and their day. `asked` holds the paths
 * and queries requested (robots.txt aside).
 */
function calendarSite(prefix: string, urls: CalendarUrls): { readonly site: ReturnType<typeof loopbackSite>; readonly asked: string[]; events(): number } {
  const asked: string[] = [];
  const site = loopbackSite(prefix, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/robots.txt') return void res.writeHead(404).end();
    const at = `${url.pathname}${url.search}`;
    asked.push(at);
    const html = (body: string): void => void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><nav><a href="/">Home</a></nav>${body}</body></html>`);
    const event = (e: { id: number }): string => `<a href="/event/${e.id}/">Event ${e.id}</a>`;
    const read = (re: RegExp): string | undefined => re.exec(at)?.slice(1).join('-');
    if (at === '/') return html(`<a href="${urls.month('2026-12')}">Calendar</a>`);
    const ym = read(urls.monthRe);
    if (ym !== undefined) {
      const days = Array.from({ length: 28 }, (_, i) => `<a href="${urls.day(`${ym}-${String(i + 1).padStart(2, '0')}`)}">${i + 1}</a>`).join(' ');
      const evs = EVENTS.filter((e) => e.day.startsWith(ym));
      return html(`<h1>${ym}</h1><p>${evs.length > 0 ? evs.map(event).join(' ') : 'No events this month.'}</p>${days}<a href="${urls.month(addMonths(ym, -1))}">prev</a> <a href="${urls.month(addMonths(ym, 1))}">next</a>`);
    }
    const d = read(urls.dayRe);
    if (d !== undefined) {
      const evs = EVENTS.filter((e) => e.day === d);
      return html(`<h1>${d}</h1><p>${evs.length > 0 ? evs.map(event).join(' ') : 'No events this day.'}</p><a href="${urls.day(addDays(d, -1))}">prev</a> <a href="${urls.day(addDays(d, 1))}">next</a>`);
    }
    const m = /^\/event\/(\d+)\/$/.exec(at);
    if (m !== null) return html(`<h1>Event ${m[1]}</h1><p>${'details '.repeat(Number(m[1]) + 1)}</p>`);
    res.writeHead(404).end();
  });
  return { site, asked, events: () => new Set(asked.filter((a) => a.startsWith('/event/'))).size };
}

describe('meguri crawl: an events calendar', () => {
  const { site, asked, events } = calendarSite('meguri-calendar-', {
    month: (ym) => `/events/month/${ym}/`,
    day: (ymd) => `/events/${ymd}/`,
    monthRe: /^\/events\/month\/(\d{4}-\d{2})\/$/,
    dayRe: /^\/events\/(\d{4}-\d{2}-\d{2})\/$/,
  });

  it('is crawled whole and named in the summary with an --exclude for its days; that crawl fetches every event and few pages', async () => {
    const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'all'), ...flags]);
    expect(run.code, run.err).toBe(0);
    expect(events()).toBe(EVENTS.length);
    const days = asked.filter((a) => /^\/events\/\d{4}-\d{2}-\d{2}\/$/.test(a)).length;
    expect(days).toBeGreaterThan(100);
    const line = run.out.split('\n').find((l) => l.startsWith('  calendar  '));
    expect(line).toContain(`pages at ${site.base}/events/{YYYY-MM-DD}/ were an earlier one's but for their digits`);
    const exclude = /--exclude '([^']+\/events\/\[0-9\][^']*)' skips its pages/.exec(line ?? '')?.[1];
    expect(exclude).toBe(`${site.base}/events/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]/`);
    // The --json end event carries the same.
    const json = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'json'), ...flags, '--json']);
    expect(json.code, json.err).toBe(0);
    const end = json.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; calendars?: { series: string; repeats: number; exclude?: string }[] })
      .find((e) => e.type === 'end');
    expect(end?.calendars?.map((c) => c.series)).toContain(`${site.base}/events/{YYYY-MM-DD}/`);
    asked.length = 0;
    const skipped = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'skip'), ...flags, '--exclude', exclude!]);
    expect(skipped.code, skipped.err).toBe(0);
    expect(events()).toBe(EVENTS.length);
    expect(asked.length).toBeLessThan(days / 4);
  });
});

describe('meguri crawl: an events calendar whose days are a query', () => {
  // Months in the path, days in the query, as the audit's club site writes them.
  const { site, asked, events } = calendarSite('meguri-calendar-query-', {
    month: (ym) => `/calendar/${ym.replace('-', '/')}/`,
    day: (ymd) => `/calendar/day?date=${ymd}`,
    monthRe: /^\/calendar\/(\d{4})\/(\d{2})\/$/,
    dayRe: /^\/calendar\/day\?date=(\d{4}-\d{2}-\d{2})$/,
  });

  it('names the day series first, with an --exclude for its days; that crawl fetches every event and few pages', async () => {
    const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'all'), ...flags]);
    expect(run.code, run.err).toBe(0);
    expect(events()).toBe(EVENTS.length);
    const days = asked.filter((a) => a.startsWith('/calendar/day?date=')).length;
    expect(days).toBeGreaterThan(100);
    const line = run.out.split('\n').find((l) => l.startsWith('  calendar  '));
    // The days, most repeats, first: `1xx of 1xx pages at …/calendar/day?date={YYYY-MM-DD} were …`.
    expect(line).toMatch(new RegExp(`^ {2}calendar {2}[0-9,]+ of ${days} pages at ${site.base.replace(/[.]/g, '\\.')}/calendar/day\\?date=\\{YYYY-MM-DD\\} were an earlier one's but for their digits`));
    const exclude = /--exclude '([^']+\/calendar\/day[^']*)' skips its pages/.exec(line ?? '')?.[1];
    expect(exclude).toBe(`${site.base}/calendar/day[?]date=[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]`);
    asked.length = 0;
    const skipped = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'skip'), ...flags, '--exclude', exclude!]);
    expect(skipped.code, skipped.err).toBe(0);
    expect(events()).toBe(EVENTS.length);
    expect(asked.filter((a) => a.startsWith('/calendar/day'))).toEqual([]);
    expect(asked.length).toBeLessThan(days / 4);
  });
});
