/**
 * `meguri crawl` on a XenForo-shaped forum whose post permalinks (`/threads/tN.N/post-ID`) and
 * `latest` links redirect into the thread's pages (`ParentRedirects`): each shape is learned after
 * eight redirects and its other URLs are not fetched once their thread page was — every
 * thread page still is, a thread reached only through a permalink too. A check that finds a page
 * of its own lifts the lesson and fetches what it refused; `--no-learn-aliases` fetches them all.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parentRedirectsLine } from '../../src/cli/crawl.js';
import { parentRedirectsText } from '../../src/cli/read.js';
import { LOOPBACK_CRAWL, inProcess, jsonEnd, loopbackSite } from './helpers.js';

const THREADS = 12;
/** Threads not listed: the front page's "recent posts" links one post of each. */
const UNLISTED = 5;
const PER = 10;
const STORIES = 30;
/** The thread whose first page always fails, and its pages reached only through permalinks. */
const BROKEN = 99;
const BROKEN_PAGES = [2, 3, 4, 5, 6, 7];
const REMOVED = 9;
/** Posts of thread n: 4 + (7n mod 23), numbered from n·100. */
const postsOf = (n: number): number[] => Array.from({ length: 4 + ((7 * n) % 23) }, (_, i) => n * 100 + i);
const flags = LOOPBACK_CRAWL;

describe('meguri crawl: a forum whose post permalinks redirect into the thread', () => {
  const asked: string[] = [];
  /** Permalinks answered with a redirect before they serve a page of their own (Infinity: always redirect). */
  let redirectsLeft = Infinity;
  const site = loopbackSite('meguri-parentredir-', (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/robots.txt') return void res.writeHead(404).end();
    asked.push(u.pathname);
    const html = (body: string): void => void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><a href="/">Forum</a>${body}</body></html>`);
    if (u.pathname === '/') {
      const listed = Array.from({ length: THREADS }, (_, i) => `<a href="/threads/t${i + 1}.${i + 1}/">thread ${i + 1}</a> <a href="/threads/t${i + 1}.${i + 1}/latest">latest</a>`);
      return html(listed.join(' '));
    }
    // A news section linking short URLs: the first REMOVED redirect to the section (removed
    // stories), the others complete their slug — the only way to each story.
    if (u.pathname === '/news/') return html(Array.from({ length: STORIES }, (_, i) => `<a href="/news/${i + 1}">story ${i + 1}</a>`).join(' '));
    const story = /^\/news\/(\d+)(-[a-z-]+)?$/.exec(u.pathname);
    if (story !== null) {
      const n = Number(story[1]);
      if (story[2] !== undefined) return html(`<h1>story ${n}</h1>`);
      return void res.writeHead(301, { location: n <= REMOVED ? '/news/' : `/news/${n}-the-headline` }).end();
    }
    // Given as a seed on a resume, once the permalink shape is learned.
    if (u.pathname === '/whats-new/') {
      const recent = Array.from({ length: UNLISTED }, (_, i) => THREADS + i + 1).map((n) => `<a href="/threads/t${n}.${n}/post-${postsOf(n)[1]}">a recent post</a>`);
      return html(recent.join(' '));
    }
    // A thread whose first page fails (500, every time): its other pages are reached only through
    // the permalinks a news page links, each redirecting to the page holding its post.
    if (u.pathname === '/broken-news/') return html(BROKEN_PAGES.map((k) => `<a href="/threads/t${BROKEN}.${BROKEN}/post-${BROKEN * 100 + k}">post</a>`).join(' '));
    if (u.pathname === `/threads/t${BROKEN}.${BROKEN}/`) return void res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>Internal Server Error</h1>');
    const broken = new RegExp(`^/threads/t${BROKEN}\\.${BROKEN}/(?:page-(\\d+)|post-${BROKEN}(\\d\\d))$`).exec(u.pathname);
    if (broken !== null) {
      if (broken[1] !== undefined) return html(`<h1>thread ${BROKEN} page ${broken[1]}</h1>`);
      return void res.writeHead(301, { location: `/threads/t${BROKEN}.${BROKEN}/page-${Number(broken[2])}#post` }).end();
    }
    const m = /^\/threads\/t(\d+)\.(\d+)\/(?:page-(\d+)|post-(\d+)|(latest))?$/.exec(u.pathname);
    if (m === null) return void res.writeHead(404).end();
    const n = Number(m[2]);
    const posts = postsOf(n);
    const pages = Math.ceil(posts.length / PER);
    const at = (k: number): string => (k <= 1 ? `/threads/t${n}.${n}/` : `/threads/t${n}.${n}/page-${k}`);
    if (m[5] !== undefined) return void res.writeHead(301, { location: at(pages) }).end();
    if (m[4] !== undefined) {
      const i = posts.indexOf(Number(m[4]));
      if (redirectsLeft-- <= 0) return html(`<p>post ${m[4]} alone</p>`);
      return void res.writeHead(301, { location: `${at(Math.floor(i / PER) + 1)}#post-${m[4]}` }).end();
    }
    const k = Number(m[3] ?? 1);
    const shown = posts.slice((k - 1) * PER, k * PER).map((id) => `<div id="post-${id}"><a href="/threads/t${n}.${n}/post-${id}">#${id}</a> post ${id} of thread ${n}</div>`);
    const nav = Array.from({ length: pages }, (_, i) => `<a href="${at(i + 1)}">${i + 1}</a>`);
    return html(`<h1>thread ${n} page ${k}</h1>${shown.join('')}${nav.join(' ')}`);
  });
  const unlistedThreads = (): number[] => Array.from({ length: UNLISTED }, (_, i) => THREADS + i + 1);
  const count = (re: RegExp): number => new Set(asked.filter((a) => re.test(a))).size;
  const all = Array.from({ length: THREADS }, (_, i) => i + 1);
  const threadPages = all.reduce((s, n) => s + Math.ceil(postsOf(n).length / PER), 0);
  const permalinks = all.reduce((s, n) => s + postsOf(n).length, 0);
  type End = { parentRedirects?: string[]; counts?: { parentRedirects: number } };
  const endOf = (out: string): End | undefined => jsonEnd<End>(out);

  it('learns the permalink shape, fetches every thread page, and names them; a thread not fetched is reached through its permalink', async () => {
    redirectsLeft = Infinity;
    asked.length = 0;
    const dir = join(site.dir, 'forum');
    const run = await inProcess(['crawl', `${site.base}/`, '--data', dir, ...flags, '--json']);
    expect(run.code, run.err).toBe(0);
    expect(count(/^\/threads\/[^/]+\/(page-\d+)?$/)).toBe(threadPages);
    const fetchedPermalinks = count(/\/post-\d+$/);
    // Eight teach, then checks: the 1st, 2nd, 4th, 8th, 16th refusals, then every 32nd.
    expect(fetchedPermalinks).toBeLessThanOrEqual(8 + 5 + Math.ceil(permalinks / 32));
    const end = endOf(run.out);
    // (`latest` links met before their thread's pages are no evidence: that shape may or may not be learned.)
    expect(end?.parentRedirects).toContain(`${site.base}/threads/*/post-*`);
    expect(end?.counts?.parentRedirects).toBe(permalinks - fetchedPermalinks + THREADS - count(/\/latest$/));
    const stats = await inProcess(['stats', join(site.dir, 'forum')]);
    expect(stats.code, stats.err).toBe(0);
    expect(stats.out).toMatch(/^ {2}redirects {3}.*\/threads\/\*\/post-\*/m);

    // A resume reads the lesson back; a page linking one permalink each of threads the crawl has
    // not fetched: each is fetched (its parent was not, so no refusal is counted, no check
    // spent), and it leads to its thread, whose own permalinks are then refused but for checks.
    asked.length = 0;
    const resumed = await inProcess(['crawl', `${site.base}/whats-new/`, '--data', dir, ...flags, '--json']);
    expect(resumed.code, resumed.err).toBe(0);
    const unlisted = unlistedThreads();
    for (const n of unlisted) {
      expect(asked).toContain(`/threads/t${n}.${n}/post-${postsOf(n)[1]}`);
      expect(asked).toContain(`/threads/t${n}.${n}/`);
    }
    const newPermalinks = unlisted.reduce((s, n) => s + postsOf(n).length, 0);
    // The five, and the 1st, 2nd, 4th, 8th, 16th, 32nd and 64th of the 80 refusals.
    expect(count(/\/post-\d+$/)).toBe(UNLISTED + 7);
    expect(endOf(resumed.out)?.counts?.parentRedirects).toBe(newPermalinks - count(/\/post-\d+$/));
  });

  it('refuses nothing while the parent page is not fetched: a thread whose first page fails is reached through its permalinks', async () => {
    redirectsLeft = Infinity;
    const dir = join(site.dir, 'broken');
    const first = await inProcess(['crawl', `${site.base}/`, '--data', dir, ...flags]);
    expect(first.code, first.err).toBe(0);
    // The resume reads the lesson back. The failing page is queued (and retried) — held, never
    // fetched — while the news page's permalinks into its thread are dispatched: each is fetched,
    // not refused, and leads to its page. (Were a queued parent enough, the 3rd, 5th and 6th would
    // be refused, and the checks' redirects to pages not held would lift the lesson as news.)
    asked.length = 0;
    const second = await inProcess(['crawl', `${site.base}/broken-news/`, `${site.base}/threads/t${BROKEN}.${BROKEN}/`, '--data', dir, ...flags, '--json']);
    expect(second.code, second.err).toBe(0);
    for (const k of BROKEN_PAGES) expect(asked).toContain(`/threads/t${BROKEN}.${BROKEN}/page-${k}`);
    // No refusal, and no verdict either: a redirect to a page not held, met before its parent was
    // fetched, is not news, so the lesson stands (and the first run's refusals stay refused).
    const end = endOf(second.out);
    expect(end?.counts?.parentRedirects).toBe(0);
    expect(end?.parentRedirects).toContain(`${site.base}/threads/*/post-*`);
    expect(count(/^\/threads\/t\d+\.\d+\/post-/)).toBe(BROKEN_PAGES.length);
  });

  it('fetches every permalink with --no-learn-aliases', async () => {
    redirectsLeft = Infinity;
    asked.length = 0;
    const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'all'), ...flags, '--no-learn-aliases']);
    expect(run.code, run.err).toBe(0);
    expect(count(/\/post-\d+$/)).toBe(permalinks);
    expect(run.out).not.toMatch(/^ {2}redirects /m);
  });

  it('a check that finds a page of its own lifts the lesson: every permalink refused, in this run or before, is fetched', async () => {
    redirectsLeft = Infinity;
    asked.length = 0;
    const dir = join(site.dir, 'lift');
    const first = await inProcess(['crawl', `${site.base}/`, '--data', dir, ...flags, '--json']);
    expect(first.code, first.err).toBe(0);
    const refusedBefore = endOf(first.out)?.counts?.parentRedirects ?? 0;
    expect(refusedBefore).toBeGreaterThan(100);
    const fetchedFirst = new Set(asked.filter((a) => /\/post-\d+$/.test(a)));
    // The resume reads the lesson back. Its seed links one permalink each of the unlisted threads
    // (fetched: their thread was not), and of their threads' own permalinks the first refusals
    // are checks: from the eighth permalink asked in this run on, permalinks serve pages, so the
    // lesson is lifted, and every permalink refused by either run is fetched.
    redirectsLeft = UNLISTED + 2;
    asked.length = 0;
    const second = await inProcess(['crawl', `${site.base}/whats-new/`, '--data', dir, ...flags, '--json']);
    expect(second.code, second.err).toBe(0);
    const fetched = new Set([...fetchedFirst, ...asked.filter((a) => /\/post-\d+$/.test(a))]);
    expect(fetched.size).toBe(permalinks + [...unlistedThreads()].reduce((s, n) => s + postsOf(n).length, 0));
    const end = endOf(second.out);
    expect(end?.parentRedirects).not.toContain(`${site.base}/threads/*/post-*`);
    expect(end?.counts?.parentRedirects).toBe(0);
  });

  it('a redirect that completes a slug is news: among short links that redirect removed stories to the section, every story is fetched', async () => {
    // Whatever the order: news first marks the shape for the run; eight removed stories first
    // teach it, and the first check (the 1st refusal) that completes a slug lifts it.
    redirectsLeft = Infinity;
    asked.length = 0;
    const run = await inProcess(['crawl', `${site.base}/news/`, '--data', join(site.dir, 'news'), ...flags, '--json']);
    expect(run.code, run.err).toBe(0);
    expect(count(/^\/news\/\d+-the-headline$/)).toBe(STORIES - REMOVED);
    expect(count(/^\/news\/\d+$/)).toBe(STORIES);
    expect(endOf(run.out)?.parentRedirects).not.toContain(`${site.base}/news/*`);
  });
});

describe('parentRedirectsLine and parentRedirectsText', () => {
  it('name up to three shapes (four in stats) and the URLs not fetched; nothing when nothing was learned', () => {
    const counts = { parentRedirects: 1234 } as Parameters<typeof parentRedirectsLine>[1];
    expect(parentRedirectsLine([], { parentRedirects: 0 } as typeof counts)).toBe('');
    const shapes = ['http://f.test/a/*/b-*', 'http://f.test/c/*', 'http://f.test/d/*/*', 'http://f.test/e/*'];
    expect(parentRedirectsLine(shapes, counts)).toMatch(/^ {2}redirects http:\/\/f\.test\/a\/\*\/b-\*, http:\/\/f\.test\/c\/\*, http:\/\/f\.test\/d\/\*\/\* and 1 more — 1,234 queued URLs not fetched \(/);
    expect(parentRedirectsLine([], counts)).toMatch(/^ {2}redirects no shape learned now — 1,234/);
    expect(parentRedirectsText([])).toEqual([]);
    expect(parentRedirectsText([[shapes[0]!, true], [shapes[1]!, false]])).toEqual([expect.stringMatching(/^ {2}redirects {3}http:\/\/f\.test\/a\/\*\/b-\* \(URLs that redirect into their parent page/)]);
  });
});
