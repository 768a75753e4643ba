// A listing that pages on past its end: `?page=N` beyond the last page answers "No more
// products" with a next link, so the crawl walked 29 empty pages to --max-depth 32 (79 fetches
// for 45 items on 3 pages). `PagingEnd` stops the walk one page after the first empty one (paged
// in the query, or in the path where a segment names it); a listing whose every page names other
// items is walked to its end.
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT, inProcess } from './helpers.js';

/** A shop of `items` items, 15 per listing page; every listing page, past the end too, links the next one. */
function shop(items: number): Server {
  return createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/robots.txt') return void res.writeHead(404).end();
    if (u.pathname === '/' || u.pathname === '/list') {
      const page = Number(u.searchParams.get('page') ?? 1);
      const from = (page - 1) * 15;
      const list = Array.from({ length: Math.max(0, Math.min(items, from + 15) - from) }, (_, i) => `<li><a href="/item/${from + i}">Item ${from + i}</a></li>`);
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end(
        `<html><head><title>Shop - page ${page}</title></head><body><h1>Products</h1><p>Page ${page} of ${Math.ceil(items / 15)}</p><ul>${list.join('') || '<li>No more products.</li>'}</ul>` +
          `<a href="/list?page=${page + 1}">next</a>${page > 1 ? ` <a href="/list?page=${page - 1}">prev</a>` : ''}</body></html>`,
      );
    }
    if (/^\/item\/\d+$/.test(u.pathname)) return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1>${u.pathname}</h1><a href="/">home</a>`);
    res.writeHead(404).end();
  });
}

/** A blog of `posts` posts, 5 per page, paged in the path (`/page/N/`); past the end, "Nothing here" and a next link. */
function blog(posts: number): Server {
  return createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/robots.txt') return void res.writeHead(404).end();
    const m = /^\/page\/(\d+)\/$/.exec(u.pathname);
    if (u.pathname === '/' || m !== null) {
      const page = m === null ? 1 : Number(m[1]);
      const ids = Array.from({ length: posts }, (_, i) => i + 1).slice((page - 1) * 5, page * 5);
      const list = ids.map((i) => `<article><a href="/post-${i}/">Post ${i}</a></article>`).join('') || '<p>Nothing here.</p>';
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><head><title>Page ${page} – Blog</title></head><body><a href="/">Blog</a>${list}<a href="/page/${page + 1}/">Older posts</a></body></html>`);
    }
    if (/^\/post-\d+\/$/.test(u.pathname)) return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1>${u.pathname}</h1><a href="/">home</a>`);
    res.writeHead(404).end();
  });
}

describe('meguri crawl: a listing paged past its end', () => {
  const servers: Server[] = [];
  let dir = '';
  const flags = ['--agent', AGENT, '--allow-private', '--min-delay', '5ms', '--start-delay', '5ms', '--interval', '1h'];
  const listed = (data: string): number[] =>
    readFileSync(join(data, 'pages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { url: string }).url)
      .flatMap((url) => /\/list\?page=(\d+)$/.exec(url)?.slice(1).map(Number) ?? [])
      .sort((a, b) => a - b);
  const start = async (items: number, site = shop): Promise<string> => {
    const s = site(items);
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}/`;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'meguri-paging-'));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops one page after the first empty one, and says so', async () => {
    const data = join(dir, 'past');
    const run = await inProcess(['crawl', await start(45), '--data', data, ...flags]);
    expect(run.code).toBe(0);
    // Pages 1–3 list the items; 4 is the first empty one, 5 repeats it (but for its numbers).
    expect(listed(data)).toEqual([1, 2, 3, 4, 5]);
    expect(run.out).toContain('  paging    1 link to later pages not followed: listing pages past their end repeating the page before');
    // Every item is still fetched.
    const items = readFileSync(join(data, 'pages.jsonl'), 'utf8').match(/\/item\/\d+"/g) ?? [];
    expect(new Set(items).size).toBe(45);
  });

  it('reads paging in the path too: a blog paged /page/N/ stops one page after the first empty one', async () => {
    const data = join(dir, 'blog');
    const run = await inProcess(['crawl', await start(30, blog), '--data', data, ...flags]);
    expect(run.code).toBe(0);
    const urls = readFileSync(join(data, 'pages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { url: string }).url);
    // Pages 2–6 list posts; 7 is the first empty one, 8 repeats it (but for its numbers). It
    // walked on to /page/33/ (depth 32, the cap) before.
    expect(urls.flatMap((url) => /\/page\/(\d+)\/$/.exec(url)?.slice(1).map(Number) ?? []).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(new Set(urls.filter((url) => /\/post-\d+\/$/.test(url))).size).toBe(30);
    expect(run.out).toContain('(?page=… or /page/…/: the same links, the same words)');
  });

  it('walks a listing whose pages all name other items to its end', async () => {
    const data = join(dir, 'long');
    const run = await inProcess(['crawl', await start(150), '--data', data, '--max-depth', '0', ...flags]);
    expect(run.code).toBe(0);
    // 10 pages of items, then the first empty page and the one that repeats it.
    expect(listed(data)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });
});
