// A server that ignores the letter case of paths (IIS, ASP.NET) and templates that spell links
// three ways: a 20-product loopback shop cost 61 fetches, each page fetched under every spelling.
// `PathCase` (src/dedup/pathcase.ts) learns the origin from two pages served the same under two
// spellings; links then go to the spelling met first and queued spellings of served pages are
// not fetched — also after a resume. The same shop on a case-sensitive server (other spellings
// 404) teaches nothing: every spelling is asked, as before.
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT, inProcess } from './helpers.js';

const PRODUCTS = 20;
const spell = (s: string, style: number): string => (style === 0 ? s : style === 1 ? s.toLowerCase() : s.toUpperCase());

/** The shop: `/` and /Catalog/ProductN.aspx; page N spells its links in style N % 3; `caseless` answers any spelling. */
function shop(caseless: boolean, requests: string[]): Server {
  return createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/robots.txt') return void res.writeHead(404).end();
    requests.push(url);
    const path = caseless ? url.toLowerCase() : url;
    const m = (caseless ? /^\/catalog\/product(\d+)\.aspx$/ : /^\/Catalog\/Product(\d+)\.aspx$/).exec(path);
    const n = url === '/' ? 0 : m !== null && Number(m[1]) < PRODUCTS ? Number(m[1]) : -1;
    if (n < 0) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    const links = Array.from({ length: PRODUCTS }, (_, i) => `<a href="/${spell('Catalog', n % 3)}/${spell(`Product${i}`, n % 3)}.aspx">Product ${i}</a>`);
    res.writeHead(200, { 'content-type': 'text/html', server: 'Microsoft-IIS/10.0' });
    // The form's action echoes the spelling asked for, as ASP.NET does: the bytes differ, the text does not.
    res.end(`<html><body><form action="${url}"></form><h1>Product ${n}</h1><p>${'A fine product. '.repeat(20 + n)}</p>${links.join(' ')}</body></html>`);
  });
}

describe('meguri crawl: a server that ignores the letter case of paths', () => {
  const caselessRequests: string[] = [];
  const strictRequests: string[] = [];
  let caseless: Server;
  let strict: Server;
  let dir = '';
  const base = (s: Server): string => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  const flags = ['--agent', AGENT, '--allow-private', '--min-delay', '5ms', '--start-delay', '5ms', '--interval', '1h'];

  beforeAll(async () => {
    caseless = shop(true, caselessRequests);
    strict = shop(false, strictRequests);
    await Promise.all([caseless, strict].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
    dir = mkdtempSync(join(tmpdir(), 'meguri-case-'));
  });
  afterAll(async () => {
    await Promise.all([caseless, strict].map((s) => new Promise((r) => s.close(r))));
    rmSync(dir, { recursive: true, force: true });
  });

  it('fetches each page once (and two spellings of two pages, the evidence), across a resume', async () => {
    const data = join(dir, 'caseless');
    // Stopped after 8 pages, then resumed to the end.
    const first = await inProcess(['crawl', `${base(caseless)}/`, '--data', data, '--max-pages', '8', ...flags]);
    expect(first.code).toBe(0);
    const second = await inProcess(['crawl', '--data', data, '--max-pages', '1000', ...flags]);
    expect(second.code).toBe(0);
    const pages = new Set(caselessRequests.map((u) => u.toLowerCase()));
    expect(pages.size).toBe(PRODUCTS + 1);
    // Before: 61 requests (every product under three spellings). Now each once, plus the two
    // second spellings that taught the lesson.
    expect(caselessRequests.length, caselessRequests.join(' ')).toBeLessThanOrEqual(PRODUCTS + 1 + 2);
    // The first run fetched pages under their first spelling only: the resume learns from its own
    // fetches and from the pages the first run served (read back from the frontier).
    expect(second.out).toMatch(/ {2}case {6}http:\/\/127\.0\.0\.1:\d+ ignores the letter case of paths — \d+ links? taken to the spelling met first, \d+ queued spellings of pages served not fetched/);
    const rows = readFileSync(join(data, 'pages.jsonl'), 'utf8').trim().split('\n');
    expect(rows).toHaveLength(caselessRequests.length);
    // The lesson is in the checkpoint, and `meguri stats` shows it among what the crawl learned.
    const stats = await inProcess(['stats', data]);
    expect(stats.out).toMatch(/ {2}learned {5}http:\/\/127\.0\.0\.1:\d+\/… in any letter case → the spelling met first/);
  });

  it('learns nothing from a case-sensitive server: every spelling is asked and the other ones are 404', async () => {
    const data = join(dir, 'strict');
    const run = await inProcess(['crawl', `${base(strict)}/`, '--data', data, ...flags]);
    expect(run.code).toBe(0);
    expect(run.out).not.toContain('  case ');
    // Every spelling the pages use: Title case (served), lower and upper case (404) of each product.
    const distinct = new Set(strictRequests);
    expect(distinct.size).toBe(1 + 3 * PRODUCTS);
    expect(strictRequests.filter((u) => /^\/Catalog\/Product\d+\.aspx$/.test(u))).toHaveLength(PRODUCTS);
  });

  it('--no-learn-aliases fetches every spelling', async () => {
    caselessRequests.length = 0;
    const run = await inProcess(['crawl', `${base(caseless)}/`, '--data', join(dir, 'off'), '--no-learn-aliases', ...flags]);
    expect(run.code).toBe(0);
    expect(caselessRequests).toHaveLength(1 + 3 * PRODUCTS);
  });
});

// A static docs site whose menus link each section as /sec/N/index.html and whose pages link
// it as /sec/N/ (breadcrumbs, "next"): every page was fetched twice (62 fetches for 31 pages).
// `PathCase` with `fold: 'index'` learns that the server answers both the same.
const SECTIONS = 30;
function docs(requests: string[], indexServed: boolean): Server {
  return createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/robots.txt') return void res.writeHead(404).end();
    requests.push(path);
    const m = /^\/(?:sec\/(\d+)\/)?(index\.html)?$/.exec(path);
    const n = m === null ? -1 : Number(m[1] ?? 0);
    if (n < 0 || n > SECTIONS || (m![2] !== undefined && !indexServed)) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    const menu = Array.from({ length: SECTIONS }, (_, i) => `<a href="/sec/${i + 1}/index.html">Section ${i + 1}</a>`).join(' ');
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<html><body><nav><a href="/">Home</a> ${menu}</nav><h1>Section ${n}</h1><p>${`Section ${n} in detail. `.repeat(15)}</p>${n > 0 ? `<a href="/sec/${n}/">permalink</a> <a href="../${(n % SECTIONS) + 1}/">next</a>` : '<a href="/sec/1/">start</a>'}</body></html>`);
  });
}

describe('meguri crawl: a server that serves a directory and its index file the same', () => {
  const requests: string[] = [];
  const strictRequests: string[] = [];
  let site: Server;
  let strict: Server;
  let dir = '';
  const base = (s: Server): string => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  const flags = ['--agent', AGENT, '--allow-private', '--min-delay', '5ms', '--start-delay', '5ms', '--interval', '1h'];
  const page = (u: string): string => u.replace(/index\.html$/, '');

  beforeAll(async () => {
    site = docs(requests, true);
    strict = docs(strictRequests, false);
    await Promise.all([site, strict].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
    dir = mkdtempSync(join(tmpdir(), 'meguri-index-'));
  });
  afterAll(async () => {
    await Promise.all([site, strict].map((s) => new Promise((r) => s.close(r))));
    rmSync(dir, { recursive: true, force: true });
  });

  it('fetches each section once (and the two spellings that taught it), across a resume; stats shows the lesson', async () => {
    const data = join(dir, 'docs');
    expect((await inProcess(['crawl', `${base(site)}/`, '--data', data, '--max-pages', '6', ...flags])).code).toBe(0);
    const second = await inProcess(['crawl', '--data', data, '--max-pages', '1000', ...flags]);
    expect(second.code).toBe(0);
    expect(new Set(requests.map(page)).size).toBe(SECTIONS + 1);
    // Before: 62 (every section under both spellings).
    // It failed once in CI with 34 (not reproduced: every stop from 1 to 10 pages gives 33, and 10
    // runs under load passed): the message lists the requests in order for the next time.
    expect(requests.length, requests.join(' ')).toBeLessThanOrEqual(SECTIONS + 1 + 2);
    expect(second.out).toMatch(/ {2}index {5}http:\/\/127\.0\.0\.1:\d+ serves a directory's index file as the directory \(\/a\/index\.html = \/a\/\) — \d+ links? taken to the spelling met first/);
    const stats = await inProcess(['stats', data]);
    expect(stats.out).toMatch(/ {2}learned {5}http:\/\/127\.0\.0\.1:\d+\/…\/ and …\/index\.html → the spelling met first/);
  });

  it('learns nothing where index.html is missing: both spellings are asked, as before', async () => {
    const run = await inProcess(['crawl', `${base(strict)}/`, '--data', join(dir, 'strict'), ...flags]);
    expect(run.code).toBe(0);
    expect(run.out).not.toContain('  index ');
    expect(new Set(strictRequests).size).toBe(2 * SECTIONS + 1);
  });

  it('--no-learn-aliases fetches both spellings', async () => {
    requests.length = 0;
    const run = await inProcess(['crawl', `${base(site)}/`, '--data', join(dir, 'off'), '--no-learn-aliases', ...flags]);
    expect(run.code).toBe(0);
    expect(requests).toHaveLength(2 * SECTIONS + 1);
  });
});
