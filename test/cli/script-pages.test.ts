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
    // A leaf page with words and no link, and a scripted page that links on.
    if (path === '/leaf') return void res.end(`<html><body><p>${'A page of plain text about the weather. '.repeat(10)}</p></body></html>`);
    if (path === '/linked') return void res.end('<html><head><script src="/a.js"></script></head><body><a href="/leaf">leaf</a></body></html>');
    res.writeHead(404).end();
  });
  const crawl = (name: string, ...urls: string[]) =>
    inProcess(['crawl', ...urls.map((u) => `http://127.0.0.1:${site.port()}${u}`), '--data', join(dir, name), '--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--interval', '1h']);

  it('the summary names the shell, its scripts and mount point, and the two ways on', async () => {
    const run = await crawl('shell', '/app', '/app2');
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/\(2 OK\)/);
    const line = run.out.split('\n').find((l) => l.startsWith('  script '));
    expect(line).toBeDefined();
    expect(line).toMatch(/\/app(2)? \(and 1 more seed page\) links to nothing in its HTML: its scripts render it in a browser \(1 script, 8 characters of text, <div id="(root|__next)">\)/);
    expect(line).toContain('give the site\'s sitemap with --sitemap URL, or render pages in a browser (README: "JavaScript-rendered pages")');
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
