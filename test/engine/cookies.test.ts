/**
 * A cookie check, as load balancers, bot screens and consent walls run it: a request without
 * the site's cookie is answered by a redirect to the very URL asked for, setting the cookie —
 * robots.txt included. Through the real HttpFetcher on loopback: with the engine's cookie jar
 * (the default) the whole site is crawled, each page once, and the requests recorded for the
 * WARC carry the cookie; without it the crawl gets nothing, the redirect to itself is retried up to
 * `retryLimit` and then given up, and the summary says why.
 */
import { describe, expect, it } from 'vitest';
import { nothingFetched } from '../../src/cli/crawl.js';
import { type Page, crawl, isSelfRedirect } from '../../src/index.js';
import { AGENT, loopbackSite } from './helpers.js';

const PAGES = 12;
let visitors = 0;
const asked: { path: string; cookie: string | undefined }[] = [];

const site = loopbackSite((req, res) => {
  const path = req.url ?? '/';
  asked.push({ path, cookie: req.headers.cookie });
  // A Java servlet's first answer: the session in the URL and in a cookie; the URL less its
  // ;jsessionid is the same page (canonicalization drops it), so this is a redirect to itself.
  if (path.startsWith('/java')) {
    if (!/JSESSIONID=s1/.test(req.headers.cookie ?? '')) {
      res.writeHead(302, { location: '/java;jsessionid=s1', 'set-cookie': 'JSESSIONID=s1; Path=/; HttpOnly' });
      return res.end();
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    return res.end('<html><body>the servlet page</body></html>');
  }
  // A round trip: the page sends a client without its cookie to a check that sets it and
  // sends the client back; a loop between two URLs that sets a cookie at every hop.
  if (path === '/rt') {
    if (!/(?:^|; )seen=1/.test(req.headers.cookie ?? '')) return void res.writeHead(302, { location: '/check?back=%2Frt' }).end();
    res.writeHead(200, { 'content-type': 'text/html' });
    return res.end('<html><body>past the check</body></html>');
  }
  if (path.startsWith('/check')) return void res.writeHead(302, { location: '/rt', 'set-cookie': 'seen=1; Path=/' }).end();
  if (path === '/ping' || path === '/pong') return void res.writeHead(302, { location: path === '/ping' ? '/pong' : '/ping', 'set-cookie': `hop=${asked.length}` }).end();
  // A loop, and a check that sets its cookie and never accepts it.
  if (path === '/loop' || path === '/stubborn') {
    res.writeHead(301, path === '/loop' ? { location: path } : { location: path, 'set-cookie': 'spin=1' });
    return res.end();
  }
  if (!/(?:^|; )visitor=v\d+(?:;|$)/.test(req.headers.cookie ?? '')) {
    res.writeHead(302, { location: path, 'set-cookie': [`visitor=v${++visitors}; Path=/; HttpOnly`, 'tracking=; Max-Age=0'] });
    return res.end();
  }
  if (path === '/robots.txt') {
    res.writeHead(404);
    return res.end();
  }
  const m = /^\/(?:p\/(\d+))?$/.exec(path);
  if (m === null) {
    res.writeHead(404);
    return res.end();
  }
  const i = Number(m[1] ?? 0);
  res.writeHead(200, { 'content-type': 'text/html' });
  const links = [1, 2].map((k) => `<a href="/p/${(i * 2 + k) % PAGES}">next</a>`).join(' ');
  res.end(`<html><body><h1>page ${i}</h1><p>${'words of its own '.repeat(i + 3)}</p>${links}</body></html>`);
});

const options = (extra: object) => ({
  seeds: [`http://check.test:${site.port()}/`],
  agent: AGENT,
  allowPrivate: true,
  resolve: async () => ['127.0.0.1'],
  politeness: { minDelayMs: 5, startDelayMs: 5 },
  ...extra,
});

describe('a cookie check', () => {
  it('with the cookie jar the site is crawled whole, each page once, the recorded requests carrying the cookie', async () => {
    asked.length = 0;
    visitors = 0;
    const got = new Map<string, number>();
    const heads: string[] = [];
    const summary = await crawl(options({ http: { record: true } }), (page) => {
      got.set(new URL(page.url).pathname, page.status);
      if (page.exchange !== undefined) heads.push(Buffer.from(page.exchange.request).toString('latin1'));
    });
      expect(summary.reason).toBe('drained');
      // The seed answered the check once (robots.txt took the cookie first) and then itself.
      expect([...got.keys()].sort()).toEqual(['/', ...Array.from({ length: PAGES - 1 }, (_, i) => `/p/${i + 1}`), '/p/0'].sort());
      expect([...got.values()].every((s) => s === 200)).toBe(true);
      // One visitor: only the very first request came without the cookie.
      expect(visitors).toBe(1);
      expect(asked.filter((a) => a.cookie === undefined)).toEqual([{ path: '/robots.txt', cookie: undefined }]);
      expect(asked.filter((a) => a.path !== '/robots.txt').every((a) => a.cookie === 'visitor=v1')).toBe(true);
      const pages = asked.filter((a) => a.path !== '/robots.txt').map((a) => a.path);
      expect(pages.length).toBe(new Set(pages).size);
      expect(summary.counts.selfRedirects).toBe(0);
      // What a WARC writer archives: the requests as sent, cookie included.
      expect(heads.length).toBe(PAGES + 1); // / and /p/0 … /p/11
      expect(heads.every((r) => /\r\ncookie: visitor=v1\r\n/i.test(r))).toBe(true);
  });

  it('a page answering the check is fetched again with its cookie (no robots.txt took it first)', async () => {
    asked.length = 0;
    visitors = 0;
    const got: [string, number][] = [];
    const summary = await crawl(options({ robots: false }), (page) => void got.push([new URL(page.url).pathname, page.status]));
    expect(summary.reason).toBe('drained');
    expect(got[0]).toEqual(['/', 302]);
    expect(got.filter(([, s]) => s === 200).length).toBe(PAGES + 1);
    expect(asked.slice(0, 2)).toEqual([
      { path: '/', cookie: undefined },
      { path: '/', cookie: 'visitor=v1' },
    ]);
    expect(visitors).toBe(1);
    expect(summary.counts).toMatchObject({ redirects: 1, selfRedirects: 1, ok: PAGES + 1 });
  });

  it('a servlet moving its session id from the URL to a cookie: one redirect, then the page', async () => {
    asked.length = 0;
    const got: [string, number][] = [];
    await crawl(options({ seeds: [`http://check.test:${site.port()}/java`], robots: false }), (page) => void got.push([new URL(page.url).pathname, page.status]));
    expect(got).toEqual([
      ['/java', 302],
      ['/java', 200],
    ]);
    expect(asked.map((a) => [a.path, a.cookie])).toEqual([
      ['/java', undefined],
      ['/java', 'JSESSIONID=s1'],
    ]);
  });

  it('a check that bounces through another URL and back: the page is fetched again with its cookie; a loop ends after one more lap', async () => {
    asked.length = 0;
    const got: [string, number][] = [];
    const summary = await crawl(options({ seeds: [`http://check.test:${site.port()}/rt`], robots: false }), (page) => void got.push([new URL(page.url).pathname, page.status]));
    expect(summary.reason).toBe('drained');
    expect(got).toEqual([
      ['/rt', 302],
      ['/check', 302],
      ['/rt', 200],
    ]);
    expect(asked.map((a) => [a.path, a.cookie])).toEqual([
      ['/rt', undefined],
      ['/check?back=%2Frt', undefined],
      ['/rt', 'seen=1'],
    ]);
    // Without cookies the round trip ends at the check, as before.
    asked.length = 0;
    await crawl(options({ seeds: [`http://check.test:${site.port()}/rt`], robots: false, cookies: false }), () => undefined);
    expect(asked.map((a) => a.path)).toEqual(['/rt', '/check?back=%2Frt']);
    // A loop that sets a cookie at every hop: each URL once more, then it ends.
    asked.length = 0;
    const loop = await crawl(options({ seeds: [`http://check.test:${site.port()}/ping`], robots: false }), () => undefined);
    expect(loop.reason).toBe('drained');
    expect(asked.map((a) => a.path)).toEqual(['/ping', '/pong', '/ping', '/pong']);
  });

  it('without cookies a redirect to itself ends the URL at once, and the summary names the cause', async () => {
    asked.length = 0;
    const got: Page[] = [];
    const summary = await crawl(options({ cookies: false, robots: false }), (page) => void got.push(page));
    expect(summary.reason).toBe('drained');
    expect(asked).toEqual([{ path: '/', cookie: undefined }]);
    expect(got.map((p) => [p.status, p.error])).toEqual([[302, 'redirect to itself, and no cookie to send with a retry (a loop; cookies are off)']]);
    expect(summary.counts).toMatchObject({ ok: 0, redirects: 1, selfRedirects: 1 });
    expect(nothingFetched(summary, false)).toBe('1 answer(s) redirected to the page itself, a cookie check — run without --no-cookies');
    expect(nothingFetched(summary, true)).toBe('1 answer(s) redirected to the page itself, cookies kept and sent back (a check that wants a script to run, or a loop)');
  });

  it('with cookies, a loop that sets none ends at once; one that sets a cookie and never takes it ends after retryLimit retries', async () => {
    asked.length = 0;
    const quiet = await crawl(options({ seeds: [`http://check.test:${site.port()}/loop`], robots: false }), () => undefined);
    expect(asked.map((a) => a.path)).toEqual(['/loop']);
    expect(quiet.counts).toMatchObject({ redirects: 1, selfRedirects: 1 });
    asked.length = 0;
    const got: number[] = [];
    const stubborn = await crawl(options({ seeds: [`http://check.test:${site.port()}/stubborn`], robots: false, retryLimit: 2 }), (page) => void got.push(page.status));
    expect(stubborn.reason).toBe('drained');
    // The first answer and two retries, the retries with the cookie it set.
    expect(asked.map((a) => a.path)).toEqual(['/stubborn', '/stubborn', '/stubborn']);
    expect(asked.map((a) => a.cookie)).toEqual([undefined, 'spin=1', 'spin=1']);
    expect(got).toEqual([301, 301, 301]);
    expect(stubborn.counts).toMatchObject({ ok: 0, redirects: 3, selfRedirects: 3 });
  });

  it('a redirect to itself is transient in the outcome table; to anywhere else, a redirect', () => {
    expect(isSelfRedirect({ status: 302, url: 'http://a.test/', location: 'http://a.test/' })).toBe(true);
    expect(isSelfRedirect({ status: 302, url: 'http://a.test/', location: 'http://a.test/x' })).toBe(false);
    expect(isSelfRedirect({ status: 304, url: 'http://a.test/', location: 'http://a.test/' })).toBe(false);
    expect(isSelfRedirect({ status: 200, url: 'http://a.test/', location: 'http://a.test/' })).toBe(false);
  });
});
