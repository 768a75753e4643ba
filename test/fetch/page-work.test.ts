/**
 * PageAnalyzer: a page analyzed on a worker thread gives exactly what the inline analysis
 * gives (the same function, across a structured clone), small pages stay inline, and an
 * aborted threaded analysis rejects without a result.
 */
import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCoreSync } from '../../src/core/node.js';
import { analyzePage, firstElementName, looksLikeHtml, type PageInput } from '../../src/fetch/analyze.js';
import { PageAnalyzer } from '../../src/fetch/page-work.js';

loadCoreSync();

const enc = new TextEncoder();
const input = (html: string, contentType: string | undefined = 'text/html'): PageInput => ({
  url: 'https://site.test/dir/page',
  bytes: enc.encode(html),
  contentType,
  token: 'mybot',
  maxLinks: 50,
  canonPolicy: undefined,
  parseLinks: true,
  requisites: false,
});

describe('PageAnalyzer', () => {
  const threaded = new PageAnalyzer({ threads: 1, inlineBelowBytes: 0 });
  afterAll(() => threaded.close());

  it('threaded and inline analyses agree (seeded random pages)', async () => {
    const piece = fc.oneof(
      fc.constantFrom('<div>', '</div>', '<p>', '</p>', '<script>x<a href=/no></script>', '<meta name=robots content=noindex>', '<base href="/b/">', '<link rel=canonical href=/c>', '<img src=/i.png>', '<link rel=stylesheet href=/s.css>'),
      fc.string({ maxLength: 12 }).map((s) => `<a href="${s}">${s}</a>`),
      fc.string({ maxLength: 20 }),
    );
    const pages = fc.sample(fc.array(piece, { maxLength: 40 }).map((a) => a.join('')), { seed: 23, numRuns: 60 });
    for (const html of pages) {
      for (const type of ['text/html', 'text/plain', 'image/png', undefined]) {
        const x = { ...input(html, type), requisites: type === 'text/html' };
        expect(await threaded.analyze(x), `${type} ${JSON.stringify(html)}`).toEqual(analyzePage(x));
      }
    }
    expect(threaded.stats).toMatchObject({ threaded: 240, fallbacks: 0 });
  });

  it('keeps bodies under the threshold inline and never touches a thread for them', async () => {
    const a = new PageAnalyzer({ threads: 1, inlineBelowBytes: 1024 });
    const small = await a.analyze(input('<a href="/x">x</a> words'));
    expect(small.links).toEqual([{ url: 'https://site.test/x' }]);
    await a.analyze(input(`<p>${'w '.repeat(600)}</p>`));
    expect(a.stats).toEqual({ inline: 1, threaded: 1, fallbacks: 0 });
    await a.close();
    const none = new PageAnalyzer({ threads: 0, inlineBelowBytes: 0 });
    await none.analyze(input('<p>x</p>'.repeat(1000)));
    expect(none.stats).toEqual({ inline: 1, threaded: 0, fallbacks: 0 });
  });

  it("leaves the caller's body intact, a Buffer view into a larger buffer included", async () => {
    const backing = Buffer.from(`xxxx<a href="/b">b</a>${'<p>words</p>'.repeat(100)}yyyy`);
    const view = backing.subarray(4, backing.length - 4);
    const out = await threaded.analyze({ ...input(''), bytes: view });
    expect(out.links).toEqual([{ url: 'https://site.test/b' }]);
    expect(view.length).toBe(backing.length - 8);
    expect(backing.toString('latin1', 0, 4)).toBe('xxxx');
  });

  it('reads a sitemap or feed on the thread when asked (sitemaps), as inline; never an HTML page, never unasked', async () => {
    const urls = Array.from({ length: 2000 }, (_, i) => `https://site.test/p/${i}`);
    const xml = `<?xml version="1.0"?><urlset>${urls.map((u) => `<url><loc>${u}</loc><lastmod>2024-05-01</lastmod></url>`).join('')}</urlset>`;
    const gz = { ...input('', 'application/gzip'), url: 'https://site.test/sitemap.xml.gz', bytes: gzipSync(xml), sitemaps: true };
    const before = threaded.stats.threaded;
    const out = await threaded.analyze(gz);
    expect(threaded.stats.threaded).toBe(before + 1);
    expect(out).toEqual(analyzePage(gz));
    expect(out.sitemap?.kind).toBe('urlset');
    expect(out.sitemap?.entries.map((e) => e.url)).toEqual(urls);
    const feed = { ...input('<rss><channel><item><link>https://site.test/post</link></item></channel></rss>', 'application/rss+xml'), sitemaps: true };
    expect(analyzePage(feed).sitemap).toEqual({ kind: 'feed', entries: [{ url: 'https://site.test/post' }] });
    expect(analyzePage({ ...feed, sitemaps: false }).sitemap).toBeUndefined();
    // An HTML page whose text lists URLs is a page: its links, no sitemap.
    expect(analyzePage({ ...input('<a href="/x">https://site.test/y</a>'), sitemaps: true }).sitemap).toBeUndefined();
  });

  it('an abort rejects a threaded analysis', async () => {
    const controller = new AbortController();
    const pending = threaded.analyze(input('<div>'.repeat(200_000)), controller.signal);
    controller.abort();
    await expect(pending).rejects.toThrow();
  });
});

describe('looksLikeHtml without a Content-Type', () => {
  const b = (s: string): Uint8Array => Buffer.from(s);
  it('takes a document for HTML by its first element, not by its first "<": sitemaps and feeds are not HTML', () => {
    for (const html of ['<!doctype html><title>x</title>', '  <html><body>x', '<?xml version="1.0"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "x">\n<html xmlns="http://www.w3.org/1999/xhtml">', '<!-- c --><p>x', '\ufeff<div>x</div>', '<', '<?xml unterminated']) {
      expect(looksLikeHtml(undefined, b(html)), html).toBe(true);
    }
    for (const xml of ['<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="x"><url><loc>http://a.test/</loc></url></urlset>', '\ufeff<?xml version="1.0"?><!-- generator --><sitemapindex>', '<s:urlset xmlns:s="x">', '<rss version="2.0"><channel>', '<feed xmlns="http://www.w3.org/2005/Atom">', '<rdf:RDF>']) {
      expect(looksLikeHtml(undefined, b(xml)), xml).toBe(false);
    }
    expect(firstElementName(b('<?xml version="1.0"?>\n<!DOCTYPE x>\n<!-- a -->\n<Urlset a="1">'))).toBe('Urlset');
    expect(firstElementName(b('plain text'))).toBeUndefined();
    // A Content-Type decides alone.
    expect(looksLikeHtml('text/html', b('<urlset>'))).toBe(true);
    expect(looksLikeHtml('application/xml', b('<html>'))).toBe(false);
  });
});
