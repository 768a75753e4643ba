// An events calendar links each month and each day to the next and the previous one: a loopback
// club site of 12 events cost 1,354 requests, 1,295 of them day pages reading "No events
// scheduled". Nothing is skipped (an event past a gap may be linked from the calendar alone); the
// end summary names the calendar and an --exclude matching only its dates (`CalendarRepeats`).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CalendarRepeats, calendarLine, dateSeriesOf } from '../../src/cli/calendar-pages.js';
import { int } from '../../src/cli/io.js';
import type { Page } from '../../src/engine/index.js';
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

  it('is undefined for numbers that are no date, and for a date in the query alone', () => {
    for (const u of ['https://x.example/photo/20261207', 'https://x.example/v/2026-13/', 'https://x.example/item/123-45', 'https://x.example/cal?date=2026-12-07', 'https://x.example/p/1202612-07', 'not a url']) {
      expect(dateSeriesOf(u), u).toBeUndefined();
    }
  });

  it('gives no glob where the URL holds glob syntax, a query or a quote (it would match other pages, or none, or break the quoting)', () => {
    expect(dateSeriesOf('https://x.example/events(all)/2026-12/')).toEqual({ series: 'https://x.example/events(all)/{YYYY-MM}/', exclude: undefined });
    expect(dateSeriesOf('https://x.example/events/2026-12-07/?cat=1')).toEqual({ series: 'https://x.example/events/{YYYY-MM-DD}/?cat=1', exclude: undefined });
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

describe('meguri crawl: an events calendar', () => {
  const EVENTS = Array.from({ length: 6 }, (_, i) => ({ id: i, day: new Date(Date.UTC(2026, 10, 3 + i * 9)).toISOString().slice(0, 10) }));
  const asked: string[] = [];
  const addMonths = (ym: string, k: number): string => new Date(Date.UTC(Number(ym.slice(0, 4)), Number(ym.slice(5, 7)) - 1 + k, 1)).toISOString().slice(0, 7);
  const addDays = (ymd: string, k: number): string => new Date(Date.parse(ymd) + k * 86_400_000).toISOString().slice(0, 10);
  const site = loopbackSite('meguri-calendar-', (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/robots.txt') return void res.writeHead(404).end();
    asked.push(path);
    const html = (body: string): void => void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><nav><a href="/">Home</a></nav>${body}</body></html>`);
    const event = (e: { id: number }): string => `<a href="/event/${e.id}/">Event ${e.id}</a>`;
    let m: RegExpExecArray | null;
    if (path === '/') return html('<a href="/events/month/2026-12/">Calendar</a>');
    if ((m = /^\/events\/month\/(\d{4}-\d{2})\/$/.exec(path)) !== null) {
      const ym = m[1]!;
      const days = Array.from({ length: 28 }, (_, i) => `<a href="/events/${ym}-${String(i + 1).padStart(2, '0')}/">${i + 1}</a>`).join(' ');
      const evs = EVENTS.filter((e) => e.day.startsWith(ym));
      return html(`<h1>${ym}</h1><p>${evs.length > 0 ? evs.map(event).join(' ') : 'No events this month.'}</p>${days}<a href="/events/month/${addMonths(ym, -1)}/">prev</a> <a href="/events/month/${addMonths(ym, 1)}/">next</a>`);
    }
    if ((m = /^\/events\/(\d{4}-\d{2}-\d{2})\/$/.exec(path)) !== null) {
      const d = m[1]!;
      const evs = EVENTS.filter((e) => e.day === d);
      return html(`<h1>${d}</h1><p>${evs.length > 0 ? evs.map(event).join(' ') : 'No events this day.'}</p><a href="/events/${addDays(d, -1)}/">prev</a> <a href="/events/${addDays(d, 1)}/">next</a>`);
    }
    if ((m = /^\/event\/(\d+)\/$/.exec(path)) !== null) return html(`<h1>Event ${m[1]}</h1><p>${'details '.repeat(Number(m[1]) + 1)}</p>`);
    res.writeHead(404).end();
  });
  const flags = ['--agent', AGENT, '--allow-private', '--min-delay', '2ms', '--start-delay', '2ms', '--interval', '1h', '--max-depth', '5'];
  const events = (): number => new Set(asked.filter((a) => a.startsWith('/event/'))).size;

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
