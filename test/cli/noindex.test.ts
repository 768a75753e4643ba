/**
 * `meguri crawl` on a wiki whose tool pages say noindex,nofollow (`NoindexShapes`): each shape is
 * learned after eight pages and its other URLs are not fetched, while every article, and every
 * page reached only through a noindex,follow page, still is. A lesson read back on a resume
 * refuses at once, and a check that finds content lifts it and fetches what it refused.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noindexLine } from '../../src/cli/crawl.js';
import { noindexText } from '../../src/cli/read.js';
import { LOOPBACK_CRAWL, inProcess, jsonEnd, loopbackSite } from './helpers.js';

const ARTICLES = 40;
const flags = LOOPBACK_CRAWL;

describe('meguri crawl: a wiki whose tool pages say noindex,nofollow', () => {
  const asked: string[] = [];
  /** Whether /item/N serves content (true) or a withdrawn notice that says noindex,nofollow. */
  let itemsServeContent = false;
  /** Item requests still answered withdrawn when `itemsServeContent` is true. */
  let withdrawnLeft = 0;
  const site = loopbackSite('meguri-noindex-', (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/robots.txt') return void res.writeHead(404).end();
    asked.push(u.pathname + u.search);
    const html = (body: string, robots?: string, headers: Record<string, string> = {}): void =>
      void res.writeHead(200, { 'content-type': 'text/html', ...headers }).end(`<html><head>${robots === undefined ? '' : `<meta name="robots" content="${robots}">`}</head><body><a href="/">Home</a>${body}</body></html>`);
    const n = Number(/(\d+)$/.exec(u.pathname)?.[1] ?? u.searchParams.get('title')?.replace(/\D/g, '') ?? 0);
    if (u.pathname === '/') return html(Array.from({ length: ARTICLES }, (_, i) => `<a href="/wiki/A${i + 1}">A${i + 1}</a>`).join(' ') + '<a href="/items">Items</a>' + Array.from({ length: 12 }, (_, i) => `<a href="/gone/${i}">old ${i}</a>`).join(' '));
    // Dead links whose one not-found page (a soft-404 template) says noindex,nofollow.
    if (u.pathname.startsWith('/gone/')) return html('<p>This page no longer exists.</p>', 'noindex,nofollow');
    if (/^\/wiki\/A\d+$/.test(u.pathname)) {
      const tools = [
        `<a href="/w/index.php?title=A${n}&amp;action=edit">Edit</a>`,
        `<a href="/w/index.php?title=A${n}&amp;action=history">History</a>`,
        `<a href="/wiki/Special:WhatLinksHere/A${n}">What links here</a>`,
        `<a href="/search?q=a${n}">Search</a>`,
      ];
      return html(`<h1>Article ${n}</h1><p>${'text '.repeat(n)}</p>${tools.join(' ')}<a href="/wiki/A${(n % ARTICLES) + 1}">next</a>`);
    }
    // MediaWiki's tool pages: the meta tag, or the header (What links here).
    if (u.pathname === '/w/index.php') return html(`<form>${u.searchParams.get('action')} ${u.searchParams.get('title')}</form><a href="/wiki/Special:Secret${n}">never followed</a>`, 'noindex,nofollow');
    if (u.pathname.startsWith('/wiki/Special:WhatLinksHere/')) return html(`<p>links to A${n}</p>`, undefined, { 'x-robots-tag': 'noindex, nofollow' });
    // A search page says noindex but follow: it is the only way to its hidden page.
    if (u.pathname === '/search') return html(`<a href="/hidden/${u.searchParams.get('q')}">result</a>`, 'noindex,follow');
    if (u.pathname.startsWith('/hidden/')) return html(`<p>hidden ${u.pathname}</p>`);
    if (u.pathname === '/items' || u.pathname === '/more') {
      const [from, to] = u.pathname === '/items' ? [1, 10] : [Number(u.searchParams.get('from')), Number(u.searchParams.get('to'))];
      return html(Array.from({ length: to - from + 1 }, (_, i) => `<a href="/item/${from + i}">item ${from + i}</a>`).join(' '));
    }
    if (u.pathname.startsWith('/item/')) return itemsServeContent && withdrawnLeft-- <= 0 ? html(`<p>item ${n} in stock</p>`) : html(`<p>item ${n} was withdrawn</p>`, 'none');
    res.writeHead(404).end();
  });
  const count = (re: RegExp): number => new Set(asked.filter((a) => re.test(a))).size;
  const endOf = (out: string): { noindexShapes?: string[]; counts?: { noindexSkipped: number } } | undefined => jsonEnd(out);

  it('learns each tool shape after eight pages, fetches every article and every page a noindex,follow page leads to, and names the shapes', async () => {
    asked.length = 0;
    const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'wiki'), ...flags, '--json']);
    expect(run.code, run.err).toBe(0);
    expect(count(/^\/wiki\/A\d+$/)).toBe(ARTICLES);
    expect(count(/^\/search\?/)).toBe(ARTICLES);
    expect(count(/^\/hidden\//)).toBe(ARTICLES);
    // Eight of each shape teach it (edit forms and histories are one shape: the same keys); of
    // the rest, the 1st, 2nd, 4th, 8th, 16th refusals and every 32nd are fetched as checks: of
    // 72 left, 7; of 32 left, 6.
    expect(count(/^\/w\/index\.php/)).toBe(8 + 7);
    expect(count(/^\/wiki\/Special:WhatLinksHere\//)).toBe(8 + 6);
    // A nofollow page's links are never followed, lesson or not.
    expect(count(/Special:Secret/)).toBe(0);
    const end = endOf(run.out);
    expect(end?.noindexShapes).toEqual(
      expect.arrayContaining([`${site.base}/w/index.php?action=*&title=*`, `${site.base}/wiki/Special:WhatLinksHere/*`, `${site.base}/item/*`]),
    );
    expect(end?.noindexShapes).not.toContain(`${site.base}/search?q=*`);
    expect(end?.noindexShapes).not.toContain(`${site.base}/wiki/*`);
    // A soft-404 template teaches nothing: every dead link was asked, its shape not learned (and
    // one made-up URL beside them, the soft-404 probe, answered with the same page).
    expect(count(/^\/gone\/(?!\d{10}$)/)).toBe(12);
    expect(count(/^\/gone\/\d{10}$/)).toBe(1);
    expect(end?.noindexShapes).not.toContain(`${site.base}/gone/*`);
    // Every tool URL and item not fetched is counted (the front page links 10 items: 8 teach,
    // and the two left are the first refusals: checks).
    expect(count(/^\/item\//)).toBe(10);
    expect(end?.counts?.noindexSkipped).toBe(3 * ARTICLES + 10 - count(/^\/w\/index\.php/) - count(/^\/wiki\/Special:WhatLinksHere\//) - count(/^\/item\//));

    // The saved lesson shows in `meguri stats`.
    const stats = await inProcess(['stats', join(site.dir, 'wiki')]);
    expect(stats.code, stats.err).toBe(0);
    expect(stats.out).toMatch(/^ {2}noindex {5}.*\/w\/index\.php\?action=\*&title=\*/m);
  });

  it('fetches every tool page with --no-learn-noindex', async () => {
    asked.length = 0;
    const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'all'), ...flags, '--no-learn-noindex']);
    expect(run.code, run.err).toBe(0);
    expect(count(/action=edit/)).toBe(ARTICLES);
    expect(count(/action=history/)).toBe(ARTICLES);
    expect(count(/^\/wiki\/Special:WhatLinksHere\//)).toBe(ARTICLES);
    expect(run.out).not.toMatch(/^ {2}noindex /m);
  });

  it('on a resume, a lesson read back refuses at once; a check that finds content lifts it and fetches every URL it refused', async () => {
    itemsServeContent = false;
    asked.length = 0;
    const dir = join(site.dir, 'items');
    const first = await inProcess(['crawl', `${site.base}/items`, '--data', dir, ...flags]);
    expect(first.code, first.err).toBe(0);
    // Eight withdrawn items teach the shape; the two left are its first refusals, checks.
    expect(count(/^\/item\//)).toBe(10);
    expect(first.out).toMatch(new RegExp(`^ {2}noindex {3}.*${site.base.replace(/\./g, '\\.')}/item/\\*`, 'm'));
    // A resume reads the lesson back: of 64 new items only the checks are fetched (7: the 1st,
    // 2nd, 4th, 8th, 16th, 32nd and 64th refusals), the other 57 counted as not fetched.
    asked.length = 0;
    const second = await inProcess(['crawl', `${site.base}/more?from=11&to=74`, '--data', dir, ...flags, '--json']);
    expect(second.code, second.err).toBe(0);
    expect(count(/^\/item\//)).toBe(7);
    expect(endOf(second.out)?.counts?.noindexSkipped).toBe(57);
    // The site now serves the items, but for the next two asked: the next resume's first two
    // checks find the notice, its third (the 4th refusal) content, which lifts the lesson; every
    // item refused in any run is queued again and fetched.
    itemsServeContent = true;
    withdrawnLeft = 2;
    asked.length = 0;
    const third = await inProcess(['crawl', `${site.base}/more?from=75&to=120`, '--data', dir, ...flags, '--json']);
    expect(third.code, third.err).toBe(0);
    expect(count(/^\/item\//)).toBe(46 + 57);
    const end = endOf(third.out);
    // (The items page links the front page: the wiki's tool shapes are learned in that crawl too.)
    expect(end?.noindexShapes).toContain(`${site.base}/w/index.php?action=*&title=*`);
    expect(end?.noindexShapes).not.toContain(`${site.base}/item/*`);
    // The one refused before the lift (the 3rd) was queued again and fetched: not counted.
    expect(end?.counts?.noindexSkipped).toBe(0);
  });
});

describe('noindexLine and noindexText', () => {
  it('name up to three shapes (four in stats) and the URLs not fetched; nothing when nothing was learned', () => {
    const counts = { noindexSkipped: 1234 } as Parameters<typeof noindexLine>[1];
    expect(noindexLine([], { noindexSkipped: 0 } as typeof counts)).toBe('');
    const line = noindexLine(['http://w.test/a?x=*', 'http://w.test/b/*', 'http://w.test/c/*', 'http://w.test/d/*'], counts);
    expect(line).toMatch(/^ {2}noindex {3}http:\/\/w\.test\/a\?x=\*, http:\/\/w\.test\/b\/\*, http:\/\/w\.test\/c\/\* and 1 more — 1,234 queued URLs not fetched \(/);
    expect(line).toContain('its first refusals and then one in 32 are still fetched as checks; --no-learn-noindex fetches them all');
    expect(noindexLine([], counts)).toMatch(/no shape learned now — 1,234 queued URLs/);
    expect(noindexText([['http://w.test/b/*', false]])).toEqual([]);
    expect(noindexText([['http://w.test/a?x=*', true], ['http://w.test/b/*', false]])).toEqual([
      '  noindex     http://w.test/a?x=* (pages that said noindex and nofollow: their URLs are not fetched; --no-learn-noindex on a resume turns that off)',
    ]);
  });
});
