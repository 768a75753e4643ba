/**
 * Sub-sections that reuse their parent's child names are crawled whole, through the real
 * HttpFetcher on loopback: versioned docs (`/docs/` and `/docs/v1/`, `/docs/v2/` all linking
 * `intro install config api faq changelog`, the older versions linked from a versions page, v1's
 * sidebar relative, v2's absolute) and a shop whose sale repeats its categories
 * (`/shop/{men,women,kids}/`, `/shop/sale/{men,women,kids}/`). The navigation echo read each as
 * a repeat of its parent's menu: 11 of the docs' 23 pages fetched, 15 of the shop's 27.
 */
import { describe, expect, it } from 'vitest';
import { crawl } from '../../src/index.js';
import { AGENT, loopbackSite } from './helpers.js';

const DOCS = ['intro', 'install', 'config', 'api', 'faq', 'changelog'];
const VERSIONS = ['', 'v1/', 'v2/'];
const CATEGORIES = ['men', 'women', 'kids'];
type Handler = Parameters<typeof loopbackSite>[0];

/** A loopback site answering `page(path)` (undefined: 404), and the paths it was asked (robots.txt aside). */
function site(page: (path: string) => string | undefined): { readonly port: () => number; readonly asked: string[] } {
  const asked: string[] = [];
  const handler: Handler = (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/robots.txt') return void res.writeHead(404).end();
    asked.push(path);
    const body = page(path);
    if (body === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${body}</body></html>`);
  };
  return { ...loopbackSite(handler), asked };
}

const docs = site((path) => {
  if (path === '/') return '<a href="/docs/">Documentation</a>';
  if (path === '/versions') return '<a href="/docs/v1/">v1</a> <a href="/docs/v2/">v2</a>';
  for (const v of VERSIONS) {
    const rest = path.startsWith(`/docs/${v}`) ? path.slice(`/docs/${v}`.length) : '/';
    if (rest.includes('/')) continue;
    const name = rest === '' ? 'intro' : rest;
    if (!DOCS.includes(name)) return undefined;
    const sidebar = DOCS.map((n) => `<a href="${v === 'v2/' ? `/docs/v2/${n}` : n}">${n}</a>`).join(' ');
    return `<h1>${name} (${v || 'latest'})</h1>${sidebar}<p>${`${name} ${v} `.repeat(30)}</p><a href="${v === '' ? '/versions' : '/docs/'}">versions</a>`;
  }
  return undefined;
});

const shop = site((path) => {
  if (path === '/') return '<a href="/shop/">Shop</a> <a href="/shop/sale/">Sale</a>';
  if (path === '/shop/' || path === '/shop/sale/') return `<h1>${path}</h1>${CATEGORIES.map((c) => `<a href="${c}/">${c}</a>`).join(' ')}`;
  const m = /^\/shop\/(sale\/)?(men|women|kids)\/$/.exec(path);
  if (m !== null) return `<h1>${path}</h1>${[1, 2, 3].map((i) => `<a href="/item/${m[1] === undefined ? '' : 's'}${m[2]}-${i}">item ${i}</a>`).join(' ')}`;
  const item = /^\/item\/(s?)(men|women|kids)-([123])$/.exec(path);
  return item === null ? undefined : `<h1>${path}</h1><p>${`${path} `.repeat(20)}</p>`;
});

async function crawled(port: number): Promise<Awaited<ReturnType<typeof crawl>>> {
  return crawl({ seeds: [`http://s.test:${port}/`], agent: AGENT, allowPrivate: true, resolve: async () => ['127.0.0.1'], politeness: { minDelayMs: 2, startDelayMs: 2 }, maxRequests: 500 }, () => undefined);
}

describe('sub-sections reusing their parent\'s child names', () => {
  it('versioned docs: every version\'s pages are fetched, none read as an echo', async () => {
    const summary = await crawled(docs.port());
    expect(summary.reason).toBe('drained');
    const pages = ['/', '/versions', ...VERSIONS.flatMap((v) => [`/docs/${v}`, ...DOCS.map((n) => `/docs/${v}${n}`)])];
    expect(pages).toHaveLength(23);
    expect([...new Set(docs.asked)].sort()).toEqual(pages.sort());
    expect(docs.asked).toHaveLength(23);
    expect(summary.counts.echoLinks).toBe(0);
  });

  it('a shop whose sale repeats its categories: the sale\'s categories and items are fetched', async () => {
    const summary = await crawled(shop.port());
    expect(summary.reason).toBe('drained');
    const cats = ['', 'sale/'].flatMap((s) => CATEGORIES.map((c) => `/shop/${s}${c}/`));
    const items = ['', 's'].flatMap((s) => CATEGORIES.flatMap((c) => [1, 2, 3].map((i) => `/item/${s}${c}-${i}`)));
    const pages = ['/', '/shop/', '/shop/sale/', ...cats, ...items];
    expect(pages).toHaveLength(27);
    expect([...new Set(shop.asked)].sort()).toEqual(pages.sort());
    expect(shop.asked).toHaveLength(27);
    expect(summary.counts.echoLinks).toBe(0);
  });
});
