/**
 * A Shift_JIS site whose links carry Japanese text in their queries, crawled through the real
 * HttpFetcher on loopback: the server understands only the bytes a browser sends (the query in
 * the page's encoding); the same text as UTF-8 is a 404 there.
 */
import { describe, expect, it } from 'vitest';
import { crawl } from '../../src/index.js';
import { AGENT, loopbackSite } from './helpers.js';

/** 東京 and 大阪 in Shift_JIS, percent-encoded as a browser sends them. */
const TOKYO = '%93%8C%8B%9E';
const OSAKA = '%91%E5%8D%E3';
const answered: { path: string; status: number }[] = [];

const site = loopbackSite((req, res) => {
  const path = req.url ?? '/';
  // The same site under a .jp name declares no charset at all, as many old sites do not.
  const declared = !(req.headers.host ?? '').startsWith('old.jp');
  const send = (status: number, ascii: string, sjisQuery = ''): void => {
    answered.push({ path, status });
    res.writeHead(status, { 'content-type': declared ? 'text/html; charset=Shift_JIS' : 'text/html' });
    // The raw links: ASCII markup around the Shift_JIS bytes of each place name.
    res.end(Buffer.concat([Buffer.from(ascii, 'latin1'), Buffer.from(sjisQuery, 'latin1')]));
  };
  if (path === '/robots.txt') return send(404, '');
  if (path === '/unicode') {
    // An 8-bit page whose <meta> says UTF-16 (`unicode`, as old Windows tools wrote it), with no
    // charset in its header: HTML's prescan reads such a label as UTF-8.
    answered.push({ path, status: 200 });
    res.writeHead(200, { 'content-type': 'text/html' });
    return void res.end('<html><head><meta http-equiv="Content-Type" content="text/html; charset=unicode"></head><body><a href="/after-unicode">next</a></body></html>');
  }
  if (path === '/after-unicode') {
    answered.push({ path, status: 200 });
    res.writeHead(200, { 'content-type': 'text/html' });
    return void res.end('<html><body>reached</body></html>');
  }
  if (path === '/') {
    // <a href="/s?q=東京">…</a> <a href="/s?q=大阪">…</a>, the names as raw Shift_JIS bytes.
    return send(200, '<html><body><a href="/s?q=\x93\x8c\x8b\x9e">t</a> <a href="/s?q=\x91\xe5\x8d\xe3">o</a></body></html>');
  }
  if (path === `/s?q=${TOKYO}`) return send(200, '<html><body>tokyo results \x93\x8c\x8b\x9e\x82\xcc\x8c\x8b\x89\xca</body></html>');
  if (path === `/s?q=${OSAKA}`) return send(200, '<html><body>osaka results, another page</body></html>');
  send(404, '<html><body>no such query</body></html>');
});

describe('links in a Shift_JIS page', () => {
  it('ask for their queries in Shift_JIS, as a browser does: both result pages fetched OK', async () => {
    const summary = await crawl({ seeds: [`http://127.0.0.1:${site.port()}/`], agent: AGENT, allowPrivate: true, politeness: { minDelayMs: 5, startDelayMs: 5 } });
    expect(summary.reason).toBe('drained');
    expect(answered.filter((a) => a.path.startsWith('/s?')).sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: `/s?q=${OSAKA}`, status: 200 },
      { path: `/s?q=${TOKYO}`, status: 200 },
    ]);
  });
});

describe('a Shift_JIS page that declares no charset', () => {
  it('is read in the legacy encoding of its .jp domain: its links ask in Shift_JIS, its text reads', async () => {
    answered.length = 0;
    const texts = new Map<string, string>();
    const summary = await crawl(
      { seeds: [`http://old.jp:${site.port()}/`], agent: AGENT, allowPrivate: true, resolve: async () => ['127.0.0.1'], politeness: { minDelayMs: 5, startDelayMs: 5 } },
      (page) => void texts.set(new URL(page.url).search, page.text()),
    );
    expect(summary.reason).toBe('drained');
    expect(answered.filter((a) => a.path.startsWith('/s?')).map((a) => a.status)).toEqual([200, 200]);
    // 東京の結果 (the results of Tokyo), decoded from its Shift_JIS bytes.
    expect(texts.get(`?q=${TOKYO}`)).toContain('tokyo results 東京の結果');
  });
});

describe('an 8-bit page whose <meta> names UTF-16', () => {
  it('is read as UTF-8, as a browser reads it: its link is followed (before: decoded as UTF-16LE, garbage, no link)', async () => {
    answered.length = 0;
    const summary = await crawl({ seeds: [`http://127.0.0.1:${site.port()}/unicode`], agent: AGENT, allowPrivate: true, politeness: { minDelayMs: 5, startDelayMs: 5 } });
    expect(summary.reason).toBe('drained');
    expect(answered.map((a) => a.path).filter((p) => p !== '/robots.txt')).toEqual(['/unicode', '/after-unicode']);
  });
});
