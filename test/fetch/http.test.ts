import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { brotliCompressSync, constants, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { errors as undiciErrors } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { classify } from '../../src/fetch/http.js';
import { Tally } from '../../src/engine/tally.js';
import {
  DnsCache,
  Engine,
  type FetchRequest,
  HttpFetcher,
  type HttpFetcherOptions,
  InvalidArgumentError,
  type Resolver,
  RobotsCache,
  canonPolicy,
  contentFp,
  normalizeBody,
  readBody,
  type BodyCaps,
  simhashText,
  churnFp,
  extractLinks,
  xxh64,
} from '../../src/index.js';
import { blackhole } from './blackhole.js';
import { type Handler, type TestServer, startServer } from './server.js';

const MiB = 1024 * 1024;
const AGENT = 'MeguriTest/1.0 (+https://example.com/bot)';

/** Maps `*.test` names to loopback addresses; counts calls. */
function testResolver(map: Record<string, string>) {
  const calls: string[] = [];
  const resolver: Resolver = async (name) => {
    calls.push(name);
    const ip = map[name];
    if (ip === undefined) throw Object.assign(new Error(`ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return ip;
  };
  return { resolver, calls };
}

let rowSeq = 0;
function request(url: string, extra: Partial<FetchRequest> = {}): FetchRequest {
  return { row: ++rowSeq, key: new Uint32Array(4), url, host: new URL(url).hostname, depth: 0, dispatchedAtMs: 0, ...extra };
}

const servers: TestServer[] = [];
const fetchers: HttpFetcher[] = [];
async function serve(handler: Handler, host?: string): Promise<TestServer> {
  const s = await startServer(handler, host);
  servers.push(s);
  return s;
}
function fetcher(options: Partial<HttpFetcherOptions> = {}): HttpFetcher {
  const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, dns: new DnsCache({ resolver: testResolver({}).resolver }), ...options });
  fetchers.push(f);
  return f;
}
afterEach(async () => {
  await Promise.all(fetchers.splice(0).map((f) => f.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A sitemap of `n` URLs (`url(i)`), each with a lastmod and `extra` markup. */
function sitemapXml(n: number, url: (i: number) => string, extra = ''): string {
  const entries = Array.from({ length: n }, (_, i) => `<url><loc>${url(i)}</loc><lastmod>2026-11-01T10:00:00+00:00</lastmod>${extra}</url>`);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">\n${entries.join('\n')}\n</urlset>`;
}

const HTML = `<!doctype html><html><head>
  <link rel="canonical" href="/canonical-page">
  </head><body>
  <a href="/a">A</a>   <a href="b?x=1#frag">B</a>
  <a href="https://elsewhere.test/c" rel="nofollow">C</a> <a href="mailto:x@y">mail</a>
</body></html>`;

describe('HttpFetcher: a page', () => {
  it('GETs with the User-Agent, returns status, headers that matter, body, fingerprint, links and timing', async () => {
    const s = await serve((req, res) => {
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        etag: '"v1"',
        'last-modified': 'Tue, 15 Nov 1994 08:12:31 GMT',
        date: 'Tue, 15 Nov 1994 08:20:00 GMT',
        'retry-after': '5',
      });
      res.end(HTML);
    });
    const f = fetcher();
    const out = await f.fetch(request(`${s.origin}/dir/page`), new AbortController().signal);
    expect(out).toMatchObject({
      status: 200,
      etag: '"v1"',
      lastModified: Date.UTC(1994, 10, 15, 8, 12, 31) / 1000,
      serverDate: Date.UTC(1994, 10, 15, 8, 20, 0) / 1000,
      contentType: 'text/html; charset=utf-8',
      retryAfter: '5',
      ip: '127.0.0.1',
      canonical: `${s.origin}/canonical-page`,
    });
    expect(out.error).toBeUndefined();
    expect(new TextDecoder().decode(out.body)).toBe(HTML);
    expect(out.contentFp).toBe(xxh64(normalizeBody(new TextEncoder().encode(HTML))));
    expect(out.simhash).toBe(simhashText('A B C mail'));
    expect(out.links).toEqual([
      { url: `${s.origin}/a` },
      { url: `${s.origin}/dir/b?x=1` },
      { url: 'https://elsewhere.test/c', nofollow: true },
    ]);
    // Links go through src/url's canonicalize under the crawl's policy.
    const strict = fetcher({ canonPolicy: canonPolicy({ queryAllow: ['page'] }) });
    expect((await strict.fetch(request(`${s.origin}/dir/page`), new AbortController().signal)).links![1]).toEqual({ url: `${s.origin}/dir/b` });
    expect(out.latencyMs).toBeGreaterThanOrEqual(0);
    expect(out.fetchMs).toBeGreaterThanOrEqual(out.latencyMs!);
    const seen = s.requests[0]!;
    expect(seen.headers['user-agent']).toBe(AGENT);
    expect(seen.headers['accept-encoding']).toBe('gzip, deflate, br');
    expect(seen.headers['host']).toBe(`127.0.0.1:${s.port}`);
    expect(seen.path).toBe('/dir/page');
  });

  it('churn fingerprint: a clock, a counter, an ad and a CSRF token leave it; an edit of the text moves it (issue 21)', async () => {
    const page = (clock: string, views: number, ad: string, csrf: string, extra: string): string =>
      `<header>${clock}</header><main><h1>Title</h1><p>${views} views</p><p>Body text here.${extra}</p>` +
      `<div class="ad-slot">${ad}</div><form><input type="hidden" name="csrf" value="${csrf}"></form></main>`;
    const pages: Record<string, string> = {
      '/1': page('10:01', 12, 'Buy shoes', 'tok1', ''),
      '/2': page('10:07', 19, 'Try an app', 'tok2', ''),
      '/3': page('10:07', 19, 'Try an app', 'tok2', ' A new sentence.'),
    };
    const s = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(pages[req.url!]!);
    });
    const f = fetcher();
    const [a, b, c] = await Promise.all(['/1', '/2', '/3'].map((p) => f.fetchUrl(`${s.origin}${p}`)));
    expect(a!.churnFp).toBe(churnFp(extractLinks(pages['/1']!, s.origin, { collectText: true }).mainText!));
    expect(a!.contentFp).not.toBe(b!.contentFp);
    expect(b!.churnFp).toBe(a!.churnFp);
    expect(c!.churnFp).not.toBe(b!.churnFp);
  });

  it('fingerprint and simhash: reflow keeps the fingerprint, markup never moves the simhash', async () => {
    const pages: Record<string, [string, string]> = {
      '/a': ['text/html', '  <p>Hello \n\t world</p>\n'],
      '/b': ['text/html', '<p>Hello world</p>'],
      '/c': ['text/html', '<div class="x"><b>hello</b> <i>WORLD</i><script>var hidden = 1;</script><style>p{}</style></div>'],
      '/d': ['text/plain', 'hello world'],
      '/e': ['application/json', '{"hello": "world"}'],
      '/f': ['image/png', 'hello world'],
    };
    const s = await serve((req, res) => {
      const [type, body] = pages[req.url!]!;
      res.writeHead(200, { 'content-type': type }).end(body);
    });
    const f = fetcher();
    const out: Record<string, Awaited<ReturnType<HttpFetcher['fetchUrl']>>> = {};
    for (const p of Object.keys(pages)) out[p] = await f.fetchUrl(`${s.origin}${p}`);
    expect(out['/a']!.contentFp).toBe(out['/b']!.contentFp);
    expect(out['/a']!.contentFp).toBe(contentFp(new TextEncoder().encode('<p>Hello world</p>')));
    expect(out['/c']!.contentFp).not.toBe(out['/b']!.contentFp);
    const words = simhashText('hello world');
    for (const p of ['/a', '/b', '/c', '/d', '/e']) expect(out[p]!.simhash, p).toBe(words);
    expect(out['/f']!.simhash).toBeUndefined();
    expect(out['/f']!.contentFp).toBeTypeOf('bigint');
  });

  it('reuses one keep-alive connection for an origin', async () => {
    const s = await serve((_req, res) => res.end('ok'));
    const f = fetcher();
    for (let i = 0; i < 4; i++) expect((await f.fetch(request(`${s.origin}/${i}`), new AbortController().signal)).status).toBe(200);
    expect(s.requests).toHaveLength(4);
    expect(s.connections).toBe(1);
    expect(f.poolCount).toBe(1);
  });

  it('non-2xx: status and headers kept, body drained not returned', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/gone') res.writeHead(404, { 'content-type': 'text/html' }).end('<a href="/x">not found</a>');
      else res.writeHead(503, { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }).end('busy');
    });
    const f = fetcher();
    const gone = await f.fetch(request(`${s.origin}/gone`), new AbortController().signal);
    expect(gone.status).toBe(404);
    expect([gone.body, gone.contentFp, gone.links]).toEqual([undefined, undefined, undefined]);
    const busy = await f.fetch(request(`${s.origin}/busy`), new AbortController().signal);
    expect(busy).toMatchObject({ status: 503, retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT' });
    expect(busy.error).toBeUndefined();
    expect(s.connections).toBe(1);
  });

  it('a CDN bot challenge (cf-mitigated, x-vercel-mitigated) is named as one, and the summary shows it', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/cf') res.writeHead(403, { 'cf-mitigated': 'challenge', 'content-type': 'text/html' }).end('<title>Just a moment...</title>');
      else if (req.url === '/vercel') res.writeHead(429, { 'x-vercel-mitigated': 'Challenge' }).end();
      else res.writeHead(403, { 'cf-mitigated': 'block' }).end();
    });
    const f = fetcher();
    const get = (path: string) => f.fetch(request(`${s.origin}${path}`), new AbortController().signal);
    expect(await get('/cf')).toMatchObject({ status: 403, error: 'a bot challenge (cf-mitigated: challenge): the site wants a browser to run its script, and meguri runs none' });
    expect((await get('/vercel')).error).toMatch(/^a bot challenge \(x-vercel-mitigated: challenge\)/);
    expect((await get('/blocked')).error).toBeUndefined();
    const tally = new Tally();
    tally.outcome({ url: `${s.origin}/cf`, host: 'x' }, 403, false, undefined, (await get('/cf')).error);
    expect(tally.failingHosts()[0]!.reason).toBe('HTTP 403, a bot challenge (cf-mitigated: challenge): the site wants a browser to run its script, and meguri runs none');
  });

  it('non-HTML bodies are fingerprinted, not parsed for links; X-Robots-Tag is honoured', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/plain') res.writeHead(200, { 'content-type': 'text/plain' }).end('<a href="/x">');
      else if (req.url === '/nofollow') res.writeHead(200, { 'content-type': 'text/html', 'x-robots-tag': 'meguritest: nofollow' }).end('<a href="/x">');
      else if (req.url === '/other') res.writeHead(200, { 'content-type': 'text/html', 'x-robots-tag': 'otherbot: noindex, nofollow' }).end('<a href="/x">');
      else if (req.url === '/digits') res.writeHead(200, { 'content-type': 'text/html', 'x-robots-tag': ['MJ12bot: noindex, nofollow', 'Bot.v2: none'] }).end('<a href="/x">');
      else res.writeHead(200, { 'content-type': 'text/html', 'x-robots-tag': ['noarchive', 'noindex'] }).end('<meta name="MeguriTest" content="nofollow"><a href="/x">');
    });
    const f = fetcher();
    const plain = await f.fetch(request(`${s.origin}/plain`), new AbortController().signal);
    expect(plain.links).toBeUndefined();
    expect(plain.contentFp).toBeTypeOf('bigint');
    const headerNofollow = await f.fetch(request(`${s.origin}/nofollow`), new AbortController().signal);
    expect(headerNofollow.links).toEqual([{ url: `${s.origin}/x`, nofollow: true }]);
    // The page-level directive is on the outcome too (the noindex lesson reads it).
    expect(headerNofollow.nofollow).toBe(true);
    expect(headerNofollow.noindex).toBeUndefined();
    const other = await f.fetch(request(`${s.origin}/other`), new AbortController().signal);
    expect(other.links).toEqual([{ url: `${s.origin}/x` }]);
    expect(other.noindex).toBeUndefined();
    expect(other.nofollow).toBeUndefined();
    // An agent named with digits or a dot is another agent too.
    const digits = await f.fetch(request(`${s.origin}/digits`), new AbortController().signal);
    expect(digits).toMatchObject({ links: [{ url: `${s.origin}/x` }] });
    expect([digits.noindex, digits.nofollow]).toEqual([undefined, undefined]);
    const agentMeta = await f.fetch(request(`${s.origin}/meta`), new AbortController().signal);
    expect(agentMeta).toMatchObject({ noindex: true, nofollow: true, links: [{ url: `${s.origin}/x`, nofollow: true }] });
    expect(plain.nofollow).toBeUndefined();
  });

  it('reads a Link rel=canonical header (a PDF naming its page), its next/prev and hreflang links, and a Refresh header as a redirect written in the page (a link marked refresh)', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/doc.pdf') res.writeHead(200, { 'content-type': 'application/pdf', link: '</style.css>; rel=preload, <https://site.test/doc?x=1#f>; rel="alternate canonical"' }).end('%PDF-1.4');
      else if (req.url === '/both') res.writeHead(200, { 'content-type': 'text/html', link: '</other>; rel=canonical' }).end('<link rel=canonical href="/mine"><a href="/x">');
      else if (req.url === '/moved') res.writeHead(200, { 'content-type': 'text/html', refresh: '0; url=/new' }).end('<a href="/x">x</a>');
      else if (req.url === '/quiet') res.writeHead(200, { 'content-type': 'text/html', refresh: '0; url=/new', 'x-robots-tag': 'nofollow' }).end('');
      else if (req.url === '/reload') res.writeHead(200, { 'content-type': 'text/html', refresh: '30', link: '</p>; rel=next' }).end('<a href="/x">');
      else if (req.url === '/both-refresh') res.writeHead(200, { 'content-type': 'text/html', refresh: '0; url=/from-header' }).end('<meta http-equiv="refresh" content="0; url=/from-meta">');
      else if (req.url === '/timeout') res.writeHead(200, { 'content-type': 'text/html', refresh: '900; url=/login' }).end('<meta http-equiv="refresh" content="0; url=/from-meta">');
      else if (req.url === '/api')
        res
          .writeHead(200, { 'content-type': 'application/json', link: '</list?page=2>; title="Page 2, of 9; more"; rel="next", </de/list>; hreflang=de; rel=alternate, </feed>; rel=alternate, </x>; rel=prev' })
          .end('{}');
      else res.writeHead(200, { 'content-type': 'text/html', refresh: '0; url=/x' }).end('<a href="/x">');
    });
    const f = fetcher();
    const get = (path: string) => f.fetch(request(`${s.origin}${path}`), new AbortController().signal);
    expect((await get('/doc.pdf')).canonical).toBe('https://site.test/doc?x=1');
    // The body's own canonical wins over the header's.
    expect((await get('/both')).canonical).toBe(`${s.origin}/mine`);
    expect((await get('/moved')).links).toEqual([{ url: `${s.origin}/x` }, { url: `${s.origin}/new`, refresh: true }]);
    expect((await get('/quiet')).links).toEqual([{ url: `${s.origin}/new`, nofollow: true, refresh: true }]);
    const reload = await get('/reload');
    expect([reload.links, reload.canonical]).toEqual([[{ url: `${s.origin}/x` }, { url: `${s.origin}/p` }], undefined]);
    // A quoted comma is no link boundary; an alternate without hreflang (a feed) is no link.
    expect((await get('/api')).links).toEqual([{ url: `${s.origin}/list?page=2` }, { url: `${s.origin}/de/list` }, { url: `${s.origin}/x` }]);
    // The header is read before the body: its target is the page's redirect, the meta tag's a link.
    expect((await get('/both-refresh')).links).toEqual([{ url: `${s.origin}/from-meta` }, { url: `${s.origin}/from-header`, refresh: true }]);
    // A session timeout is no redirect, and the browser acts on it, not on the body's: no mark.
    expect((await get('/timeout')).links).toEqual([{ url: `${s.origin}/from-meta` }, { url: `${s.origin}/login` }]);
    // A refresh to a link the body already has adds no link: it marks that one.
    expect((await get('/dup')).links).toEqual([{ url: `${s.origin}/x`, refresh: true }]);
  });

  it("follows the feed a seed's page names (autodiscovery), read as a sitemap; not a deeper page's, nor with seedFeeds off", async () => {
    const s = await serve((req, res) => {
      if (req.url === '/feed.xml') {
        res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(`<?xml version="1.0"?><rss version="2.0"><channel><item><link>${s.origin}/news/only-in-feed</link><pubDate>Sun, 06 Dec 2026 09:00:00 GMT</pubDate></item></channel></rss>`);
      } else {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<head><link rel="alternate" type="application/rss+xml" href="/feed.xml"><link rel="alternate" type="application/rss+xml" href="/post/comments/feed/"></head><a href="/x">x</a>');
      }
    });
    const page = (f: HttpFetcher, depth: number) => f.fetch(request(`${s.origin}/`, { depth }), new AbortController().signal);
    const on = fetcher();
    expect((await page(on, 0)).links).toEqual([{ url: `${s.origin}/feed.xml`, feed: true }, { url: `${s.origin}/post/comments/feed/`, feed: true }, { url: `${s.origin}/x` }]);
    // A page below the seeds: every post of a blog names its own comment feed.
    expect((await page(on, 1)).links).toEqual([{ url: `${s.origin}/x` }]);
    expect((await page(fetcher({ seedFeeds: false }), 0)).links).toEqual([{ url: `${s.origin}/x` }]);
    // The feed is read as the sitemap it is (not a page for --max-pages): its item is a link.
    const feed = await on.fetch(request(`${s.origin}/feed.xml`, { depth: 1 }), new AbortController().signal);
    expect([feed.sitemap, feed.links?.map((l) => l.url)]).toEqual([true, [`${s.origin}/news/only-in-feed`]]);
  });

  it('decodes a legacy charset before extracting links', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' });
      res.end(Buffer.from('<a href="/caf\xe9">x</a>', 'latin1'));
    });
    const out = await fetcher().fetch(request(`${s.origin}/`), new AbortController().signal);
    expect(out.links).toEqual([{ url: `${s.origin}/caf%C3%A9` }]);
  });
});

describe('HttpFetcher: conditional GET', () => {
  it('sends If-None-Match / If-Modified-Since from the stored validators; 304 has no body', async () => {
    const lastModified = Date.UTC(2024, 0, 2, 3, 4, 5) / 1000;
    const s = await serve((req, res) => {
      const inm = req.headers['if-none-match'];
      const ims = req.headers['if-modified-since'];
      if (inm === '"v7"' || (ims !== undefined && Date.parse(ims) / 1000 >= lastModified)) {
        res.writeHead(304, { etag: '"v7"' }).end();
        return;
      }
      res.writeHead(200, { etag: '"v7"', 'last-modified': new Date(lastModified * 1000).toUTCString(), 'content-type': 'text/html' }).end('<p>fresh</p>');
    });
    const f = fetcher();
    const first = await f.fetch(request(`${s.origin}/p`), new AbortController().signal);
    expect(first).toMatchObject({ status: 200, etag: '"v7"', lastModified });
    const byEtag = await f.fetch(request(`${s.origin}/p`, { etag: first.etag }), new AbortController().signal);
    expect(byEtag).toMatchObject({ status: 304, etag: '"v7"' });
    expect([byEtag.body, byEtag.contentFp, byEtag.links]).toEqual([undefined, undefined, undefined]);
    const byDate = await f.fetch(request(`${s.origin}/p`, { lastModified: first.lastModified }), new AbortController().signal);
    expect(byDate.status).toBe(304);
    expect(s.requests[1]!.headers['if-none-match']).toBe('"v7"');
    expect(s.requests[2]!.headers['if-modified-since']).toBe('Tue, 02 Jan 2024 03:04:05 GMT');
    expect(s.requests[0]!.headers['if-none-match']).toBeUndefined();
    // A stored validator that is not valid header text is not sent (and does not break the fetch).
    const hostile = await f.fetch(request(`${s.origin}/p`, { etag: '"v7"\r\nX-Injected: 1', lastModified: -5 }), new AbortController().signal);
    expect(hostile.status).toBe(200);
    expect(s.requests[3]!.headers['x-injected']).toBeUndefined();
    expect(s.requests[3]!.headers['if-modified-since']).toBeUndefined();
  });
});

describe('HttpFetcher: redirects are returned, not followed', () => {
  it('resolves Location against the request URL and makes exactly one request', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/old/page') res.writeHead(301, { location: '../new?x=1' }).end();
      else res.end('should not be fetched');
    });
    const out = await fetcher().fetch(request(`${s.origin}/old/page`), new AbortController().signal);
    expect(out).toMatchObject({ status: 301, location: `${s.origin}/new?x=1` });
    expect(out.body).toBeUndefined();
    expect(s.requests).toHaveLength(1);
  });

  it('a Location or Link with raw UTF-8 bytes is read as UTF-8 (as browsers do); bytes that are not UTF-8 stay Latin-1', async () => {
    // Node writes header strings one byte per character: a string of the UTF-8 bytes sends them raw.
    const raw = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');
    const s = await serve((req, res) => {
      if (req.url === '/utf8') res.writeHead(301, { location: raw('/café/東京?q=ü') }).end();
      else if (req.url === '/latin1') res.writeHead(301, { location: '/caf\u00e9' }).end();
      else res.writeHead(200, { 'content-type': 'text/html', link: raw('</liste/été>; rel="next"') }).end('<html><body>x</body></html>');
    });
    for (const record of [false, true]) {
      const f = fetcher({ record });
      const utf8 = await f.fetch(request(`${s.origin}/utf8`), new AbortController().signal);
      expect(utf8.location, `record ${record}`).toBe(`${s.origin}/caf%C3%A9/%E6%9D%B1%E4%BA%AC?q=%C3%BC`);
      const latin1 = await f.fetch(request(`${s.origin}/latin1`), new AbortController().signal);
      expect(latin1.location, `record ${record}`).toBe(`${s.origin}/caf%C3%A9`);
      const page = await f.fetch(request(`${s.origin}/page`), new AbortController().signal);
      expect(page.links?.map((l) => l.url), `record ${record}`).toContain(`${s.origin}/liste/%C3%A9t%C3%A9`);
    }
  });

  it('refuses a Location longer than maxUrlLength; a redirect without Location is just a status', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/long') res.writeHead(302, { location: `/${'x'.repeat(300)}` }).end();
      else res.writeHead(302).end();
    });
    const f = fetcher({ maxUrlLength: 100 });
    const long = await f.fetch(request(`${s.origin}/long`), new AbortController().signal);
    expect(long.location).toBeUndefined();
    expect(long.error).toMatch(/exceeds maxUrlLength 100/);
    const none = await f.fetch(request(`${s.origin}/none`), new AbortController().signal);
    expect(none.status).toBe(302);
    expect(none.location).toBeUndefined();
  });
});

describe('HttpFetcher: caps and decoding', () => {
  it('a page with more distinct links than maxLinks: the first ones are kept and linksCapped says so', async () => {
    const page = (n: number): string => `<html><body>${Array.from({ length: n }, (_, i) => `<a href="/p${i}">p</a>`).join(' ')}</body></html>`;
    const s = await serve((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page(req.url === '/many' ? 12 : 5)));
    const f = fetcher({ maxLinks: 5 });
    const many = await f.fetch(request(`${s.origin}/many`), new AbortController().signal);
    expect(many.links?.map((l) => l.url)).toEqual([0, 1, 2, 3, 4].map((i) => `${s.origin}/p${i}`));
    expect(many.linksCapped).toBe(true);
    const exact = await f.fetch(request(`${s.origin}/five`), new AbortController().signal);
    expect(exact.links).toHaveLength(5);
    expect(exact.linksCapped).toBeUndefined();
  });

  it('reads a sitemap past a page’s cap, to the protocol’s 50 MB (maxSitemapBytes): a full 50,000-URL sitemap of 12 MB keeps every URL', async () => {
    // Cut at the page cap (10 MiB), this sitemap lost its last 9,500 URLs or so.
    let xml = '';
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(xml);
    });
    xml = sitemapXml(50_000, (i) => `${s.origin}/products/category-${i % 97}/item-${i}-a-fairly-long-descriptive-slug-for-the-product-page.html`, '<image:image><image:loc>https://img.test/i.jpg</image:loc></image:image>');
    expect(xml.length).toBeGreaterThan(12_000_000);
    const out = await fetcher().fetch(request(`${s.origin}/sitemap.xml`), new AbortController().signal);
    expect(out).toMatchObject({ status: 200, sitemap: true });
    expect(out.truncated).toBeUndefined();
    expect(out.links).toHaveLength(50_000);
  });

  it('only a sitemap or sitemap index is read past the page cap; identity or gzip-coded; up to maxSitemapBytes; archived whole', async () => {
    const bodies = new Map<string, { type: string; body: string; gzip?: boolean }>();
    const s = await serve((req, res) => {
      const b = bodies.get(req.url ?? '');
      if (b === undefined) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': b.type, ...(b.gzip ? { 'content-encoding': 'gzip' } : {}) });
      res.end(b.gzip ? gzipSync(b.body) : b.body);
    });
    const urlset = sitemapXml(3_000, (i) => `${s.origin}/p/${i}`);
    const index = `<?xml version="1.0"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${Array.from({ length: 3_000 }, (_, i) => `<sitemap><loc>${s.origin}/sm/${i}.xml</loc></sitemap>`).join('\n')}</sitemapindex>`;
    const feed = `<?xml version="1.0"?>\n<rss version="2.0"><channel>${Array.from({ length: 3_000 }, (_, i) => `<item><link>${s.origin}/post/${i}</link></item>`).join('\n')}</channel></rss>`;
    const html = `<!doctype html><html><body>${Array.from({ length: 3_000 }, (_, i) => `<a href="/p/${i}">page ${i}</a>`).join('\n')}</body></html>`;
    bodies.set('/sitemap.xml', { type: 'application/xml', body: urlset });
    bodies.set('/coded.xml', { type: 'application/xml', body: urlset, gzip: true });
    bodies.set('/index.xml', { type: 'text/xml', body: index });
    bodies.set('/feed.xml', { type: 'application/rss+xml', body: feed });
    bodies.set('/page.html', { type: 'text/html', body: html });
    bodies.set('/as-html.xml', { type: 'text/html', body: urlset });
    for (const b of [urlset, index, feed, html]) expect(b.length).toBeGreaterThan(64 * 1024);
    const caps = { maxBodyBytes: 64 * 1024, maxDecodedBytes: 64 * 1024 };
    const get = (f: HttpFetcher, path: string) => f.fetch(request(`${s.origin}${path}`), new AbortController().signal);

    const f = fetcher({ ...caps, maxSitemapBytes: MiB, record: true });
    for (const path of ['/sitemap.xml', '/coded.xml', '/index.xml']) {
      const out = await get(f, path);
      expect(out, path).toMatchObject({ status: 200, sitemap: true });
      expect(out.truncated, path).toBeUndefined();
      expect(out.links, path).toHaveLength(3_000);
      // The WARC capture grew with the body: the archived sitemap is whole.
      expect(out.exchange?.truncated, path).toBe(false);
      const served = bodies.get(path)!;
      expect(out.exchange!.response.length, path).toBeGreaterThan(served.gzip ? gzipSync(served.body).length : served.body.length);
    }
    // Anything else keeps the page cap: a feed, an HTML page, a sitemap served as HTML.
    for (const path of ['/feed.xml', '/page.html', '/as-html.xml']) {
      const out = await get(f, path);
      expect(out.truncated, path).toBe(true);
      expect(out.exchange?.truncated, path).toBe(true);
    }
    // A caller's own cap for one fetch stands (fetchUrl's maxBodyBytes).
    const own = await f.fetchUrl(`${s.origin}/sitemap.xml`, undefined, { maxBodyBytes: 32 * 1024 });
    expect(own.truncated).toBe(true);
    // robots.txt is never read as a sitemap, whatever it holds: its parse limit stands.
    bodies.set('/robots.txt', { type: 'text/plain', body: `${urlset}${'#'.repeat(600 * 1024)}` });
    const robots = await fetcher({ maxSitemapBytes: MiB }).robotsFetch()(`${s.origin}/robots.txt`, new AbortController().signal);
    expect(robots).toMatchObject({ status: 200, truncated: true });
    // maxSitemapBytes below the body: cut there, the entries before the cut kept.
    const small = await get(fetcher({ ...caps, maxSitemapBytes: 100 * 1024 }), '/sitemap.xml');
    expect(small).toMatchObject({ truncated: true, cutAt: 'sitemapCap' });
    expect(small.links!.length).toBeGreaterThan(1_000);
    expect(small.links!.length).toBeLessThan(3_000);
    // 0 (or anything under the page caps): a sitemap is read as a page.
    const off = await get(fetcher({ ...caps, maxSitemapBytes: 0 }), '/sitemap.xml');
    expect(off.truncated).toBe(true);
    expect(off.links!.length).toBeLessThan(small.links!.length);
    expect(() => fetcher({ maxSitemapBytes: -1 })).toThrow(/maxSitemapBytes/);
    // The parser reads no more than the protocol's 50 MiB: a larger cap would read bytes for nothing.
    expect(() => fetcher({ maxSitemapBytes: 52_428_801 })).toThrow(/maxSitemapBytes/);
  });

  it('at most two sitemaps are read past the page cap at once, claimed as they pass it (a small one never counts); a slow one cut by the total timeout past the cap keeps its entries', { timeout: 30_000 }, async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const held = new Set<string>();
    let xml = '';
    const small = sitemapXml(50, (i) => `http://127.0.0.1/s/${i}`);
    const s = await serve((req, res) => {
      const path = req.url ?? '';
      res.writeHead(200, { 'content-type': 'application/xml', etag: '"v1"' });
      // 40 KiB past the 16 KiB page cap, then nothing: the total timeout cuts it.
      if (path === '/stall.xml') return void res.write(xml.slice(0, 40 * 1024));
      if (path === '/early-stall.xml') return void res.write(xml.slice(0, 8 * 1024));
      if (path === '/small.xml') return void res.end(small);
      if (path.startsWith('/held-')) {
        // Past the page cap at once, the rest on release: these hold the two shares meanwhile.
        held.add(path);
        res.write(xml.slice(0, 40 * 1024));
        return void released.then(() => res.end(xml.slice(40 * 1024)));
      }
      res.end(xml);
    });
    xml = sitemapXml(2_000, (i) => `${s.origin}/p/${i}`);
    const f = fetcher({ maxBodyBytes: 16 * 1024, maxDecodedBytes: 16 * 1024, maxSitemapBytes: MiB, connectionsPerOrigin: 4 });
    const get = (path: string) => f.fetch(request(`${s.origin}${path}`), new AbortController().signal);
    const holders = [get('/held-a.xml'), get('/held-b.xml')];
    for (let waited = 0; held.size < 2 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    expect(held.size).toBe(2);
    await new Promise((r) => setTimeout(r, 500));
    // Both shares are held: a sitemap under the page cap is read whole meanwhile, and a large
    // one keeps the page cap — a body cut at it ('cap'), without validators (a recrawl's 304
    // would leave its rest unread).
    expect((await get('/small.xml')).truncated).toBeUndefined();
    const third = await get('/c.xml');
    expect(third).toMatchObject({ truncated: true, cutAt: 'cap', etag: undefined });
    release();
    for (const o of await Promise.all(holders)) {
      expect(o.truncated).toBeUndefined();
      expect(o.links).toHaveLength(2_000);
    }
    // The shares came back, once each: of three at once, two are read whole again.
    const round = await Promise.all([get('/d.xml'), get('/e.xml'), get('/f.xml')]);
    expect(round.map((o) => o.links?.length === 2_000).filter(Boolean).length).toBeGreaterThanOrEqual(2);
    expect(round.filter((o) => o.truncated === true).length).toBeLessThanOrEqual(1);
    expect((await get('/g.xml')).links).toHaveLength(2_000);
    // A slow server: the total timeout past the page cap keeps the entries read ('time'), and no
    // validators (a recrawl's 304 would leave the rest unread).
    const slow = await fetcher({ maxBodyBytes: 16 * 1024, maxDecodedBytes: 16 * 1024, maxSitemapBytes: MiB, totalTimeoutMs: 1_000 }).fetch(request(`${s.origin}/stall.xml`), new AbortController().signal);
    expect(slow).toMatchObject({ status: 200, truncated: true, sitemap: true, cutAt: 'time', etag: undefined });
    expect(slow.links!.length).toBeGreaterThan(300);
    // So is a body that goes quiet past it (the idle timeout, the common stall): 'time' too.
    const quiet = await fetcher({ maxBodyBytes: 16 * 1024, maxDecodedBytes: 16 * 1024, maxSitemapBytes: MiB, bodyTimeoutMs: 500, totalTimeoutMs: 20_000 }).fetch(request(`${s.origin}/stall.xml`), new AbortController().signal);
    expect(quiet).toMatchObject({ status: 200, truncated: true, cutAt: 'time' });
    // Before the page cap, a stall is the page's timeout, as always: fetched again.
    const early = await fetcher({ maxBodyBytes: 16 * 1024, maxDecodedBytes: 16 * 1024, maxSitemapBytes: MiB, totalTimeoutMs: 1_000 }).fetch(request(`${s.origin}/early-stall.xml`), new AbortController().signal);
    expect(early).toMatchObject({ status: 0, errorKind: 'timeout' });
  });

  it('cuts an oversized body at maxBodyBytes and marks it truncated', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let sent = 0;
      const push = (): void => {
        while (sent < 3 * MiB) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', push);
        }
        res.end();
      };
      push();
    });
    const out = await fetcher({ maxBodyBytes: MiB }).fetch(request(`${s.origin}/big`), new AbortController().signal);
    expect(out).toMatchObject({ status: 200, truncated: true });
    expect(out.body!.length).toBe(MiB);
    expect(out.contentFp).toBeTypeOf('bigint');
  });

  it('stops a gzip decompression bomb at maxDecodedBytes', async () => {
    const bomb = gzipSync(Buffer.alloc(20 * MiB));
    expect(bomb.length).toBeLessThan(100 * 1024);
    const s = await serve((_req, res) => res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/html' }).end(bomb));
    const out = await fetcher({ maxDecodedBytes: MiB }).fetch(request(`${s.origin}/bomb`), new AbortController().signal);
    expect(out).toMatchObject({ status: 200, truncated: true });
    expect(out.body!.length).toBe(MiB);
  });

  it('stops a brotli decompression bomb at maxDecodedBytes', async () => {
    const bomb = brotliCompressSync(Buffer.alloc(32 * MiB), { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
    expect(bomb.length).toBeLessThan(100 * 1024);
    const s = await serve((_req, res) => res.writeHead(200, { 'content-encoding': 'br' }).end(bomb));
    const out = await fetcher({ maxDecodedBytes: MiB }).fetch(request(`${s.origin}/bomb`), new AbortController().signal);
    expect(out).toMatchObject({ status: 200, truncated: true });
    expect(out.body!.length).toBe(MiB);
  });

  it('decodes gzip, zlib deflate, raw deflate, br and stacked codings', async () => {
    const page = Buffer.from('<a href="/decoded">ok</a>');
    const bodies: Record<string, [string, Buffer]> = {
      '/gzip': ['gzip', gzipSync(page)],
      '/xgzip': ['x-gzip', gzipSync(page)],
      '/deflate': ['deflate', deflateSync(page)],
      '/rawdeflate': ['deflate', deflateRawSync(page)],
      '/br': ['br', brotliCompressSync(page)],
      '/stacked': ['gzip, br', brotliCompressSync(gzipSync(page))],
      '/identity': ['identity', page],
    };
    const s = await serve((req, res) => {
      const [coding, body] = bodies[req.url!]!;
      res.writeHead(200, { 'content-encoding': coding, 'content-type': 'text/html' }).end(body);
    });
    const f = fetcher();
    for (const path of Object.keys(bodies)) {
      const out = await f.fetch(request(`${s.origin}${path}`), new AbortController().signal);
      expect(out.error, path).toBeUndefined();
      expect(Buffer.from(out.body!).equals(page), path).toBe(true);
      expect(out.links, path).toEqual([{ url: `${s.origin}/decoded` }]);
    }
  });

  it('a corrupt or unsupported coding keeps the status and reports errorKind body', async () => {
    const good = gzipSync(Buffer.from('<p>partly</p>'.repeat(1000)));
    const s = await serve((req, res) => {
      if (req.url === '/corrupt') res.writeHead(200, { 'content-encoding': 'gzip' }).end(Buffer.concat([good.subarray(0, 200), Buffer.alloc(200, 0xff)]));
      else if (req.url === '/zstd') res.writeHead(200, { 'content-encoding': 'zstd' }).end('whatever');
      else res.writeHead(200, { 'content-encoding': 'gzip, gzip, gzip' }).end('x');
    });
    const f = fetcher();
    const corrupt = await f.fetch(request(`${s.origin}/corrupt`), new AbortController().signal);
    expect(corrupt).toMatchObject({ status: 200, errorKind: 'body' });
    expect(corrupt.error).toMatch(/gzip decoding failed/);
    const zstd = await f.fetch(request(`${s.origin}/zstd`), new AbortController().signal);
    expect(zstd).toMatchObject({ status: 200, errorKind: 'body' });
    expect(zstd.contentFp).toBeUndefined();
    expect(zstd.error).toMatch(/unsupported content-encoding "zstd"/);
    const stacked = await f.fetch(request(`${s.origin}/stacked`), new AbortController().signal);
    expect(stacked.error).toMatch(/3 stacked content codings/);
  });

  it('response headers beyond maxHeaderBytes are a protocol failure', async () => {
    const s = await serve((_req, res) => res.writeHead(200, { 'x-huge': 'h'.repeat(40_000) }).end('x'));
    const out = await fetcher({ maxHeaderBytes: 16 * 1024 }).fetch(request(`${s.origin}/`), new AbortController().signal);
    expect(out).toMatchObject({ status: 0, errorKind: 'protocol' });
  });

  it('a URL longer than maxUrlLength, or not http(s), fails before any connection', async () => {
    const s = await serve((_req, res) => res.end('x'));
    const f = fetcher({ maxUrlLength: 64 });
    expect(await f.fetch(request(`${s.origin}/${'p'.repeat(80)}`), new AbortController().signal)).toMatchObject({ status: 0, errorKind: 'url' });
    expect(await f.fetchUrl('ftp://a.test/x')).toMatchObject({ status: 0, errorKind: 'url' });
    expect(await f.fetchUrl('not a url')).toMatchObject({ status: 0, errorKind: 'url' });
    expect(s.connections).toBe(0);
  });
});

describe('HttpFetcher: readBody (decoder internals)', () => {
  it('abandons a 1 GiB gzip bomb after reading a sliver of it', async () => {
    // 64 concatenated gzip members of 16 MiB of zeros each: 1 GiB decoded, about 1 MiB on the wire.
    const member = gzipSync(Buffer.alloc(16 * MiB));
    const wire = Buffer.concat(Array.from({ length: 64 }, () => member));
    const chunks: Buffer[] = [];
    for (let i = 0; i < wire.length; i += 16 * 1024) chunks.push(wire.subarray(i, i + 16 * 1024));
    const read = await readBody(Readable.from(chunks), ['gzip'], 100 * MiB, MiB);
    expect(read).toMatchObject({ truncated: true, cutBy: 'decoded' });
    expect(read.bytes.length).toBe(MiB);
    expect(read.wireBytes).toBeLessThan(wire.length / 10);
  });

  it('cuts on the wire cap without reporting the expected mid-stream decode error', async () => {
    const wire = gzipSync(Buffer.from(Array.from({ length: 50_000 }, (_, i) => String.fromCharCode(32 + ((i * 7) % 90))).join('')));
    const read = await readBody(Readable.from([wire]), ['gzip'], Math.floor(wire.length / 2), 10 * MiB);
    expect(read).toMatchObject({ truncated: true, cutBy: 'wire', error: undefined });
    expect(read.bytes.length).toBeGreaterThan(0);
  });

  it('asks for larger caps once, with the first 1 KiB decoded; a bomb behind a sitemap head still stops at the raised cap', async () => {
    const heads: string[] = [];
    const caps: BodyCaps = {
      raise: (head) => {
        heads.push(Buffer.from(head).toString('latin1'));
        return head.includes(0x3c) ? { maxWireBytes: 2 * MiB, maxDecodedBytes: 2 * MiB } : undefined;
      },
      claim: () => true,
      keepOnFailure: () => true,
    };
    // Hex of a hash chain: gzip cannot shrink it below half, so the coded wire passes 64 KiB too.
    let hex = '';
    for (let i = 0; hex.length < 3 * MiB; i++) hex += xxh64(Buffer.from(String(i))).toString(16).padStart(16, '0');
    const text = `<?xml version="1.0"?><urlset>${hex}`;
    const chunks = (b: Buffer): Buffer[] => Array.from({ length: Math.ceil(b.length / 300) }, (_, i) => b.subarray(i * 300, (i + 1) * 300));
    // Identity, in 300-byte pieces: asked once the fourth piece completes the head.
    const plain = await readBody(Readable.from(chunks(Buffer.from(text))), [], 64 * 1024, 64 * 1024, caps);
    expect(heads).toEqual([text.slice(0, 1024)]);
    expect(plain).toMatchObject({ truncated: true, cutBy: 'wire' });
    expect(plain.bytes.length).toBe(2 * MiB);
    // gzip-coded: the head is the decoded text, and both caps rise (the wire passes 64 KiB).
    const wire = gzipSync(text);
    expect(wire.length).toBeGreaterThan(MiB);
    const coded = await readBody(Readable.from(chunks(wire)), ['gzip'], 64 * 1024, 64 * 1024, caps);
    expect(heads).toHaveLength(2);
    expect(heads[1]).toBe(text.slice(0, 1024));
    expect(coded).toMatchObject({ truncated: true, cutBy: 'decoded' });
    expect(coded.bytes.length).toBe(2 * MiB);
    expect(plain.raised && coded.raised).toBe(true);
    // Declined: the given caps stand.
    const declined = await readBody(Readable.from([Buffer.alloc(200 * 1024, 0x61)]), [], 64 * 1024, 64 * 1024, caps);
    expect(heads).toHaveLength(3);
    expect(declined.bytes.length).toBe(64 * 1024);
    // A body under 1 KiB is never shown; nor is one a cap below 1 KiB cuts first.
    await readBody(Readable.from([Buffer.from('<urlset/>')]), [], 64 * 1024, 64 * 1024, caps);
    const tiny = await readBody(Readable.from([Buffer.from(text.slice(0, 4096))]), [], 512, 512, caps);
    expect(heads).toHaveLength(3);
    expect(tiny.bytes.length).toBe(512);
    // The claim refused as the read passes the given caps: held to them after all.
    let claims = 0;
    const claiming = (answer: boolean): BodyCaps => ({ ...caps, claim: () => (claims++, answer) });
    const refused = await readBody(Readable.from(chunks(Buffer.from(text))), [], 64 * 1024, 64 * 1024, claiming(false));
    expect(refused).toMatchObject({ truncated: true, cutBy: 'wire', raised: false });
    expect(refused.bytes.length).toBe(64 * 1024);
    expect(claims).toBe(1);
    // Raised but never past the given caps: never claimed (a small sitemap spends no budget).
    const under = await readBody(Readable.from(chunks(Buffer.from(text.slice(0, 8 * 1024)))), [], 64 * 1024, 64 * 1024, claiming(true));
    expect(under).toMatchObject({ truncated: false, raised: false });
    expect(claims).toBe(1);
    // Claimed on the decoded side too: gzip of a repetitive body stays under the wire cap.
    const squeezed = gzipSync(`<?xml version="1.0"?><urlset>${'x'.repeat(3 * MiB)}`);
    expect(squeezed.length).toBeLessThan(64 * 1024);
    const held = await readBody(Readable.from(chunks(squeezed)), ['gzip'], 64 * 1024, 64 * 1024, claiming(false));
    expect(held).toMatchObject({ truncated: true, cutBy: 'decoded', raised: false, refused: true });
    expect(held.bytes.length).toBe(64 * 1024);
    expect(claims).toBe(2);
    // Only a cap the raise lifted asks: one it left is a cut like any other, nothing to claim.
    const wireOnly: BodyCaps = { ...claiming(true), raise: () => ({ maxWireBytes: 2 * MiB, maxDecodedBytes: 64 * 1024 }) };
    const left = await readBody(Readable.from(chunks(Buffer.from(text))), [], 64 * 1024, 64 * 1024, wireOnly);
    expect(left).toMatchObject({ truncated: true, cutBy: 'decoded', raised: false, refused: false });
    expect(claims).toBe(2);
  });

  it('after a raise, a source failing past the given caps keeps what was read (cut by failure); before them, or when told not to, it rethrows', async () => {
    const raise = () => ({ maxWireBytes: MiB, maxDecodedBytes: MiB });
    const failingAfter = (bytes: number) =>
      Readable.from(
        (async function* () {
          yield Buffer.from(`<urlset>${'x'.repeat(bytes - 8)}`);
          throw new Error('total timeout after 120000 ms');
        })(),
      );
    const kept = await readBody(failingAfter(100 * 1024), [], 64 * 1024, 64 * 1024, { raise, claim: () => true, keepOnFailure: () => true });
    expect(kept).toMatchObject({ truncated: true, cutBy: 'failure', error: undefined });
    expect(kept.bytes.length).toBe(100 * 1024);
    // Within the given caps the failure is the page's, as without a raise (it is fetched again).
    await expect(readBody(failingAfter(32 * 1024), [], 64 * 1024, 64 * 1024, { raise, claim: () => true, keepOnFailure: () => true })).rejects.toThrow('total timeout');
    // The caller aborted: never a page.
    await expect(readBody(failingAfter(100 * 1024), [], 64 * 1024, 64 * 1024, { raise, claim: () => true, keepOnFailure: () => false })).rejects.toThrow('total timeout');
    // No raise: rethrown past the caps' size too (the wire cap had cut it first anyway).
    await expect(readBody(failingAfter(100 * 1024), [], 200 * 1024, 200 * 1024, { raise: () => undefined, claim: () => true, keepOnFailure: () => true })).rejects.toThrow('total timeout');
  });

  it('rethrows a failing source after cleaning up', async () => {
    const source = new Readable({
      read() {
        this.destroy(new Error('socket reset'));
      },
    });
    await expect(readBody(source, ['gzip'], MiB, MiB)).rejects.toThrow('socket reset');
  });
});

describe('HttpFetcher: timeouts, failures, abort', () => {
  it('headers timeout', async () => {
    const s = await serve(() => undefined); // never answers
    const out = await fetcher({ headersTimeoutMs: 200 }).fetch(request(`${s.origin}/`), new AbortController().signal);
    expect(out).toMatchObject({ status: 0, errorKind: 'timeout' });
    expect(out.error).toMatch(/headers timeout/);
  });

  it('body timeout (silence between chunks)', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first chunk');
    });
    const out = await fetcher({ bodyTimeoutMs: 200 }).fetch(request(`${s.origin}/`), new AbortController().signal);
    expect(out).toMatchObject({ status: 0, errorKind: 'timeout' });
    expect(out.error).toMatch(/body timeout/);
    expect(out.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('total timeout (a trickling server)', async () => {
    const timers: NodeJS.Timeout[] = [];
    const s = await serve((_req, res) => {
      res.writeHead(200);
      timers.push(setInterval(() => res.write('.'), 20));
    });
    const out = await fetcher({ totalTimeoutMs: 300, bodyTimeoutMs: 5000 }).fetch(request(`${s.origin}/`), new AbortController().signal);
    for (const t of timers) clearInterval(t);
    expect(out).toMatchObject({ status: 0, errorKind: 'timeout' });
    expect(out.error).toMatch(/total timeout after 300 ms/);
  });

  it('a response that breaks off after its headers is incomplete (a page fault), with its latency; before them it is not', async () => {
    // Raw sockets: a body shorter than its Content-Length then a close, a chunk size that is not
    // hex, and a close before any status line.
    const raw = createNetServer((sock) => {
      sock.once('data', (d) => {
        const path = d.toString('latin1').split(' ')[1];
        if (path === '/short') {
          sock.write('HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 5000\r\n\r\n<html><body>half');
          setTimeout(() => sock.destroy(), 20);
        } else if (path === '/chunk') {
          sock.write('HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ntransfer-encoding: chunked\r\n\r\n5\r\n<html\r\nZZ\r\nxx\r\n');
        } else {
          sock.destroy();
        }
      });
      sock.on('error', () => undefined);
    });
    await new Promise<void>((done) => raw.listen(0, '127.0.0.1', done));
    const origin = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
    try {
      const f = fetcher();
      const short = await f.fetch(request(`${origin}/short`), new AbortController().signal);
      expect(short).toMatchObject({ status: 0, errorKind: 'incomplete' });
      expect(short.error).toMatch(/broke off after its headers/);
      expect(short.latencyMs).toBeGreaterThanOrEqual(0);
      const chunk = await f.fetch(request(`${origin}/chunk`), new AbortController().signal);
      expect(chunk).toMatchObject({ status: 0, errorKind: 'incomplete' });
      const none = await f.fetch(request(`${origin}/none`), new AbortController().signal);
      expect(none.status).toBe(0);
      expect(none.errorKind).not.toBe('incomplete');
      expect(none.latencyMs).toBeUndefined();
    } finally {
      await new Promise((done) => raw.close(done));
    }
  });

  it('connection refused', async () => {
    const s = await serve((_req, res) => res.end());
    const origin = s.origin;
    await s.close();
    servers.splice(servers.indexOf(s), 1);
    const out = await fetcher().fetch(request(`${origin}/`), new AbortController().signal);
    expect(out).toMatchObject({ status: 0, errorKind: 'connect', ip: '127.0.0.1' });
    expect(out.error).toMatch(/ECONNREFUSED/);
  });

  it('a connection not made in time is a failure to connect, not a timeout of the page: dropped SYNs, a stalled TLS handshake', { timeout: 20_000 }, async () => {
    // The server never sees the request, so the page is not at fault (it was charged as one,
    // and pages were given up while a network dropped packets): 'connect', the host's outage.
    const hole = await blackhole();
    try {
      expect(await hole.holds()).toBe(true);
      const out = await fetcher({ connectTimeoutMs: 300 }).fetch(request(`http://127.0.0.1:${hole.port}/page`), new AbortController().signal);
      expect(out).toMatchObject({ status: 0, errorKind: 'connect', ip: '127.0.0.1' });
      expect(out.error).toBe('connect timeout after 300 ms (the request was never sent)');
    } finally {
      await hole.close();
    }
    // A TCP server that accepts and never answers the TLS ClientHello: the handshake is part
    // of making the connection.
    const silent = createNetServer((socket) => socket.resume());
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = (silent.address() as AddressInfo).port;
      const out = await fetcher({ connectTimeoutMs: 300 }).fetch(request(`https://127.0.0.1:${port}/page`), new AbortController().signal);
      expect(out).toMatchObject({ status: 0, errorKind: 'connect' });
      expect(out.error).toMatch(/^connect timeout after 300 ms/);
    } finally {
      await new Promise((r) => silent.close(r));
    }
  });

  it('abort by the caller', async () => {
    const s = await serve(() => undefined);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const out = await fetcher().fetch(request(`${s.origin}/`), ac.signal);
    expect(out).toMatchObject({ status: 0, errorKind: 'aborted' });
    const pre = new AbortController();
    pre.abort();
    expect(await fetcher().fetch(request(`${s.origin}/`), pre.signal)).toMatchObject({ status: 0, errorKind: 'aborted' });
  });

  it('a closed fetcher answers aborted', async () => {
    const f = fetcher();
    await f.close();
    expect(await f.fetchUrl('http://127.0.0.1:1/')).toMatchObject({ status: 0, errorKind: 'aborted' });
  });
});

describe('HttpFetcher: destination safety and DNS pinning', () => {
  let pinned: TestServer;
  beforeAll(async () => {
    // Listens on 127.0.0.2 only: a connection to any other address cannot reach it.
    pinned = await startServer((req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`host=${req.headers.host}`), '127.0.0.2');
  });
  afterAll(async () => {
    await pinned.close();
  });

  it('refuses loopback and private destinations without allowPrivate, before connecting', async () => {
    const s = await serve((_req, res) => res.end('should not be reached'));
    const dns = testResolver({ 'intranet.test': '10.0.0.5', 'rebind.test': '127.0.0.1', 'meta.test': '169.254.169.254', 'cgnat.test': '100.64.1.1' });
    const f = fetcher({ allowPrivate: false, dns: new DnsCache({ resolver: dns.resolver }) });
    const literal = await f.fetch(request(`${s.origin}/`), new AbortController().signal);
    expect(literal).toMatchObject({ status: 0, errorKind: 'refused' });
    expect(literal.error).toMatch(/loopback address 127\.0\.0\.1/);
    for (const [name, kind] of [['intranet.test', 'private'], ['rebind.test', 'loopback'], ['meta.test', 'linkLocal'], ['cgnat.test', 'sharedCgnat']]) {
      const out = await f.fetch(request(`http://${name}:${s.port}/`), new AbortController().signal);
      expect(out, name).toMatchObject({ status: 0, errorKind: 'refused' });
      expect(out.error).toContain(`${kind} address`);
    }
    // A pinned IP from the frontier is checked too, in any of its spellings.
    for (const ip of ['127.0.0.1', '::ffff:127.0.0.1', '::1', '0.0.0.0']) {
      expect(await f.fetch(request(`http://public.test:${s.port}/`, { ip }), new AbortController().signal), ip).toMatchObject({ errorKind: 'refused' });
    }
    expect(await f.fetchUrl(`http://[::ffff:7f00:1]:${s.port}/`)).toMatchObject({ errorKind: 'refused' });
    expect(s.connections).toBe(0);
    expect(s.requests).toHaveLength(0);
  });

  it('a name that does not resolve is a dns failure', async () => {
    const f = fetcher({ dns: new DnsCache({ resolver: testResolver({}).resolver }) });
    const out = await f.fetchUrl('http://nowhere.test/');
    expect(out).toMatchObject({ status: 0, errorKind: 'dns' });
    expect(out.error).toMatch(/ENOTFOUND/);
  });

  it('pins the connection to the resolved IP while Host keeps the name', async () => {
    const dns = testResolver({ 'site.test': '127.0.0.2' });
    const f = fetcher({ dns: new DnsCache({ resolver: dns.resolver }) });
    const out = await f.fetch(request(`http://site.test:${pinned.port}/hello`), new AbortController().signal);
    expect(out).toMatchObject({ status: 200, ip: '127.0.0.2' });
    expect(new TextDecoder().decode(out.body)).toBe(`host=site.test:${pinned.port}`);
    const seen = pinned.requests.at(-1)!;
    expect(seen.localAddress).toBe('127.0.0.2');
    expect(seen.headers.host).toBe(`site.test:${pinned.port}`);
    expect(dns.calls).toEqual(['site.test']);
  });

  it('the frontier’s resolved ip wins over DNS (no lookup made)', async () => {
    const dns = testResolver({ 'other.test': '127.0.0.3' }); // nothing listens there
    const f = fetcher({ dns: new DnsCache({ resolver: dns.resolver }) });
    const out = await f.fetch(request(`http://other.test:${pinned.port}/x`, { ip: '127.0.0.2' }), new AbortController().signal);
    expect(out).toMatchObject({ status: 200, ip: '127.0.0.2' });
    expect(pinned.requests.at(-1)!.headers.host).toBe(`other.test:${pinned.port}`);
    expect(dns.calls).toEqual([]);
  });

  it('over TLS, the pinned connection still sends the hostname as SNI and Host, and verifies it', async () => {
    const cert = readFileSync(new URL('../fixtures/tls/secure.test.crt', import.meta.url), 'utf8');
    const key = readFileSync(new URL('../fixtures/tls/secure.test.key', import.meta.url), 'utf8');
    const seen: { servername: string | false | null; host: string | undefined; local: string | undefined }[] = [];
    const tlsServer = createHttpsServer({ cert, key }, (req, res) => {
      seen.push({ servername: (req.socket as TLSSocket).servername, host: req.headers.host, local: req.socket.localAddress });
      res.end('secure');
    });
    await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.2', r));
    const port = (tlsServer.address() as AddressInfo).port;
    try {
      const dns = new DnsCache({ resolver: testResolver({ 'secure.test': '127.0.0.2' }).resolver });
      const trusted = fetcher({ dns, tls: { ca: cert } });
      const out = await trusted.fetchUrl(`https://secure.test:${port}/s`);
      expect(out).toMatchObject({ status: 200, ip: '127.0.0.2' });
      expect(seen[0]).toEqual({ servername: 'secure.test', host: `secure.test:${port}`, local: '127.0.0.2' });
      // Without the CA the certificate is rejected: the check runs against the hostname.
      const untrusted = fetcher({ dns });
      expect(await untrusted.fetchUrl(`https://secure.test:${port}/s`)).toMatchObject({ status: 0, errorKind: 'tls' });
      // Pinned to the right address under the wrong name, the name check fails.
      const wrongName = await trusted.fetchUrl(`https://other.test:${port}/s`, undefined, { ip: '127.0.0.2' });
      expect(wrongName).toMatchObject({ status: 0, errorKind: 'tls' });
      expect(seen).toHaveLength(1);
    } finally {
      tlsServer.closeAllConnections();
      await new Promise<void>((r) => tlsServer.close(() => r()));
    }
  });

  it('one pool per (origin, address): a re-resolved name gets a fresh connection', async () => {
    const f = fetcher();
    await f.fetch(request(`http://a.test:${pinned.port}/`, { ip: '127.0.0.2' }), new AbortController().signal);
    await f.fetch(request(`http://b.test:${pinned.port}/`, { ip: '127.0.0.2' }), new AbortController().signal);
    await f.fetch(request(`http://a.test:${pinned.port}/`, { ip: '127.0.0.2' }), new AbortController().signal);
    expect(f.poolCount).toBe(2);
  });

  it('closes least recently used pools beyond maxOrigins', async () => {
    const f = fetcher({ maxOrigins: 2 });
    for (const name of ['p1', 'p2', 'p3', 'p1']) {
      expect((await f.fetch(request(`http://${name}.test:${pinned.port}/`, { ip: '127.0.0.2' }), new AbortController().signal)).status).toBe(200);
    }
    expect(f.poolCount).toBe(2);
  });
});

describe('HttpFetcher: options', () => {
  it('requires a non-blank User-Agent with a product token', () => {
    expect(() => new HttpFetcher({} as HttpFetcherOptions)).toThrow(InvalidArgumentError);
    expect(() => new HttpFetcher({ agent: '   ' })).toThrow(/User-Agent/);
    expect(() => new HttpFetcher({ agent: '/1.0' })).toThrow(/User-Agent/);
    expect(() => new HttpFetcher({ agent: 'Bot/1', maxBodyBytes: -1 })).toThrow(/maxBodyBytes/);
    expect(() => new HttpFetcher({ agent: 'Bot/1', dns: {} as DnsCache })).toThrow(/DnsCache/);
    expect(() => new HttpFetcher({ agent: 'Bot/1', tls: { cert: 'x' } as unknown as HttpFetcherOptions['tls'] })).toThrow(/tls/);
    expect(() => new HttpFetcher({ agent: 'Bot/1', headers: { 'User-Agent': 'spoof' } })).toThrow(/set by the fetcher/);
    expect(() => new HttpFetcher({ agent: 'Bot/1', nonsense: 1 } as Partial<HttpFetcherOptions> & { agent: string })).toThrow(/unknown option/);
  });

  it('refuses an agent or extra header that is not header text, naming the character (issue 23: it failed every request locally)', () => {
    expect(() => new HttpFetcher({ agent: 'Bot/1.0 (ロボット)' })).toThrow('HttpFetcher.agent: expected a User-Agent of visible ASCII starting with a product token, e.g. "MyBot/1.0 (+https://example.com/bot)", received "Bot/1.0 (ロボット)" (character "ロ" (U+30ED) at index 9 is not visible ASCII; a User-Agent is an HTTP header value (RFC 9110 §5.5))');
    expect(() => new HttpFetcher({ agent: 'Bötchen/1.0' })).toThrow(/character "ö" \(U\+00F6\) at index 1/);
    expect(() => new HttpFetcher({ agent: 'Bot/1.0\r\nX-Evil: 1' })).toThrow(/character U\+000D at index 7/);
    expect(() => new HttpFetcher({ agent: 'Bot/1', headers: { from: 'bötchen@example.com' } })).toThrow(/HttpFetcher\.headers/);
    expect(() => new HttpFetcher({ agent: 'Bot/1', headers: { 'bad name': 'x' } })).toThrow(/HttpFetcher\.headers/);
    expect(() => new Engine({ agent: 'Bötchen/1.0' })).toThrow(/EngineOptions\.agent: .*character "ö" \(U\+00F6\)/);
  });

  it('calls a request the client refused locally what it is, not a network failure', () => {
    const o = { connectTimeoutMs: 1, headersTimeoutMs: 1, bodyTimeoutMs: 1, totalTimeoutMs: 1, maxHeaderBytes: 1024 };
    const [kind, message] = classify(new undiciErrors.InvalidArgumentError('invalid user-agent header'), false, false, o);
    expect(kind).toBe('local');
    expect(message).toBe("request not sent: the HTTP client refused it locally (UND_ERR_INVALID_ARG: invalid user-agent header); check the crawler's agent and headers");
    expect(classify(Object.assign(new TypeError('Invalid character in header content ["x"]'), { code: 'ERR_INVALID_CHAR' }), false, false, o)[0]).toBe('local');
    // A reset says the server was reached: not the 'connect' of an outage.
    expect(classify(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), false, false, o)[0]).toBe('network');
    expect(classify(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }), false, false, o)[0]).toBe('connect');
    expect(classify(new undiciErrors.ConnectTimeoutError(), false, false, o)).toEqual(['connect', 'connect timeout after 1 ms (the request was never sent)']);
    // Through a proxy, the tunnel's message names the proxy that did not answer.
    const viaProxy = Object.assign(new Error('proxy http://127.0.0.1:3128 unreachable: Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' });
    expect(classify(viaProxy, false, false, o)).toEqual(['connect', 'proxy http://127.0.0.1:3128 unreachable: Connect Timeout Error (connect timeout after 1 ms)']);
    expect(classify(new undiciErrors.HeadersTimeoutError(), false, false, o)[0]).toBe('timeout');
    expect(classify(Object.assign(new Error('Response body length does not match content-length header'), { code: 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' }), false, false, o)[0]).toBe('protocol');
    // undici's parser error without an HPE_ code (a bad chunk size, a garbled status line).
    expect(classify(Object.assign(new Error('Response does not match the HTTP/1.1 protocol (Invalid character in chunk size)'), { name: 'HTTPParserError' }), false, false, o)[0]).toBe('protocol');
  });

  it('sends extra headers', async () => {
    const s = await serve((_req, res) => res.end());
    await fetcher({ headers: { 'Accept-Language': 'ja, en;q=0.5', from: 'bot@example.com' } }).fetchUrl(`${s.origin}/`);
    expect(s.requests[0]!.headers).toMatchObject({ 'accept-language': 'ja, en;q=0.5', from: 'bot@example.com', 'user-agent': AGENT });
  });

  it('fetch throws only for a malformed request object', () => {
    const f = fetcher();
    expect(() => f.fetch(null as unknown as FetchRequest, new AbortController().signal)).toThrow(InvalidArgumentError);
    expect(() => f.fetchUrl(3 as unknown as string)).toThrow(InvalidArgumentError);
  });
});

describe('RobotsCache over HttpFetcher', () => {
  it('fetches robots.txt through the fetcher, following a redirect, and applies the rules', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/robots.txt') res.writeHead(301, { location: '/real-robots.txt' }).end();
      else if (req.url === '/real-robots.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: MeguriTest\nDisallow: /private\nCrawl-delay: 3\n');
      else res.end('page');
    });
    const f = fetcher();
    const robots = new RobotsCache({ agent: AGENT, fetch: f.robotsFetch() });
    expect(await robots.check(`${s.origin}/private/x`)).toMatchObject({ allowed: false, reason: 'rules', crawlDelayMs: 3000 });
    expect(await robots.check(`${s.origin}/public`)).toMatchObject({ allowed: true });
    expect(s.requests.map((r) => r.path)).toEqual(['/robots.txt', '/real-robots.txt']);
  });

  it('a robots.txt beyond the parse limit: the cut line is not read as a shorter pattern', async () => {
    let body = 'User-agent: *\nDisallow: /early\n';
    while (body.length < 512_000 - 10) body += '# filler filler filler filler filler filler\n';
    body += 'Disallow: /straddles-the-500-KiB-limit\nDisallow: /late\n';
    const s = await serve((_req, res) => res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(body)));
    const robots = new RobotsCache({ agent: AGENT, fetch: fetcher().robotsFetch() });
    expect((await robots.check(`${s.origin}/early`)).allowed).toBe(false);
    expect((await robots.check(`${s.origin}/s`)).allowed).toBe(true);
    expect((await robots.check(`${s.origin}/late`)).allowed).toBe(true);
    expect(robots.entry(s.origin)?.robots?.truncated).toBe(true);
  });

  it('an unreachable robots host (refused, 5xx) is disallowed for now', async () => {
    const s = await serve((_req, res) => res.writeHead(500).end());
    const f = fetcher();
    const robots = new RobotsCache({ agent: AGENT, fetch: (u, sig) => f.fetchUrl(u, sig) });
    expect(await robots.check(`${s.origin}/x`)).toMatchObject({ allowed: false, reason: 'unreachable' });
    const strict = fetcher({ allowPrivate: false });
    const robots2 = new RobotsCache({ agent: AGENT, fetch: (u, sig) => strict.fetchUrl(u, sig) });
    expect(await robots2.check(`${s.origin}/x`)).toMatchObject({ allowed: false, reason: 'unreachable' });
    expect(robots2.entry(s.origin)?.lastError).toMatch(/refused/);
  });
});
