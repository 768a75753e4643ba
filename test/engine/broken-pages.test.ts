/**
 * A site with broken pages among working ones, through the real HttpFetcher on loopback: every
 * fifth page answers 500 at once, one more breaks off mid-body. Such a crawl used to crawl to a
 * halt — each 500 doubled the host's interval and the failing URL was retried first, four times
 * in a row (12 requests in 3 min 19 s on a 100-page site). Now every page is fetched, each broken
 * one retried after all the others, and the host is never backed off (src/politeness
 * `isPageFault`; the frontier's retry order).
 */
import { describe, expect, it } from 'vitest';
import { crawl } from '../../src/index.js';
import { countsLine } from '../../src/cli/crawl.js';
import { AGENT, loopbackSite } from './helpers.js';

const PAGES = 30;
const asked: string[] = [];
/** When each request came, ms after the crawl started: printed if the crawl does not end. */
const timeline: string[] = [];
let started = 0;

const site = loopbackSite((req, res) => {
  const path = req.url ?? '/';
  asked.push(path);
  timeline.push(`${Math.round(performance.now() - started)} ms ${path}`);
  if (path === '/robots.txt') return void res.writeHead(404).end();
  const i = Number(/^\/p(\d+)$/.exec(path)?.[1] ?? -1);
  if (i % 5 === 4) return void res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>Internal Server Error</h1>');
  if (i === 7) {
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': '4000' });
    res.write('<html><body>half a page');
    setTimeout(() => res.destroy(), 10);
    return;
  }
  const links = path === '/' ? Array.from({ length: PAGES }, (_, k) => `<a href="/p${k}">p${k}</a>`).join(' ') : '';
  res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${path} ${links}</body></html>`);
});

describe('a site with broken pages', () => {
  it('is crawled whole: the broken pages retried after every other page, the cut-off one as incomplete', async () => {
    asked.length = 0;
    timeline.length = 0;
    started = performance.now();
    const pages: { url: string; status: number; errorKind: string | undefined }[] = [];
    // The crawl takes under a second here; one that has not ended after 40 s is stopped, so the
    // failure shows what was asked and answered when instead of only the test's timeout.
    const stop = new AbortController();
    const watchdog = setTimeout(() => stop.abort(), 40_000);
    const summary = await crawl(
      {
        signal: stop.signal,
        seeds: [`http://shop.test:${site.port()}/`],
        agent: AGENT,
        allowPrivate: true,
        resolve: async () => ['127.0.0.1'],
        politeness: { minDelayMs: 5, startDelayMs: 5, latencyRise: 1000 },
      },
      (p) => {
        pages.push({ url: p.url, status: p.status, errorKind: p.errorKind });
        timeline.push(`${Math.round(performance.now() - started)} ms page ${p.url} ${p.status} ${p.errorKind ?? ''}`);
      },
    ).finally(() => clearTimeout(watchdog));
    expect(summary.reason, timeline.join('\n')).toBe('drained');
    const broken = Array.from({ length: PAGES }, (_, k) => k).filter((k) => k % 5 === 4 || k === 7);
    const ok = pages.filter((p) => p.status === 200).map((p) => p.url.replace(/^.*\//, '/'));
    expect(ok.length).toBe(1 + PAGES - broken.length);
    // Each broken page: its first attempt and the three retries (retryLimit 3), no more.
    for (const k of broken) expect(asked.filter((a) => a === `/p${k}`).length, `/p${k}`).toBe(4);
    // Every page's first attempt came before any retry.
    const pagesAsked = asked.filter((a) => /^\/p\d+$/.test(a));
    const firstRetry = pagesAsked.findIndex((a, n) => pagesAsked.indexOf(a) < n);
    expect(new Set(pagesAsked.slice(0, firstRetry)).size).toBe(PAGES);
    expect(pages.filter((p) => p.url.endsWith('/p7')).map((p) => p.errorKind)).toEqual(['incomplete', 'incomplete', 'incomplete', 'incomplete']);
    // The summary counts them apart from the fetches that got no answer at all.
    expect([summary.counts.incomplete, summary.counts.networkErrors]).toEqual([4, 0]);
    expect(countsLine(summary.counts)).toContain('· 0 network errors · 4 broken off mid-answer ·');
  });
});
