/**
 * robots.txt rules as the server sees them obeyed: a crawl through the real HttpFetcher on
 * loopback, one host name per case, each with its own robots.txt, and the server's request log
 * as the judge. Rules naming characters the URL layer percent-encodes, query parameters the
 * crawler reorders, `/robots.txt` with a query, a robots.txt at the end of RFC 9309's five
 * redirects, and a page whose `<base href>` is a data: or javascript: URL.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { crawl } from '../../src/index.js';
import { AGENT, loopbackSite } from './helpers.js';

const html = (body: string): string => `<html><head><title>t</title></head><body>${body}</body></html>`;

interface Host {
  readonly robots: string;
  readonly pages: Record<string, string>;
}

const HOSTS: Record<string, Host> = {
  // RFC 9309 §2.2.2: a raw character in a rule matches its %XX escape in the URL fetched.
  'encoded.test': {
    robots: ['User-agent: *', 'Disallow: /a|b', 'Disallow: /c[d', 'Disallow: /e^f', 'Disallow: /g{h', "Disallow: /q?x='y'", 'Disallow: /*"', ''].join('\n'),
    pages: {
      '/': html(`<a href="/a|b">1</a> <a href="/c[d">2</a> <a href="/e^f">3</a> <a href="/g{h">4</a> <a href="/q?x='y'">5</a> <a href="/s&quot;t">6</a> <a href="/ok">ok</a>`),
      '/ok': html('an allowed page'),
    },
  },
  // The crawler fetches the sorted query; the rules were written for the order linked.
  'order.test': {
    robots: ['User-agent: *', 'Disallow: /*?s=', 'Disallow: /search?q=', ''].join('\n'),
    pages: {
      '/': html('<a href="/?s=foo&amp;post_type=product">1</a> <a href="/search?q=shoes&amp;a=1">2</a> <a href="/search?b=2&amp;a=1">ok</a>'),
      '/search?a=1&b=2': html('an allowed search'),
    },
  },
  // Only the /robots.txt URI itself is implicitly allowed, not /robots.txt?x=1.
  'file.test': {
    robots: ['User-agent: *', 'Disallow: /*?', ''].join('\n'),
    pages: {
      '/': html('<a href="/robots.txt?x=1">1</a> <a href="/ok">ok</a>'),
      '/ok': html('an allowed page'),
    },
  },
  // A data: or javascript: base is no base: the links resolve against the page's URL.
  'base.test': {
    robots: '',
    pages: {
      '/': html('<base href="javascript:void(0)"><a href="dir/p">p</a>'),
      '/dir/p': html('<base href="data:text/html,x"><a href="q">q</a> <a href="/top">top</a>'),
      '/dir/q': html('q'),
      '/top': html('top'),
    },
  },
};

/** The redirect chain of chain.test's robots.txt: the five hops RFC 9309 §2.3.1.2 allows. */
const CHAIN: Record<string, string> = { '/robots.txt': '/r1', '/r1': '/r2', '/r2': '/r3', '/r3': '/r4', '/r4': '/r5' };

const asked = new Map<string, string[]>();

const site = loopbackSite((req, res) => {
  const host = (req.headers.host ?? '').replace(/:\d+$/, '');
  const target = req.url ?? '/';
  asked.set(host, [...(asked.get(host) ?? []), target]);
  if (host === 'chain.test') {
    if (CHAIN[target] !== undefined) return void res.writeHead(301, { location: CHAIN[target] }).end();
    if (target === '/r5') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n');
    if (target === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(html('<a href="/private">no</a> <a href="/public">yes</a>'));
    if (target === '/public') return void res.writeHead(200, { 'content-type': 'text/html' }).end(html('public'));
    return void res.writeHead(404).end();
  }
  const h = HOSTS[host];
  if (h !== undefined && target === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(h.robots);
  const body = h?.pages[target];
  if (body === undefined) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'text/html' }).end(body);
});

/** Crawls `host` from its root; returns the request targets its server saw, robots.txt aside. */
async function crawlHost(host: string): Promise<string[]> {
  asked.delete(host);
  const summary = await crawl(
    { seeds: [`http://${host}:${site.port()}/`], agent: AGENT, allowPrivate: true, resolve: async () => ['127.0.0.1'], politeness: { minDelayMs: 5, startDelayMs: 5 } },
    () => undefined,
  );
  expect(summary.reason).toBe('drained');
  return (asked.get(host) ?? []).filter((t) => t !== '/robots.txt').sort();
}

describe('robots.txt rules, as the server sees them obeyed', () => {
  it('a rule with a character the URL layer percent-encodes (| [ ^ { \' ") disallows the encoded URL fetched', async () => {
    expect(await crawlHost('encoded.test')).toEqual(['/', '/ok']);
  });

  it('a rule naming a query parameter disallows the link however canonicalization reorders its query', async () => {
    expect(await crawlHost('order.test')).toEqual(['/', '/search?a=1&b=2']);
  });

  it('/robots.txt with a query is decided by the rules (only /robots.txt itself is implicitly allowed)', async () => {
    expect(await crawlHost('file.test')).toEqual(['/', '/ok']);
  });

  it('a data: or javascript: <base href> is ignored: the links resolve against the page', async () => {
    expect(await crawlHost('base.test')).toEqual(['/', '/dir/p', '/dir/q', '/top']);
  });

  describe('a robots.txt behind five redirects', () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    afterEach(() => void process.off('warning', onWarning));

    it('is obeyed, and leaves no abort listeners behind (no MaxListenersExceededWarning)', async () => {
      process.on('warning', onWarning);
      expect(await crawlHost('chain.test')).toEqual(['/', '/public', '/r1', '/r2', '/r3', '/r4', '/r5']);
      // Node emits the warning on a later tick than the listener that tripped it.
      await new Promise((r) => setImmediate(r));
      expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
    });
  });
});
