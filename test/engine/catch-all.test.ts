/**
 * A script that serves any path below it (PATH_INFO) with relative navigation: every page mints
 * its menu again one level deeper, each page a little different (a breadcrumb of its own
 * path). Through the real HttpFetcher on loopback: the crawl fetches the real pages and the
 * first level of copies, then drops the echoes (`CrawlCounts.echoLinks`) — where the
 * repeated-segment rule alone let 111 fetches through.
 */
import { describe, expect, it } from 'vitest';
import { crawl } from '../../src/index.js';
import { AGENT, loopbackSite } from './helpers.js';

const asked: string[] = [];

const site = loopbackSite((req, res) => {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  asked.push(path);
  const html = (body: string): void => void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${body}</body></html>`);
  if (path === '/robots.txt') return void res.writeHead(404).end();
  if (path === '/') return html('<a href="/index.php/guide/">guide</a> <a href="/about.html">about</a>');
  if (path === '/about.html') return html('<p>about us, a page of its own</p>');
  if (!path.startsWith('/index.php/')) return void res.writeHead(404).end();
  const parts = path.split('/').filter(Boolean);
  html(`<nav>${parts.join(' › ')}</nav><h1>${parts.at(-1)}</h1><p>${'documentation text '.repeat(40)}</p><a href="guide/">Guide</a> <a href="api/">API</a> <a href="faq/">FAQ</a>`);
});

describe('a catch-all path with relative navigation', () => {
  it('is crawled to its first level of copies, and the echoes below are not followed', async () => {
    const summary = await crawl(
      { seeds: [`http://pi.test:${site.port()}/`], agent: AGENT, allowPrivate: true, resolve: async () => ['127.0.0.1'], politeness: { minDelayMs: 5, startDelayMs: 5 }, maxRequests: 500 },
      () => undefined,
    );
    expect(summary.reason).toBe('drained');
    expect(asked.filter((p) => p !== '/robots.txt').sort()).toEqual(['/', '/about.html', '/index.php/guide/', '/index.php/guide/api/', '/index.php/guide/faq/', '/index.php/guide/guide/']);
    expect(summary.counts.echoLinks).toBe(9);
  });
});
