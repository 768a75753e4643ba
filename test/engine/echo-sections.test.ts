/**
 * Sub-sections that reuse their parent's child names are crawled whole, through the real
 * HttpFetcher on loopback: versioned docs (`/docs/` and `/docs/v1/`, `/docs/v2/` all linking
 * `intro install config api faq changelog`, the older versions linked from a versions page, v1's
 * sidebar relative, v2's absolute) and a shop whose sale repeats its categories
 * (`/shop/{men,women,kids}/`, `/shop/sale/{men,women,kids}/`). The navigation echo read each as
 * a repeat of its parent's menu: 11 of the docs' 23 pages fetched, 15 of the shop's 27. And the
 * same shop whose menu links `sale/` too: the sale reuses most of `/shop/`'s names, and is still
 * no echo (it does not link `sale/` again).
 */
import { describe, expect, it } from 'vitest';
import { crawlLoopback, htmlSite } from './helpers.js';

const DOCS = ['intro', 'install', 'config', 'api', 'faq', 'changelog'];
const VERSIONS = ['', 'v1/', 'v2/'];
const CATEGORIES = ['men', 'women', 'kids'];

const docs = htmlSite((path) => {
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

/** The shop; with `saleInMenu`, `/shop/` links `sale/` beside its categories (most of its names reused by the sale). */
const shopSite = (saleInMenu: boolean): ReturnType<typeof htmlSite> => htmlSite((path) => {
  if (path === '/') return '<a href="/shop/">Shop</a> <a href="/shop/sale/">Sale</a>';
  const menu = CATEGORIES.map((c) => `<a href="${c}/">${c}</a>`).join(' ');
  if (path === '/shop/') return `<h1>${path}</h1>${menu}${saleInMenu ? ' <a href="sale/">sale</a>' : ''}`;
  if (path === '/shop/sale/') return `<h1>${path}</h1>${menu}`;
  const m = /^\/shop\/(sale\/)?(men|women|kids)\/$/.exec(path);
  if (m !== null) return `<h1>${path}</h1>${[1, 2, 3].map((i) => `<a href="/item/${m[1] === undefined ? '' : 's'}${m[2]}-${i}">item ${i}</a>`).join(' ')}`;
  const item = /^\/item\/(s?)(men|women|kids)-([123])$/.exec(path);
  return item === null ? undefined : `<h1>${path}</h1><p>${`${path} `.repeat(20)}</p>`;
});
const shop = shopSite(false);
const saleShop = shopSite(true);

describe('sub-sections reusing their parent\'s child names', () => {
  it('versioned docs: every version\'s pages are fetched, none read as an echo', async () => {
    const summary = await crawlLoopback(docs.port(), 500);
    expect(summary.reason).toBe('drained');
    const pages = ['/', '/versions', ...VERSIONS.flatMap((v) => [`/docs/${v}`, ...DOCS.map((n) => `/docs/${v}${n}`)])];
    expect(pages).toHaveLength(23);
    expect([...new Set(docs.asked)].sort()).toEqual(pages.sort());
    expect(docs.asked).toHaveLength(23);
    expect(summary.counts.echoLinks).toBe(0);
  });

  it.each([
    ['', shop],
    [', the shop\'s menu linking the sale too', saleShop],
  ])('a shop whose sale repeats its categories%s: the sale\'s categories and items are fetched', async (_, site) => {
    const summary = await crawlLoopback(site.port(), 500);
    expect(summary.reason).toBe('drained');
    const cats = ['', 'sale/'].flatMap((s) => CATEGORIES.map((c) => `/shop/${s}${c}/`));
    const items = ['', 's'].flatMap((s) => CATEGORIES.flatMap((c) => [1, 2, 3].map((i) => `/item/${s}${c}-${i}`)));
    const pages = ['/', '/shop/', '/shop/sale/', ...cats, ...items];
    expect(pages).toHaveLength(27);
    expect([...new Set(site.asked)].sort()).toEqual(pages.sort());
    expect(site.asked).toHaveLength(27);
    expect(summary.counts.echoLinks).toBe(0);
  });
});
