// A server that ignores the letter case of paths (IIS, ASP.NET) and templates that spell links
// three ways: a 20-product loopback shop cost 61 fetches, each page fetched under every spelling.
// `PathCase` (src/dedup/pathcase.ts) learns the origin from two pages served the same under two
// spellings; links then go to the spelling met first and queued spellings of served pages are
// not fetched — but for the few let through as checks — also after a resume. The same shop on a
// case-sensitive server (other spellings 404) teaches nothing: every spelling is asked, as
// before. A MediaWiki-like site, whose titles differ in case and whose redirects serve their
// target's text, is never learned; one whose redirects serve their target byte for byte is
// learned and unlearned by its first check.
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT, inProcess } from './helpers.js';

const flags = ['--agent', AGENT, '--allow-private', '--min-delay', '5ms', '--start-delay', '5ms', '--interval', '1h'];
const base = (s: Server): string => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

/**
 * Two loopback sites and a temporary directory for a describe block: `make` builds the servers,
 * listened to before its tests and closed after them with the directory.
 */
function twoSites(make: () => [Server, Server], prefix: string): [first: () => Server, second: () => Server, dir: () => string] {
  let sites: [Server, Server] | undefined;
  let dir = '';
  beforeAll(async () => {
    sites = make();
    await Promise.all(sites.map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    await Promise.all((sites ?? []).map((s) => new Promise((r) => s.close(r))));
    rmSync(dir, { recursive: true, force: true });
  });
  return [() => sites![0], () => sites![1], () => dir];
}

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
  const [caseless, strict, dir] = twoSites(() => [shop(true, caselessRequests), shop(false, strictRequests)], 'meguri-case-');

  it('fetches each page once (and two spellings of two pages, the evidence), across a resume', async () => {
    const data = join(dir(), 'caseless');
    // Stopped after 8 pages, then resumed to the end.
    const first = await inProcess(['crawl', `${base(caseless())}/`, '--data', data, '--max-pages', '8', ...flags]);
    expect(first.code).toBe(0);
    const second = await inProcess(['crawl', '--data', data, '--max-pages', '1000', ...flags]);
    expect(second.code).toBe(0);
    const pages = new Set(caselessRequests.map((u) => u.toLowerCase()));
    expect(pages.size).toBe(PRODUCTS + 1);
    // Before: 61 requests (every product under three spellings). Now each once, plus the two
    // second spellings that taught the lesson and the checks: of the 40 other spellings, the 1st,
    // 2nd, 4th, 8th, 16th and 32nd refused — the first five again after the resume reads the
    // lesson back (28 in one run, 23 before the checks).
    expect(caselessRequests.length, caselessRequests.join(' ')).toBeLessThanOrEqual(PRODUCTS + 1 + 2 + 11);
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
    const data = join(dir(), 'strict');
    const run = await inProcess(['crawl', `${base(strict())}/`, '--data', data, ...flags]);
    expect(run.code).toBe(0);
    expect(run.out).not.toContain('  case ');
    // Every spelling the pages use: Title case (served), lower and upper case (404) of each product.
    const distinct = new Set(strictRequests);
    expect(distinct.size).toBe(1 + 3 * PRODUCTS);
    expect(strictRequests.filter((u) => /^\/Catalog\/Product\d+\.aspx$/.test(u))).toHaveLength(PRODUCTS);
  });

  it('--no-learn-aliases fetches every spelling', async () => {
    caselessRequests.length = 0;
    const run = await inProcess(['crawl', `${base(caseless())}/`, '--data', join(dir(), 'off'), '--no-learn-aliases', ...flags]);
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
  const [site, strict, dir] = twoSites(() => [docs(requests, true), docs(strictRequests, false)], 'meguri-index-');
  const page = (u: string): string => u.replace(/index\.html$/, '');

  it('fetches each section once (and the two spellings that taught it), across a resume; stats shows the lesson', async () => {
    const data = join(dir(), 'docs');
    expect((await inProcess(['crawl', `${base(site())}/`, '--data', data, '--max-pages', '6', ...flags])).code).toBe(0);
    const second = await inProcess(['crawl', '--data', data, '--max-pages', '1000', ...flags]);
    expect(second.code).toBe(0);
    expect(new Set(requests.map(page)).size).toBe(SECTIONS + 1);
    // Before: 62 (every section under both spellings). Now each once, the two spellings that
    // taught it, and the checks (the 1st, 2nd, 4th, 8th, 16th refusals, again after the resume
    // reads the lesson back: 37 in one run).
    expect(requests.length, requests.join(' ')).toBeLessThanOrEqual(SECTIONS + 1 + 2 + 10);
    expect(second.out).toMatch(/ {2}index {5}http:\/\/127\.0\.0\.1:\d+ serves a directory's index file as the directory \(\/a\/index\.html = \/a\/\) — \d+ links? taken to the spelling met first/);
    const stats = await inProcess(['stats', data]);
    expect(stats.out).toMatch(/ {2}learned {5}http:\/\/127\.0\.0\.1:\d+\/…\/ and …\/index\.html → the spelling met first/);
  });

  it('learns nothing where index.html is missing: both spellings are asked, as before', async () => {
    const run = await inProcess(['crawl', `${base(strict())}/`, '--data', join(dir(), 'strict'), ...flags]);
    expect(run.code).toBe(0);
    expect(run.out).not.toContain('  index ');
    expect(new Set(strictRequests).size).toBe(2 * SECTIONS + 1);
  });

  it('--no-learn-aliases fetches both spellings', async () => {
    requests.length = 0;
    const run = await inProcess(['crawl', `${base(site())}/`, '--data', join(dir(), 'off'), '--no-learn-aliases', ...flags]);
    expect(run.code).toBe(0);
    expect(requests).toHaveLength(2 * SECTIONS + 1);
  });
});

// A MediaWiki-like site: titles are case-sensitive, some differ only in case (/wiki/Pi the
// constant, /wiki/PI a disambiguation page), and a redirect (/wiki/Nasa) is served as its
// target's text plus "(Redirected from Nasa)", naming the target canonical. Before, two such
// redirects taught `PathCase` the origin ignores case, and the articles whose titles differ only
// in case were taken for one another: 9 of 14 fetched. `faithful: false` serves a redirect as its
// target byte for byte, with no canonical (the lesson is learned): each article links its
// case-twin, and the first one let through as a check is another article, which unlearns it.
const TITLES = ['Main_Page', 'NASA', 'Barack_Obama', 'United_Nations', 'Pi', 'PI', 'Cat', 'CAT', 'Bird', 'BIRD', 'Ram', 'RAM', 'Sun', 'SUN'];
const REDIRECTS: Record<string, string> = { Nasa: 'NASA', Barack_obama: 'Barack_Obama', United_nations: 'United_Nations' };
const TWINS = [['Pi', 'PI'], ['Cat', 'CAT'], ['Bird', 'BIRD'], ['Ram', 'RAM'], ['Sun', 'SUN']];
const WORDS = 'amber birch cedar dune ember fjord grove heron iris juniper kestrel lagoon meadow nettle orchid prairie quartz raven sorrel thistle umber violet willow yarrow zephyr alder basalt coral delta egret fern garnet'.split(' ');

function wiki(faithful: boolean, requests: string[]): Server {
  return createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/robots.txt') return void res.writeHead(404).end();
    requests.push(url);
    const origin = `http://${req.headers.host}`;
    const m = /^\/wiki\/(.+)$/.exec(url);
    const asked = m === null ? '' : decodeURIComponent(m[1]!);
    const title = REDIRECTS[asked] ?? asked;
    if (!TITLES.includes(title)) return void res.writeHead(url === '/' ? 301 : 404, url === '/' ? { location: '/wiki/Main_Page' } : { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    const n = TITLES.indexOf(title);
    // Main_Page links every title's first spelling and the redirects (and, faithful, every title);
    // an article its twin and the redirects.
    const twin = TWINS.find((p) => p.includes(title))?.find((t) => t !== title);
    const links =
      title === 'Main_Page'
        ? [...TITLES.filter((t) => faithful || !TWINS.some((p) => p[1] === t)), ...Object.keys(REDIRECTS)]
        : [...(twin === undefined ? [] : [twin]), ...Object.keys(REDIRECTS), ...Object.values(REDIRECTS)];
    // Long enough that a redirect's "(Redirected from …)" moves its simhash by 3 bits at most.
    const text = Array.from({ length: 400 }, (_, i) => WORDS[(n * 11 + i * (n + 3) + ((i * i) % 7)) % WORDS.length]).join(' ');
    const from = faithful && asked !== title ? `<p>(Redirected from ${asked})</p>` : '';
    const canonical = faithful ? `<link rel="canonical" href="${origin}/wiki/${title}">` : '';
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<html><head><title>${title}</title>${canonical}</head><body><h1>${title}</h1>${from}<p>${text}</p>${links.map((l) => `<a href="/wiki/${l}">${l}</a>`).join(' ')}</body></html>`);
  });
}

describe('meguri crawl: a MediaWiki-like site whose titles differ only in letter case', () => {
  const faithfulRequests: string[] = [];
  const copyingRequests: string[] = [];
  const [faithful, copying, dir] = twoSites(() => [wiki(true, faithfulRequests), wiki(false, copyingRequests)], 'meguri-wiki-');
  const articles = (requests: readonly string[]): number => new Set(requests.map((u) => u.slice('/wiki/'.length)).filter((t) => TITLES.includes(t))).size;

  it('learns nothing from redirects that name their target canonical: every article is fetched', async () => {
    const run = await inProcess(['crawl', `${base(faithful())}/`, '--data', join(dir(), 'faithful'), ...flags]);
    expect(run.code).toBe(0);
    // Before: 9 of the 14 articles (/wiki/PI, /wiki/CAT, /wiki/Bird, /wiki/RAM, /wiki/SUN were
    // taken for their twins' spellings and never fetched).
    expect(articles(faithfulRequests), faithfulRequests.join(' ')).toBe(TITLES.length);
    expect(run.out).not.toContain('  case ');
  });

  it('unlearns a lesson its first check contradicts and fetches the articles it had taken away', async () => {
    const run = await inProcess(['crawl', `${base(copying())}/`, '--data', join(dir(), 'copying'), ...flags]);
    expect(run.code).toBe(0);
    // Learned from two redirects served byte for byte like their targets …
    expect(copyingRequests.filter((u) => u === '/wiki/Nasa' || u === '/wiki/United_nations' || u === '/wiki/Barack_obama').length).toBeGreaterThanOrEqual(2);
    // … then every article is fetched all the same: the first twin let through as a check is
    // another article; the lesson is unlearned and the twins it had taken away are given back.
    expect(articles(copyingRequests), copyingRequests.join(' ')).toBe(TITLES.length);
    expect(new Set(copyingRequests).size).toBe(copyingRequests.length);
  });
});
