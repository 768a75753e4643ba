// A seed page that is an app's empty shell (its scripts render it in a browser) links to
// nothing in its HTML: the crawl ends after it, and the end summary says why and what reaches
// the rest (src/cli/script-pages.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loopbackSite } from '../engine/helpers.js';
import { AGENT, inProcess } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'meguri-script-pages-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SHELL =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme App</title>' +
  '<script defer src="/static/js/main.8f3a2c1b.js"></script><link href="/static/css/main.css" rel="stylesheet"></head>' +
  '<body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div></body></html>';

describe('meguri crawl: a seed page rendered by its scripts', () => {
  const site = loopbackSite((req, res) => {
    const path = req.url ?? '/';
    if (path === '/robots.txt') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    if (path === '/app' || path === '/app2') return void res.end(SHELL.replace('id="root"', path === '/app' ? 'id="root"' : 'id="__next"'));
    // The same shell naming its feed on another site (out of scope: never fetched).
    if (path === '/app-feed') return void res.end(SHELL.replace('</head>', '<link rel="alternate" type="application/rss+xml" href="https://feeds.other.test/acme"></head>'));
    // A leaf page with words and no link, and a scripted page that links on.
    if (path === '/leaf') return void res.end(`<html><body><p>${'A page of plain text about the weather. '.repeat(10)}</p></body></html>`);
    if (path === '/linked') return void res.end('<html><head><script src="/a.js"></script></head><body><a href="/leaf">leaf</a></body></html>');
    res.writeHead(404).end();
  });
  const crawl = (name: string, ...urls: string[]) =>
    inProcess(['crawl', ...urls.map((u) => `http://127.0.0.1:${site.port()}${u}`), '--data', join(dir, name), '--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h']);

  it('the summary names the shell, its scripts and mount point, and the two ways on', async () => {
    const run = await crawl('shell', '/app', '/app2');
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/\(2 OK\)/);
    const line = run.out.split('\n').find((l) => l.startsWith('  script '));
    expect(line).toBeDefined();
    expect(line).toMatch(/\/app(2)? \(and 1 more seed page\) links to nothing in its HTML: its scripts render it in a browser \(1 script, 8 characters of text, <div id="(root|__next)">\)/);
    expect(line).toContain('give the site\'s sitemap with --sitemap URL, or render pages in a browser (README: "JavaScript-rendered pages")');
  });

  it('a feed the shell names is no link on it: the line is there all the same', async () => {
    const run = await crawl('shell-feed', '/app-feed');
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/^ {2}script +\S+\/app-feed links to nothing in its HTML/m);
  });

  it('says nothing of a plain leaf page or a scripted page with links', async () => {
    for (const [name, url] of [['leaf', '/leaf'], ['linked', '/linked']] as const) {
      const run = await crawl(name, url);
      expect(run.code, run.err).toBe(0);
      expect(run.out, name).not.toMatch(/^ {2}script /m);
    }
  });

  it('--json puts the shells in the end event', async () => {
    const run = await inProcess(['crawl', `http://127.0.0.1:${site.port()}/app`, '--data', join(dir, 'json'), '--agent', AGENT, '--allow-private', '--json', '--interval', '1h']);
    expect(run.code, run.err).toBe(0);
    const end = run.out.trim().split('\n').map((l) => JSON.parse(l) as { type: string; scriptShells?: unknown }).find((e) => e.type === 'end');
    expect(end?.scriptShells).toEqual([{ url: `http://127.0.0.1:${site.port()}/app`, scripts: 1, textChars: 8, mount: '<div id="root">' }]);
  });
});

describe('meguri crawl: an app shell served for every route, crawled from its sitemap', () => {
  // A single-page app answers each route with the same HTML: past the soft-404 threshold (5
  // URLs sharing one fingerprint) every page is taken for the site's not-found page. The
  // summary said only "failing … (soft-404)" of pages that exist and are archived.
  const ROUTES = 12;
  const site = loopbackSite((req, res) => {
    const path = req.url ?? '/';
    if (path === '/robots.txt') return void res.writeHead(404).end();
    if (path === '/sitemap.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' });
      return void res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${Array.from({ length: ROUTES }, (_, i) => `<url><loc>http://${req.headers.host}/product/${i}</loc></url>`).join('')}</urlset>`);
    }
    // A plain site's not-found page, on another host name: a soft-404 that is no shell.
    if (req.headers.host?.startsWith('plain.test')) {
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end(`<html><body><h1>Sorry</h1><p>${'We could not find that page. '.repeat(12)}</p></body></html>`);
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(SHELL);
  });

  it('names the soft-404s that were one app shell, with its scripts and mount point, and the way on', async () => {
    const run = await inProcess(['crawl', '--sitemap', `http://127.0.0.1:${site.port()}/sitemap.xml`, '--data', join(dir, 'spa'), '--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h', '--json']);
    expect(run.code, run.err).toBe(0);
    const events = run.out.trim().split('\n').map((l) => JSON.parse(l) as { type: string; shellHosts?: { host: string; pages: number; shell: unknown }[] });
    const end = events.find((e) => e.type === 'end');
    // The first five routes were pages; the fifth's body, shared by five, had one made-up URL
    // asked next (the soft-404 probe), which the app answered with the shell: from the sixth
    // route on, the template. The probe is no route of the app: not counted.
    expect(end?.shellHosts).toEqual([{ host: '127.0.0.1', pages: ROUTES - 5, shell: { url: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${site.port()}/product/\\d+$`)), scripts: 1, textChars: 8, mount: '<div id="root">' } }]);
  });

  it('says so in the summary, and says nothing of a plain not-found page served for every URL', async () => {
    const shells = await inProcess(['crawl', '--sitemap', `http://127.0.0.1:${site.port()}/sitemap.xml`, '--data', join(dir, 'spa-text'), '--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h']);
    expect(shells.code, shells.err).toBe(0);
    expect(shells.out).toContain(
      `  shells    127.0.0.1: ${ROUTES - 5} soft-404s were one app shell, the same HTML for every route (1 script, 8 characters of text, <div id="root">) — pages its scripts render in a browser, archived as served; meguri reads pages as served: render them in a browser for their content (README: "JavaScript-rendered pages")`,
    );
    const plain = await inProcess(['crawl', '--sitemap', `http://plain.test:${site.port()}/sitemap.xml`, '--resolve', 'plain.test=127.0.0.1', '--data', join(dir, 'plain-404'), '--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h']);
    expect(plain.code, plain.err).toBe(0);
    expect(plain.out).toContain('(soft-404)');
    expect(plain.out).not.toMatch(/^ {2}shells /m);
  });
});
