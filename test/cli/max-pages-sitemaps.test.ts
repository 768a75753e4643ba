// --max-pages counts pages, not the sitemaps that list them. A crawl started from a sitemap index
// of three sitemaps with --max-pages 5 fetched the index, the three sitemaps and one page (each
// sitemap answered 200 and was counted as a page): the user asked for five pages and got one.
// Now a sitemap's fetch is marked (`Outcome.sitemap`, pages.jsonl `sitemap`), counted among the
// OK answers of the run but not against --max-pages, and the summary says so. Found with it: a
// resume of such a crawl refused every URL the sitemaps had listed as off-domain (the sitemaps
// were not saved with the settings, and they are what widened the scope).
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRecord, encodeRecord, outcomeRecord, recordOutcome } from '../../src/engine/records.js';
import { countsAsPage, isUnchangedSitemap } from '../../src/model/index.js';
import { AGENT, inProcess, loopbackSite } from './helpers.js';

describe('meguri crawl --max-pages with sitemaps', () => {
  let server: Server;
  let base = '';
  let dir = '';
  const rows = (data: string): { url: string; status: number; sitemap: boolean }[] =>
    readFileSync(join(data, 'pages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { url: string; status: number; sitemap: boolean })
      .map((r) => ({ ...r, url: r.url.replace(base, '') }));

  beforeAll(async () => {
    // /sitemap_index.xml → /sm1.xml … /sm3.xml, each listing four pages (/p0 … /p11) that link nothing.
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      const xml = (body: string): void => void res.writeHead(200, { 'content-type': 'application/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`);
      if (url === '/robots.txt') return void res.writeHead(404).end();
      if (url === '/sitemap_index.xml') {
        return xml(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${[1, 2, 3].map((i) => `<sitemap><loc>${base}/sm${i}.xml</loc></sitemap>`).join('')}</sitemapindex>`);
      }
      const sm = /^\/sm(\d)\.xml$/.exec(url);
      if (sm !== null) {
        const first = (Number(sm[1]) - 1) * 4;
        return xml(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${[0, 1, 2, 3].map((i) => `<url><loc>${base}/p${first + i}</loc></url>`).join('')}</urlset>`);
      }
      if (/^\/p\d+$/.test(url)) return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><p>${url}</p></body></html>`);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'meguri-maxpages-'));
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const flags = ['--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h'];

  it('fetches --max-pages pages besides the sitemaps, marks the sitemaps in pages.jsonl and says so; a resume counts the same way', async () => {
    const data = join(dir, 'crawl');
    const first = await inProcess(['crawl', '--sitemap', `${base}/sitemap_index.xml`, '--data', data, '--max-pages', '5', ...flags]);
    expect(first.code).toBe(0);
    const got = rows(data);
    const pages = got.filter((r) => !r.sitemap);
    const sitemaps = got.filter((r) => r.sitemap);
    expect(pages).toHaveLength(5);
    expect(pages.every((r) => /^\/p\d+$/.test(r.url) && r.status === 200)).toBe(true);
    // The index and at least the sitemaps that listed those five pages (two of them: four pages each).
    expect(sitemaps.map((r) => r.url)).toContain('/sitemap_index.xml');
    expect(sitemaps.length).toBeGreaterThanOrEqual(3);
    expect(sitemaps.every((r) => /\.xml$/.test(r.url) && r.status === 200)).toBe(true);
    expect(first.out).toContain('page limit reached');
    expect(first.out).toContain(`in the campaign (5 OK)`);
    expect(first.out).toContain(`${got.length} ok (${sitemaps.length} of them sitemaps, not counted as pages)`);

    // Resumed with a higher limit: the campaign's count is of pages, so three more are fetched.
    const second = await inProcess(['crawl', '--data', data, '--max-pages', '8', ...flags]);
    expect(second.code).toBe(0);
    // The sitemap started from is saved with the settings: it widens the resumed crawl's scope as
    // it did the first run's (before, the seven URLs it had listed were refused as off-domain).
    expect((JSON.parse(readFileSync(join(data, 'settings.json'), 'utf8')) as { settings: { sitemaps: string[] } }).settings.sitemaps).toEqual([`${base}/sitemap_index.xml`]);
    expect(second.out).toContain('· 0 out of scope');
    expect(rows(data).filter((r) => !r.sitemap)).toHaveLength(8);
    expect(second.out).toContain('in the campaign (8 OK)');
  });

  it('journal records keep the mark, so a replay counts pages as the live run did', () => {
    const o = { row: 0, url: 'http://a.test/sitemap.xml', status: 200, sitemap: true, links: [{ url: 'http://a.test/p' }] };
    const back = recordOutcome(decodeRecord(encodeRecord(outcomeRecord('0'.repeat(32), 'a.test', 1, 2, o)), 1) as Parameters<typeof recordOutcome>[0]);
    expect(back.sitemap).toBe(true);
    expect(countsAsPage(back)).toBe(false);
    const page = recordOutcome(decodeRecord(encodeRecord(outcomeRecord('0'.repeat(32), 'a.test', 1, 2, { ...o, sitemap: undefined })), 2) as Parameters<typeof recordOutcome>[0]);
    expect([page.sitemap, countsAsPage(page)]).toEqual([undefined, true]);
    // A 304 of a sitemap is not a page either; a failed fetch never is.
    expect(countsAsPage({ status: 304, sitemap: true })).toBe(false);
    expect(countsAsPage({ status: 304 })).toBe(true);
    expect(countsAsPage({ status: 503 })).toBe(false);
    // A 304 has no body to tell a sitemap by: the request says whether the URL's last body was one.
    expect(isUnchangedSitemap({ sitemap: true }, { status: 304 })).toBe(true);
    expect([isUnchangedSitemap({}, { status: 304 }), isUnchangedSitemap({ sitemap: true }, { status: 200 }), isUnchangedSitemap({ sitemap: true }, { status: 304, sitemap: true })]).toEqual([false, false, false]);
    // A mark other than 1 is not a record this engine wrote.
    const bad = new TextEncoder().encode(JSON.stringify({ ...outcomeRecord('0'.repeat(32), 'a.test', 1, 2, o), sm: 2 }));
    expect(() => decodeRecord(bad, 3)).toThrow(/field sm is 2, expected 1 or absent/);
  });
});

describe('meguri crawl --max-pages over an app whose routes are one shell', () => {
  // A single-page app listed by its sitemap: every route answers the same shell, and from the
  // sixth route on (after a made-up URL, the soft-404 probe, got the shell too) the soft-404
  // detector reads it as the not-found page. Before, those were not
  // pages for --max-pages, and `--max-pages 10` over a 300-route sitemap made 301 requests.
  const routes = 80;
  let requests = 0;
  const shell = '<!doctype html><html><head><title>Shop</title><script type="module" src="/assets/index.js"></script></head><body><div id="root"></div></body></html>';
  const site = loopbackSite('meguri-maxpages-shell-', (req, res) => {
    const url = req.url ?? '/';
    if (url === '/robots.txt') return void res.writeHead(404).end();
    requests++;
    if (url === '/sitemap.xml') {
      const locs = Array.from({ length: routes }, (_, i) => `<url><loc>${site.base}/product/${i}</loc></url>`).join('');
      return void res.writeHead(200, { 'content-type': 'application/xml' }).end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs}</urlset>`);
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end(shell);
  });

  it('counts the soft-404s among its pages (they answered 200 and were archived), says so, and a resume goes on from that count', async () => {
    const data = join(site.dir, 'crawl');
    const flags = ['--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h'];
    const first = await inProcess(['crawl', '--sitemap', `${site.base}/sitemap.xml`, '--data', data, '--max-pages', '10', ...flags]);
    expect(first.code).toBe(0);
    const lines = (): { soft404: boolean; sitemap: boolean; probe: boolean; url: string }[] =>
      readFileSync(join(data, 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { soft404: boolean; sitemap: boolean; probe: boolean; url: string });
    const pages = (): { soft404: boolean }[] => lines().filter((r) => !r.sitemap && !r.probe);
    expect(pages()).toHaveLength(10);
    // The fifth route's body, shared by five, had one made-up URL asked next (the soft-404 probe,
    // marked so in pages.jsonl and not counted by --max-pages): the shell again, so from the
    // sixth route on the shell is the not-found page.
    expect(lines().filter((r) => r.probe).map((r) => r.url)).toEqual([expect.stringMatching(/\/product\/2\d{9}$/)]);
    expect(pages().filter((p) => p.soft404).length).toBe(5);
    expect(requests).toBe(12);
    expect(first.out).toContain('page limit reached');
    expect(first.out).toContain('in the campaign (10 OK)');
    expect(first.out).toContain('6 4xx (5 of them soft-404s: answered 200, read as the not-found page; --max-pages counts them)');
    expect(first.out).toContain('  soft-404  1 made-up URL asked (a ten-digit id, a made-up hash, or …meguri-soft404-probe-…) before a body many URLs shared was read as the not-found page: 1 answered with the shared body or could not tell, so the shared body is the not-found page — --no-soft404-probe skips the question');
    expect(first.out).toContain('shells    ');

    const second = await inProcess(['crawl', '--data', data, '--max-pages', '15', ...flags]);
    expect(second.code).toBe(0);
    expect(pages()).toHaveLength(15);
    expect(requests).toBe(17);
    expect(second.out).toContain('in the campaign (15 OK)');
  });
});
